"""The target-tracking baseline (HPA / AWS target tracking): mean CPU at a target, scale out at
once, scale in only after the stabilisation window and one node at a time."""
import math

from hypothesis import given, settings, strategies as st

from decision import DecisionMemory, PolicyConfig, decide
from decision.target_tracking import desired_nodes
from tests.decision.plan_checks import check_plan
from tests.fixtures.snapshots import later, make_snapshot, node, partition, snapshots

TT = PolicyConfig(name="target-tracking")


def test_scales_out_at_once_to_the_size_the_load_asks_for():
    # 4 nodes at 0.9 mean cpu, target 0.6: ceil(4 x 0.9 / 0.6) = 6, both added in one plan
    snap = make_snapshot([0.9, 0.9, 0.9, 0.9], [partition("p", "rs1", reads=1)])
    plan = decide(snap, TT, DecisionMemory())
    check_plan(snap, plan)
    assert [a.op for a in plan.actions] == ["launch", "launch"]
    assert plan.sizing.target == 6 and not any(a.op == "move" for a in plan.actions)


def test_booting_nodes_count_as_already_there():
    snap = make_snapshot([node("a", 0.9), node("b", 0.9), node("c", None, state="booting")])
    # ceil(2 x 0.9 / 0.6) = 3 wanted; the booting node is the third
    assert decide(snap, TT, DecisionMemory()).is_empty


def test_scales_in_only_after_the_window_and_by_one():
    busy, idle = make_snapshot([0.6] * 6), make_snapshot([0.1] * 6)
    memory = decide(busy, TT, DecisionMemory()).memory  # 6 wanted at t = 0
    removed_at = None
    for t in range(30, 900, 30):  # load fell to 0.1 at t = 30: 1 node would do
        plan = decide(later(idle, t), TT, memory)
        memory = plan.memory
        if plan.actions:
            removed_at = t
            break
    assert removed_at is not None and removed_at >= 300  # not before the 300-s window
    assert [a.op for a in plan.actions] == ["drain", "terminate"] and plan.sizing.target == 5


def test_a_busy_moment_in_the_window_holds_scale_in():
    calm, spike = make_snapshot([0.2] * 4), make_snapshot([0.6] * 4)
    memory = DecisionMemory()
    for t in range(0, 301, 30):
        memory = decide(later(calm, t), TT, memory).memory
    memory = decide(later(spike, 330), TT, memory).memory  # 4 wanted at 330 s
    for t in range(360, 630, 30):
        assert decide(later(calm, t), TT, memory).is_empty, t
        memory = decide(later(calm, t), TT, memory).memory
    assert [a.op for a in decide(later(calm, 660), TT, memory).actions] == ["drain", "terminate"]


def test_holds_on_missing_metrics_and_keeps_its_bounds():
    assert decide(make_snapshot([0.9, None]), TT, DecisionMemory()).is_empty
    capped = PolicyConfig(name="target-tracking", max_nodes=3)
    assert decide(make_snapshot([0.95, 0.95]), capped, DecisionMemory()).sizing.target == 3


@given(n=st.integers(1, 50), cpu=st.floats(0, 1), target=st.floats(0.05, 1), tol=st.floats(0, 0.5))
def test_desired_is_hpas_formula(n, cpu, target, tol):
    got = desired_nodes(n, cpu, target, tol)
    if abs(cpu / target - 1) <= tol:
        assert got == n
    else:
        assert got == max(1, math.ceil(n * cpu / target - 1e-9))
        # the wanted size carries the load at or under the target (within rounding)
        assert n * cpu / got <= target * (1 + 1e-6) or got == 1


@settings(max_examples=40, deadline=None)
@given(snapshots(states=("active", "active", "draining", "booting"), max_nodes=6, max_partitions=20))
def test_never_removes_more_than_one_node_nor_while_busy(snap):
    # the same cluster watched for longer than the window: removal becomes possible
    memory = DecisionMemory()
    active = [n for n in snap.nodes if n.state == "active"]
    for t in range(0, 391, 30):
        plan = decide(later(snap, t), TT, memory)
        check_plan(later(snap, t), plan)
        memory = plan.memory
        if plan.sizing.delta < 0:
            assert plan.sizing.delta == -1 and t >= TT.target_scale_in_window_s
            assert sum(n.metrics.cpu for n in active) / len(active) < TT.target_cpu
