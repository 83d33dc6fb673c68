"""What every plan must satisfy, whatever the policy and inputs (shared by the decision tests)."""
from decision import CAUSES, OPS
from decision.model import ClusterSnapshot


def apply(snapshot: ClusterSnapshot, plan) -> dict[str, str]:
    """Carry out the plan's moves on the snapshot's placement: partition -> node."""
    where = {p.id: p.node for p in snapshot.partitions}
    for a in plan.actions:
        if a.op == "split":  # its halves stay where it is
            assert where[a.partition] == a.node
        if a.op == "move":
            assert where[a.partition] == a.source
            where[a.partition] = a.target
    return where


def check_plan(snapshot, plan):
    """What every plan must satisfy, whatever the policy and inputs."""
    ops = [a.op for a in plan.actions]
    assert ops == sorted(ops, key=OPS.index), "actions out of order"
    assert all(a.reason and a.cause in CAUSES for a in plan.actions)
    where = apply(snapshot, plan)
    # The assignment is the placement after the plan: every partition exactly once.
    placed = [p for a in plan.assignment for p in a.partitions]
    assert sorted(placed) == sorted(where) and len(set(placed)) == len(placed)
    for a in plan.assignment:
        assert all(where[p] == a.node for p in a.partitions)
    launched = [a.node for a in plan.actions if a.op == "launch"]
    assert launched == [f"new-{k + 1}" for k in range(len(launched))]
    terminated = [a.node for a in plan.actions if a.op == "terminate"]
    drained = [a.node for a in plan.actions if a.op == "drain"]
    assert drained == terminated
    states = {n.id: n.state for n in snapshot.nodes}
    for nid in terminated:
        assert states.get(nid) == "active", "only active nodes are terminated"
        if plan.policy == "met":
            assert nid not in where.values(), "terminated while it still holds partitions"
    for a in plan.actions:
        if a.op == "move":
            assert a.target in launched or states.get(a.target) == "active"
    s = plan.summary
    assert (s.moves, s.launches, s.terminations) == (ops.count("move"), len(launched),
                                                      len(terminated))
    assert s.reconfigurations == ops.count("reconfigure") and s.compactions == ops.count("compact")
    assert s.splits == ops.count("split")
    split = [a.partition for a in plan.actions if a.op == "split"]
    assert not {a.partition for a in plan.actions if a.op == "move"} & set(split), \
        "a partition being split is not moved"
    assert s.max_load_ratio >= 1.0 - 1e-9
    plan.to_dict()  # JSON form builds
