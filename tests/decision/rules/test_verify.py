"""Verify after acting (decision/rules/verify.py): a scale-out that did not raise the requests
served refuses the next one while the load stays there."""
from __future__ import annotations

from dataclasses import replace

from decision import decide
from decision.model import DecisionMemory
from decision.rules.memory import PendingScaleOut, RulesMemory, memory_pairs
from decision.rules.rule import Change
from decision.rules.verify import Verify, verify_need
from tests.fixtures.rules import context, marks
from tests.fixtures.snapshots import carry_out, even_snapshot as even, later

G = marks()


def memory_of(rules: RulesMemory) -> DecisionMemory:
    return DecisionMemory(step=2, first_decision_done=True, history=memory_pairs(rules))


def test_alone_it_judges_a_scale_out_once_its_warm_up_is_over_and_refuses_the_next():
    snap = even([0.9] * 4)  # 2,400 requests/s served
    pending = RulesMemory(scale_out=PendingScaleOut(snap.taken_at.timestamp(), 2400.0, 0.5))
    too_soon = context(later(snap, G.warmup_s - 1), G, memory_of(pending), observers=(Verify(),))
    assert too_soon.memory.scale_out is not None  # not judged yet
    assert Verify().veto(too_soon, Change("add")) is None
    judged = context(later(snap, G.warmup_s), G, memory_of(pending), observers=(Verify(),))
    assert judged.memory.scale_out is None and judged.memory.no_gain_requests == 2400.0
    refused = Verify().veto(judged, Change("add"))
    assert refused is not None and refused.cause == "no_gain"
    # a predicted scale-out is not judged by it, nor is a scale-in
    assert Verify().veto(judged, Change("add", predicted=True)) is None
    assert Verify().veto(judged, Change("remove")) is None
    # it paid (requests rose by more than verify_gain): nothing refused
    paid = context(later(snap, G.warmup_s), G, memory_of(replace(
        pending, scale_out=PendingScaleOut(snap.taken_at.timestamp(), 2000.0, 0.5))),
        observers=(Verify(),))
    assert paid.memory.no_gain_requests is None and Verify().veto(paid, Change("add")) is None


def test_switched_off_it_judges_nothing_but_still_forgets_a_verdict_once_the_load_moves():
    snap = even([0.9] * 4)
    off = marks(verify_after_acting=False)
    pending = RulesMemory(scale_out=PendingScaleOut(snap.taken_at.timestamp(), 2400.0, 0.5))
    ctx = context(later(snap, 3600), off, memory_of(pending), observers=(Verify(),))
    assert ctx.memory.scale_out == pending.scale_out  # kept, unjudged
    assert not Verify().enabled(off)
    verdict = RulesMemory(no_gain_requests=1000.0)  # the load has more than doubled since
    assert context(snap, off, memory_of(verdict), observers=(Verify(),)).memory \
        .no_gain_requests is None


def test_a_scale_out_that_did_not_raise_requests_stops_further_ones():
    snap = even([0.9] * 4)
    acted = decide(snap, G, DecisionMemory(step=2, first_decision_done=True))
    assert acted.sizing.delta == 2
    # Warm-up over, requests served unchanged, still overloaded: add nothing more.
    after = carry_out(snap, acted, cpu=0.9)
    plan = decide(later(after, G.warmup_s + 1), G, acted.memory)
    assert plan.is_empty and plan.reason.startswith("hold (no_gain)")
    # Switched off, it keeps adding.
    off = marks(verify_after_acting=False)
    assert decide(later(after, G.warmup_s + 1), off, acted.memory).sizing.delta > 0


def test_a_small_step_on_a_large_cluster_is_judged_by_the_capacity_it_added():
    # +1 node on 20 adds 5 % capacity: a 3 % rise in requests served is that step paying
    # (half of it is enough), where on 4 nodes +2 (+50 %) the same 3 % is no gain.
    def verdict(cpus, step, rise):
        snap = even(cpus)
        acted = decide(snap, G, DecisionMemory(step=step, first_decision_done=True))
        after = carry_out(snap, acted, cpu=0.9)
        after = replace(after, partitions=tuple(
            replace(p, reads=p.reads * rise, writes=p.writes * rise) for p in after.partitions))
        return acted, decide(later(after, G.warmup_s + 1), G, acted.memory)
    acted, plan = verdict([0.9] * 20, 1, 1.03)
    assert acted.sizing.delta == 1
    assert not plan.reason.startswith("hold (no_gain)") and plan.sizing.delta > 0
    acted, plan = verdict([0.9] * 4, 2, 1.03)
    assert acted.sizing.delta == 2 and plan.reason.startswith("hold (no_gain)")
    # a flat cluster of twenty stays no_gain: the rule is relaxed, not gone
    acted, plan = verdict([0.9] * 20, 1, 1.0)
    assert plan.reason.startswith("hold (no_gain)")


def test_the_gain_asked_for_is_at_most_half_the_capacity_added():
    assert verify_need(G, None) == G.verify_gain
    assert verify_need(G, 0.05) == 0.025 and verify_need(G, 1.0) == G.verify_gain
