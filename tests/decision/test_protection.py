"""Protected nodes and per-table rules in the decision core: a kept node is never restarted,
drained or terminated; an excluded table never moves; a fixed profile places a table."""
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from decision import DecisionMemory, PolicyConfig, decide
from decision.protection import keep_nodes
from tests.fixtures.rules import marks
from tests.fixtures.snapshots import make_snapshot, node, partition, snapshots, ycsb_mix_snapshot

DONE = DecisionMemory(first_decision_done=True)
TOUCH = ("reconfigure", "drain", "terminate")


def scale_in_snapshot():
    # four idle nodes: MET removes one; each node holds two partitions of two tables
    nodes = [node(f"rs{i}", cpu=0.02, io_wait=0.0) for i in range(1, 5)]
    parts = [partition(f"{t}{i}{k}", f"rs{i}", reads=5, writes=5, table=t)
             for i in range(1, 5) for k in range(2) for t in ("a", "b")]
    return make_snapshot(nodes, parts)


def test_a_protected_node_chosen_for_removal_is_kept_with_a_reason():
    snap = scale_in_snapshot()
    # MET's marks remove a node at once; sized from demand waits for scale_in_window_s
    plan = decide(snap, marks(), DONE)
    gone = [a.node for a in plan.actions if a.op == "terminate"]
    assert len(gone) == 1 and plan.sizing.delta == -1
    kept = keep_nodes(plan, {gone[0]: "protected by ops: disk check"})
    assert not [a for a in kept.actions if a.node == gone[0] and a.op in TOUCH]
    assert not [a for a in kept.actions if a.op == "move" and a.source == gone[0]]
    assert kept.sizing.target == kept.sizing.current and kept.sizing.delta == 0
    assert f"kept {gone[0]} (protected by ops: disk check)" in kept.reason
    assert kept.summary.terminations == 0
    assert kept.summary.moves == sum(a.op == "move" for a in kept.actions)


@given(snapshots(min_nodes=2, max_nodes=6, max_partitions=30), st.data())
def test_kept_nodes_are_never_touched(snap, data):
    plan = decide(snap, PolicyConfig(), DONE)
    ids = [n.id for n in snap.nodes]
    keep = data.draw(st.sets(st.sampled_from(ids)))
    kept = keep_nodes(plan, {n: "test" for n in keep})
    assert not [a for a in kept.actions if a.op in TOUCH and a.node in keep]
    # nothing new appears, and what is left keeps its order
    assert [a for a in plan.actions if a in kept.actions] == list(kept.actions)
    assert kept.sizing.target - plan.sizing.target == sum(
        a.op == "terminate" and a.node in keep for a in plan.actions)
    if not keep:
        assert kept == plan


def test_excluded_table_never_moves_and_its_nodes_stay():
    snap = scale_in_snapshot()
    policy = PolicyConfig(tables={"b": {"exclude": True}})
    plan = decide(snap, policy, DONE)
    assert not [a for a in plan.actions if a.op == "move" and a.partition.startswith("b")]
    # every node holds part of b: none may be drained or terminated
    assert not [a for a in plan.actions if a.op in TOUCH]
    assert "holds excluded table b" in plan.reason or not plan.actions


def test_fixed_profile_places_a_table_in_its_group():
    snap = ycsb_mix_snapshot(cpu=0.3)
    snap = replace(snap, nodes=(node("rs1", cpu=0.8),) + snap.nodes[1:])
    tables = {p.table for p in snap.partitions}
    # MET's full re-placement (the default moves only what pays and restarts nothing for balance)
    free = decide(snap, PolicyConfig(paper_faithful=True), DecisionMemory())
    # all partitions of every table forced into `read`: one group, every node a read node
    forced = decide(snap, PolicyConfig(paper_faithful=True, tables={t: {"profile": "read"} for t in tables}),
                    DecisionMemory())
    assert {g.group for g in free.groups} != {"read"}
    assert {g.group for g in forced.groups} == {"read"}
    assert {a.profile for a in forced.assignment} == {"read"}


def test_table_rule_refuses_exclude_with_a_profile():
    import pytest
    with pytest.raises(ValueError, match="contradict"):
        PolicyConfig(tables={"t": {"exclude": True, "profile": "read"}})
