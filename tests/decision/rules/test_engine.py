"""How the rules decide (decision/rules/engine.py, rule.py): observe all, then the first plan
in order wins; a rule asks the rules before it, switched on, before it acts; what a rule found
without acting reaches the rules after it."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from decision.policy import PolicyConfig
from decision.rules import DEFAULT_RULES
from decision.rules.hold import Settle
from decision.rules.rule import Carry, Change, Rule, Veto
from decision.rules.scale_in import scale_in_plan
from decision.model import Sizing
from tests.fixtures.rules import decide_with
from tests.fixtures.snapshots import even_snapshot as even

CALM = even([0.3, 0.3, 0.3, 0.3, 0.05])


class Refuse(Rule):
    """Refuses every removal, with its switch (`diagnose` stands in for any switch)."""

    name = "refuse"
    switch = "diagnose"

    def veto(self, ctx, change):
        return Veto("test", "refused by the test") if change.kind == "remove" else None


class Remove(Rule):
    """Removes one node when nobody before it refuses; says why not otherwise."""

    name = "remove"

    def propose(self, ctx):
        refused = ctx.veto(Change("remove"))
        if refused is not None:
            return Carry(note=refused.reason)
        return scale_in_plan(ctx, Sizing(ctx.current, ctx.current - 1, -1, 1, "removed"),
                             ctx.remember(ctx.memory, 1))


class Note(Rule):
    name = "note"

    def observe(self, ctx):
        return replace(ctx, memory=ctx.memory.acted(42.0))

    def propose(self, ctx):
        return Carry(note="noted")


def test_the_first_plan_wins_and_an_earlier_rule_may_refuse_a_later_rules_change():
    assert decide_with((Remove(), Settle()), CALM).reason == "removed"
    refused = decide_with((Refuse(), Remove(), Settle()), CALM)
    assert refused.is_empty and refused.reason.endswith("(refused by the test)")
    # a rule after it is not asked: only the rules before the one acting judge
    assert decide_with((Remove(), Refuse(), Settle()), CALM).reason == "removed"


def test_a_rule_switched_off_neither_proposes_nor_refuses_but_still_observes():
    off = PolicyConfig(diagnose=False)
    assert decide_with((Refuse(), Remove(), Settle()), CALM, off).reason == "removed"

    class NoteOff(Note):
        switch = "diagnose"

    plan = decide_with((NoteOff(), Settle()), CALM, off)
    assert plan.reason == "hold (nothing_pays): size unchanged and no node overloaded"
    assert ("met.last_action_at", 42.0) in plan.memory.history  # observed all the same


def test_what_a_rule_found_without_acting_reaches_the_later_rules():
    plan = decide_with((Note(), Note(), Settle()), CALM)
    assert plan.reason.endswith("no node overloaded (noted; noted)")


def test_a_list_whose_last_rule_does_not_decide_is_refused():
    with pytest.raises(ValueError, match="last rule must always decide"):
        decide_with((Note(),), CALM)


def test_the_rule_list_is_the_one_docs_policy_md_describes():
    """docs/policy.md's table of rules lists them in the order they run, with their switch."""
    text = (Path(__file__).parents[3] / "docs" / "policy.md").read_text()
    rows = re.findall(r"^\| \d+ \| `(\w+)` \| ([^|]+) \|", text, re.M)
    assert [name for name, _ in rows] == [r.name for r in DEFAULT_RULES]
    for (name, switch), rule in zip(rows, DEFAULT_RULES):
        if rule.switch is not None:
            assert f"`{rule.switch}`" in switch, (name, switch)
