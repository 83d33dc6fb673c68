"""The last rules (decision/rules/hold.py): hold an overload nothing could help, saying why;
with nothing to do, hold (or, move_only_what_pays off, MET's full re-placement)."""
from __future__ import annotations

from decision.model import DecisionMemory, Plan
from decision.policy import PolicyConfig
from decision.rules.hold import HoldOverloaded, Settle
from decision.rules.rule import Carry
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import alone, context
from tests.fixtures.snapshots import even_snapshot as even


def test_an_overload_nothing_helped_is_held_naming_the_nodes_and_what_earlier_rules_found():
    busy = even([0.9, 0.9, 0.9, 0.9, 0.3])
    plan = alone(HoldOverloaded(), busy)
    assert isinstance(plan, Plan) and plan.is_empty
    assert plan.reason.startswith("hold (cpu): rs1: cpu overload (utilisation 1.50); rs2: ")
    assert "rs4" not in plan.reason  # three nodes at most
    said = HoldOverloaded().propose(context(busy).carrying(Carry(note="t not split again")))
    assert said.reason.endswith("; t not split again")
    assert alone(HoldOverloaded(), even([0.3, 0.3])) is None


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
