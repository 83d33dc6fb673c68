"""Scale out (decision/rules/scale_out.py): nodes short of capacity get the nodes the demand
asks for (proportional_sizing) or MET's step, the new nodes taking the busiest partitions."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from decision import decide
from decision.model import DecisionMemory, Plan
from decision.rules.bounds import Bounds
from decision.rules.hold import Settle
from decision.rules.scale_out import ScaleOut
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import DONE, alone, decide_with, marks
from tests.fixtures.snapshots import even_snapshot as even
from tests.fixtures.snapshots import make_snapshot, partition, snapshots, with_latency

G = marks()


def test_alone_it_adds_nodes_only_for_nodes_short_of_capacity():
    plan = alone(ScaleOut(), even([0.9] * 4), G, DecisionMemory(step=8, first_decision_done=True))
    assert isinstance(plan, Plan) and plan.sizing.target == 8
    assert plan.reason.startswith("scale out: 4 node(s) overloaded (cpu, cpu, cpu)")
    assert plan.memory.step == 16  # MET's step doubles after a scale-out
    assert alone(ScaleOut(), even([0.5] * 4)) is None  # nothing short: nothing to say


def test_proportional_scale_out_is_bounded_by_mets_step():
    snap = even([0.9] * 4)  # demand 4 x 1.5 = 6 node-loads / 0.75 -> 8 nodes
    one = decide(snap, G, DONE)
    assert one.sizing.delta == 1  # step 1: MET's ceiling
    four = decide(snap, G, DecisionMemory(step=8, first_decision_done=True))
    assert four.sizing.target == 8
    check_plan(snap, four)
    # Only partitions on overloaded nodes move, onto the new nodes; nothing is reconfigured.
    assert all(a.target.startswith("new-") for a in four.actions if a.op == "move")
    assert not any(a.op in ("reconfigure", "compact", "terminate") for a in four.actions)


def test_proportional_sizing_off_adds_mets_step_whatever_the_demand():
    # Demand asks for 8 nodes; MET's step of 2 adds 2, and a step of 8 adds 8 where the demand
    # estimate (at most +step) would stop at 8 too: off, the demand is not read at all.
    off = marks(proportional_sizing=False)
    snap = even([0.9] * 4)
    two = decide(snap, off, DecisionMemory(step=2, first_decision_done=True))
    assert two.sizing.delta == 2 and "add 2 (MET's step)" in two.reason
    check_plan(snap, two)
    # A cluster barely over the mark: the demand (4 x 1.02 / 0.75 -> 6 nodes) asks for +2,
    # MET's step of 4 adds 4.
    barely = even([0.61] * 4)
    assert decide(barely, G, DecisionMemory(step=4, first_decision_done=True)).sizing.delta == 2
    assert decide(barely, off, DecisionMemory(step=4, first_decision_done=True)).sizing.delta == 4
    # and never beyond max_nodes
    capped = off.model_copy(update={"max_nodes": 5})
    assert decide(snap, capped, DecisionMemory(step=8, first_decision_done=True)).sizing.target == 5


def test_double_ceiling_meets_the_estimate_in_one_decision_at_most_doubling():
    snap = even([0.9] * 4)  # wants 8 nodes; MET's step 1 would add one
    double = marks(scale_out_ceiling="double")
    plan = decide(snap, double, DONE)
    assert plan.sizing.target == 8 and "at most +4" in plan.sizing.reason
    check_plan(snap, plan)
    # Saturated everywhere (utilisation 1/cpu_high): the estimate asks for more than twice the
    # nodes, the ceiling keeps it at the larger of +4 and doubling.
    sat = even([1.0] * 6, per_node=8)
    assert decide(sat, double, DONE).sizing.target == 12
    assert decide(sat, G, DONE).sizing.target == 7


def test_alone_with_proportional_sizing_off_it_adds_mets_step_and_reads_no_demand():
    off = G.model_copy(update={"proportional_sizing": False})
    barely = even([0.61] * 4)  # the demand asks for 6 nodes, MET's step is 4
    memory = DecisionMemory(step=4, first_decision_done=True)
    on, steps = alone(ScaleOut(), barely, G, memory), alone(ScaleOut(), barely, off, memory)
    assert isinstance(on, Plan) and on.sizing.delta == 2 and "demand 4.07 node-loads" in on.reason
    assert isinstance(steps, Plan) and steps.sizing.delta == 4
    assert steps.reason == "scale out: 4 node(s) overloaded: add 4 (MET's step)"
    assert alone(ScaleOut(), even([0.5] * 4), off, memory) is None  # nothing short, on or off


def test_a_single_overloaded_node_is_rebalanced_without_new_nodes():
    ids = ["rs1", "rs2", "rs3", "rs4"]
    parts = [partition(f"h{k}", "rs1", reads=100) for k in range(8)] + \
        [partition(f"c{k}", ids[1 + k % 3], reads=20) for k in range(6)]
    snap = make_snapshot([0.9, 0.2, 0.2, 0.2], parts)
    plan = decide(snap, G, DONE)
    check_plan(snap, plan)
    assert plan.sizing.delta == 0 and plan.summary.launches == 0
    assert plan.summary.moves and all(a.source == "rs1" for a in plan.actions if a.op == "move")


def test_a_scale_out_no_move_of_which_pays_launches_nothing():
    # Four saturated nodes, each one partition of 200 GiB: no move pays for its warm-up, so a
    # new node would serve nothing.
    parts = [partition(f"big{k}", f"rs{k + 1}", reads=100, size_mb=200 * 1024.0)
             for k in range(4)] + [partition(f"s{k}", f"rs{k + 1}", reads=100, size_mb=200 * 1024.0)
                                   for k in range(4)]
    snap = make_snapshot([0.9] * 4, parts)
    before = DecisionMemory(step=4, first_decision_done=True)
    plan = decide(snap, G, before)
    assert plan.is_empty and plan.reason.startswith("hold (nothing_moves)")
    # nothing happened, so nothing is remembered as done: no warm-up, no scale-out to verify
    again = decide(snap, G, plan.memory)
    assert again.reason.startswith("hold (nothing_moves)") and plan.memory.step == 4


def test_refused_by_an_earlier_rule_it_rebalances_or_holds_with_that_rules_cause():
    snap = even([0.9] * 6)
    capped = marks(max_nodes=6)
    held = decide_with((Bounds(), ScaleOut(), Settle()), snap, capped)
    assert held.is_empty and held.reason == (
        "hold (bounds): 6 node(s) overloaded but 6 active nodes >= max_nodes 6")
    # without the bound before it, the rule alone would add the one node it falls back to
    assert decide_with((ScaleOut(), Settle()), snap, capped).sizing.target == 7
    ids = ["rs1", "rs2", "rs3", "rs4"]
    parts = [partition(f"h{k}", "rs1", reads=100) for k in range(8)] + \
        [partition(f"c{k}", ids[1 + k % 3], reads=20) for k in range(6)]
    one_hot = make_snapshot([0.9, 0.2, 0.2, 0.2], parts)
    moved = decide_with((Bounds(), ScaleOut(), Settle()), one_hot, marks(max_nodes=4))
    assert moved.reason.startswith("rebalance: no node may be added (bounds: 4 active nodes")


@settings(max_examples=80, deadline=None)
@given(snapshots(max_nodes=8, max_partitions=40), st.integers(1, 16), st.integers(1, 12),
       st.booleans(), st.sampled_from(["met_step", "double"]))
def test_a_scale_out_never_goes_beyond_max_nodes_nor_beyond_its_ceiling(snap, step, max_nodes,
                                                                         proportional, ceiling):
    policy = marks(max_nodes=max_nodes, proportional_sizing=proportional,
                          scale_out_ceiling=ceiling)
    plan = decide(snap, policy, DecisionMemory(step=step, first_decision_done=True))
    check_plan(snap, plan)
    if plan.sizing.delta > 0:
        current = plan.sizing.current
        assert plan.sizing.target <= max_nodes
        assert plan.sizing.delta <= (max(step, 1) if ceiling == "met_step" or not proportional
                                     else max(4, current, 1))
        assert not any(a.op == "terminate" for a in plan.actions)


def test_the_reason_counts_the_overloaded_nodes_the_verdicts_show():
    """Issue 24, friction: `explain` said "1 node(s) overloaded (io_wait)" above a table
    showing 7 of 7 overloaded. The reason counts every overloaded node and says what the
    others are."""
    slo = marks(latency_slo_ms=50)
    snap = with_latency(even([0.9] * 7), [80.0] + [12.0] * 6)  # one slow, six in time
    plan = decide(snap, slo, DONE)
    overloaded = sum(v.verdict == "overloaded" for v in plan.health.nodes)
    assert overloaded == 7
    assert f"1 of {overloaded} overloaded node(s) short of capacity (others: within_slo 6)" \
        in plan.reason
    every = decide(with_latency(even([0.9] * 4), [80.0] * 4), slo, DONE)
    assert "4 node(s) overloaded" in every.reason
