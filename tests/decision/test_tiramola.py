"""The tiramola policy: running-average CPU thresholds, one node at a time, no placement."""
from decision import DecisionMemory, PolicyConfig, decide
from tests.decision.plan_checks import check_plan
from tests.fixtures.snapshots import later, make_snapshot, node, partition

T = PolicyConfig(name="tiramola")


def test_tiramola_adds_one_default_node_and_moves_nothing():
    snap = make_snapshot([0.45, 0.2, 0.2], [partition("p", "rs1", reads=1)])
    plan = decide(snap, T, DecisionMemory())
    check_plan(snap, plan)
    assert [(a.op, a.node, a.profile) for a in plan.actions] == [("launch", "new-1", "default")]
    assert plan.memory.history == ()  # the window restarts after a change


def test_tiramola_running_average_spans_the_window():
    hot, cool = make_snapshot([0.6, 0.2]), make_snapshot([0.2, 0.2])
    memory = decide(cool, T, DecisionMemory()).memory
    # 300 s window: the earlier 0.2 still counts at +120 s -> mean 0.4, not over: no action.
    plan = decide(later(hot, 120), T, memory)
    assert plan.is_empty and len(plan.memory.history) == 4
    # At +400 s the first sample has left the window -> mean 0.6 > 0.4: add.
    plan = decide(later(hot, 400), T, plan.memory)
    assert [a.op for a in plan.actions] == ["launch"]


def test_tiramola_removes_only_when_every_node_is_cool():
    assert decide(make_snapshot([0.1, 0.2]), T, DecisionMemory()).is_empty
    plan = decide(make_snapshot([0.1, 0.05, 0.12]), T, DecisionMemory())
    assert [(a.op, a.node) for a in plan.actions] == [("drain", "rs2"), ("terminate", "rs2")]
    assert not any(a.op == "move" for a in plan.actions)


def test_tiramola_bounds_and_holds():
    assert decide(make_snapshot([0.05]), T, DecisionMemory()).is_empty  # min_nodes 1
    assert decide(make_snapshot([0.9, 0.9]), PolicyConfig(name="tiramola", max_nodes=2),
                  DecisionMemory()).is_empty
    busy = make_snapshot([node("a", 0.9), node("b", 0.9, state="booting")])
    plan = decide(busy, T, DecisionMemory())
    assert plan.is_empty and "in progress" in plan.reason
    memory = DecisionMemory(history=(("1.0|a", 0.5),))
    plan = decide(make_snapshot([0.9, None]), T, memory)
    assert plan.is_empty and plan.memory == memory

