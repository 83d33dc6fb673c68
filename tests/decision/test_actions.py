"""Plan actions: max_moves keeps the most valuable moves, compaction after moves (MET §5)."""
import pytest

from decision import DecisionMemory, PolicyConfig, decide
from tests.decision.plan_checks import apply, check_plan
from tests.fixtures.snapshots import make_snapshot, node, partition, ycsb_mix_snapshot

P = PolicyConfig(paper_faithful=True)  # MET as the paper writes it
DONE = DecisionMemory(first_decision_done=True)


@pytest.mark.parametrize("max_moves", [0, 3, 0.2])
def test_max_moves_keeps_the_most_valuable(max_moves):
    snap = ycsb_mix_snapshot(cpu=0.8)
    unlimited = decide(snap, P, DONE)
    policy = PolicyConfig(paper_faithful=True, max_moves=max_moves)
    plan = decide(snap, policy, DONE)
    check_plan(snap, plan)
    limit = policy.move_limit(len(snap.partitions))
    moves = [a for a in plan.actions if a.op == "move"]
    assert len(moves) == min(limit, unlimited.summary.moves)
    assert plan.summary.moves_dropped == unlimited.summary.moves - len(moves)
    load = {p.id: p.requests for p in snap.partitions}
    kept = {a.partition for a in moves}
    dropped = {a.partition for a in unlimited.actions if a.op == "move"} - kept
    if kept and dropped:
        assert min(load[p] for p in kept) >= max(load[p] for p in dropped)


def test_max_moves_keeps_a_node_that_still_holds_partitions():
    snap = make_snapshot([0.05, 0.05, 0.05, 0.3],
                         [partition(f"p{i}", f"rs{i % 4 + 1}", reads=1) for i in range(16)])
    plan = decide(snap, PolicyConfig(paper_faithful=True, max_moves=0), DONE)
    check_plan(snap, plan)
    assert plan.summary.terminations == 0 and plan.summary.moves == 0


def test_compaction_after_moves_on_low_locality_nodes():
    snap = make_snapshot([0.9, 0.9], [partition(f"p{i}", f"rs{i % 2 + 1}", reads=1 + i,
                                                locality=0.5 if i == 0 else 1.0)
                                      for i in range(10)])
    plan = decide(snap, P, DONE)
    compacted = {(a.node, a.partition) for a in plan.actions if a.op == "compact"}
    where = apply(snap, plan)
    moved = {a.partition for a in plan.actions if a.op == "move"}
    for nid, pid in compacted:
        assert where[pid] == nid and (pid in moved or pid == "p0")


def test_write_nodes_tolerate_lower_locality():
    # All writes: a node at 0.8 locality is fine for write (0.70) but not for others (0.90).
    parts = [partition(f"w{i}", "rs1", writes=10, locality=0.8) for i in range(4)]
    snap = make_snapshot([node("rs1", 0.05, profile="write"), node("rs2", 0.3, profile="write")],
                         parts)
    plan = decide(snap, P, DONE)
    assert plan.summary.moves == 0 and plan.summary.reconfigurations == 0
    assert not any(a.op == "compact" for a in plan.actions)
    strict = decide(snap, PolicyConfig(paper_faithful=True, compact_locality_write=0.9), DONE)
    assert any(a.op == "compact" for a in strict.actions)
