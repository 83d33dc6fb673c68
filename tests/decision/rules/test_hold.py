"""The last rules (decision/rules/hold.py): hold an overload nothing could help, saying why;
with nothing to do, hold (or, move_only_what_pays off, MET's full re-placement)."""
from __future__ import annotations

from decision.model import DecisionMemory, Plan
from decision.policy import PolicyConfig
from decision.rules.hold import HoldOverloaded, Settle
from decision.rules.rule import Carry
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import alone, context, queues_grew, sized
from tests.fixtures.snapshots import even_snapshot as even
from tests.fixtures.snapshots import queued_snapshot


def test_an_overload_nothing_helped_is_held_naming_the_nodes_and_what_earlier_rules_found():
    busy = even([0.9, 0.9, 0.9, 0.9, 0.3])
    plan = alone(HoldOverloaded(), busy)
    assert isinstance(plan, Plan) and plan.is_empty
    assert plan.reason.startswith("hold (cpu): rs1: cpu overload (utilisation 1.50); rs2: ")
    assert "rs4" not in plan.reason  # three nodes at most
    said = HoldOverloaded().propose(context(busy).carrying(Carry(note="t not split again")))
    assert said.reason.endswith("; t not split again")
    assert alone(HoldOverloaded(), even([0.3, 0.3])) is None


def test_sized_from_demand_nodes_over_the_marks_but_within_their_capacity_hold_within_slo():
    # 80 % and 70 % CPU are over MET's cpu_high (0.6) but under the 90 % a node may run at
    # within the SLO: nothing to buy, and the hold says so with each node's share and the demand
    busy = queued_snapshot([0.8, 0.7, 0.2], latency_ms=[None, None, None])
    plan = sized(HoldOverloaded(), busy)
    assert isinstance(plan, Plan) and plan.is_empty
    assert plan.reason.startswith("hold (within_slo): no node over its capacity at the SLO (rs1: "
                                  "cpu overload (utilisation 1.33), 89% of its capacity at the SLO; "
                                  "rs2: "), plan.reason
    assert "demand 1.70 node-loads" in plan.reason
    # a node past its capacity (its call queue grew: asked more than it serves) is held by its
    # bottleneck, as under MET's marks
    hot = queued_snapshot([1.0, 0.7, 0.2], [900.0, None, None], latency_ms=[None, None, None])
    held = sized(HoldOverloaded(), hot, memory=queues_grew(hot))
    assert held.reason.startswith("hold (cpu): rs1: cpu overload"), held.reason


def test_nothing_to_do_holds_and_resets_mets_step_or_re_places_when_off():
    calm = even([0.3, 0.3])
    memory = DecisionMemory(step=4, first_decision_done=True)
    held = alone(Settle(), calm, memory=memory)
    assert held.is_empty and held.reason == (
        "hold (nothing_pays): size unchanged and no node overloaded")
    assert held.memory.step == 1 and held.sizing.step == 1
    said = Settle().propose(context(calm, memory=memory).carrying(Carry(note="no scale-in")))
    assert said.reason.endswith("no node overloaded (no scale-in)")
    off = PolicyConfig(move_only_what_pays=False)
    replaced = alone(Settle(), calm, off, memory)
    check_plan(calm, replaced)
    assert replaced.reason == "no node overloaded: rebalance only" and replaced.memory.step == 1
    assert {a.op for a in replaced.actions} <= {"reconfigure", "move", "compact"}
