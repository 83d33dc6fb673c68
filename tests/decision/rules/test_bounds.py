"""Bounds (decision/rules/bounds.py): the safety rules every later rule is held to."""
from __future__ import annotations

from decision import decide
from decision.rules.bounds import Bounds
from decision.model import Sizing
from decision.rules.hold import HoldOverloaded, Settle
from decision.rules.rule import Change, Rule
from decision.rules.scale_in import scale_in_plan
from tests.fixtures.rules import DONE, context, decide_with, marks
from tests.fixtures.snapshots import even_snapshot as even


def test_it_refuses_growth_at_max_nodes_and_removal_while_overloaded_or_by_more_than_one():
    calm, busy = even([0.3] * 4), even([0.9, 0.3, 0.3, 0.3])
    at_max = marks(max_nodes=4)
    assert Bounds().veto(context(calm, at_max), Change("add")).cause == "bounds"
    assert Bounds().veto(context(calm, marks(max_nodes=5)), Change("add")) is None
    assert Bounds().veto(context(busy), Change("remove")).cause == "bounds"
    assert Bounds().veto(context(calm), Change("remove")) is None
    assert Bounds().veto(context(calm), Change("remove", nodes=2)).cause == "bounds"
    assert Bounds().propose(context(busy)) is None  # it only refuses


class _Shrink(Rule):
    """A careless rule that removes a node whatever the load (as a new rule might), asking the
    rules before it first."""

    name = "shrink"

    def propose(self, ctx):
        if ctx.veto(Change("remove")) is not None:
            return None
        sizing = Sizing(ctx.current, ctx.current - 1, -1, 1, "shrink")
        return scale_in_plan(ctx, sizing, ctx.remember(ctx.memory, 1))


def test_a_later_rule_that_asks_is_kept_from_shrinking_an_overloaded_cluster():
    busy = even([0.9, 0.3, 0.3, 0.3])
    assert decide_with((_Shrink(), HoldOverloaded(), Settle()), busy).summary.terminations == 1
    held = decide_with((Bounds(), _Shrink(), HoldOverloaded(), Settle()), busy)
    assert held.summary.terminations == 0 and held.reason.startswith("hold (cpu)")


def test_above_max_nodes_an_overloaded_cluster_holds_with_cause_bounds():
    snap = even([0.9] * 6)
    plan = decide(snap, marks(max_nodes=3), DONE)
    assert plan.is_empty and plan.reason.startswith("hold (bounds)")
    paper = decide(snap, marks(max_nodes=3, paper_faithful=True), DONE)
    assert paper.sizing.target == 6 and paper.summary.terminations == 0
