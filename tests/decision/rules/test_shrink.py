"""Shrink to demand (decision/rules/shrink.py): fewer nodes once the demand now with room to
rise, its forecast and its recent peak fit them, never while a node is short or a plan runs."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decision import decide
from decision.model import Plan
from decision.rules.measure import Measure
from decision.rules.shrink import ShrinkToDemand
from tests.fixtures.rules import DONE, SIZED, context, sized, watched
from tests.fixtures.snapshots import later, queued_snapshot


def gone(plan):
    return [a.node for a in plan.actions if a.op == "terminate"]


def test_alone_it_removes_what_the_demand_leaves_idle_once_it_has_seen_it_for_a_window():
    idle = queued_snapshot([0.1] * 6)
    # the first decision has not seen the demand for scale_in_window_s: it says so
    first = sized(ShrinkToDemand(), idle)
    assert not isinstance(first, Plan) and "not seen for scale_in_window_s" in first.note
    plan = sized(ShrinkToDemand(), idle, SIZED, watched(idle, SIZED, seconds=630.0))
    assert isinstance(plan, Plan) and plan.sizing.target == 4 and len(gone(plan)) == 2
    # 0.6 node-loads, room to double within a lead time: 1.2 still fit the 4 nodes kept
    assert "fit 3 node(s)" in plan.reason
    # the removed nodes' partitions all move to the nodes kept, then they are drained
    kept = {a.node for a in plan.assignment}
    assert len(kept) == 4 and not kept & set(gone(plan))
    assert {a.target for a in plan.actions if a.op == "move"} <= kept
    assert {a.source for a in plan.actions if a.op == "move"} == set(gone(plan))


def test_no_scale_in_while_a_node_is_short():
    # five idle nodes and one whose call queue says it is asked more than it serves
    snap = queued_snapshot([0.1] * 5 + [0.9], [None] * 5 + [900.0], latency_ms=[5.0] * 5 + [1000.0])
    memory = watched(snap, SIZED, seconds=630.0)
    said = sized(ShrinkToDemand(), snap, SIZED, memory)
    assert not isinstance(said, Plan)
    assert said.note == "not scaling in: rs6 is short (requests queue, are dropped or miss the SLO)"
    # the whole policy: nothing removed; the short node's busy partitions go to the idle ones
    plan = decide(snap, SIZED, memory)
    assert not gone(plan) and plan.reason.startswith("even out: rs6")


def test_no_scale_in_while_a_plan_is_carried_out():
    idle = queued_snapshot([0.1] * 6)
    memory = watched(idle, SIZED, seconds=630.0).with_plan_in_flight(6)
    plan = decide(idle, SIZED, memory)
    assert plan.is_empty and plan.reason.startswith("hold (plan_in_flight)")


def test_a_rising_forecast_keeps_the_nodes_a_flat_one_lets_go():
    def last_plan(cpu_at):
        memory = DONE
        for i in range(21):
            # requests of 4.75 ms on an idle node, queueing as the CPU rises (M/M/1)
            at = later(queued_snapshot([cpu_at(i)] * 6, latency_ms=4.75 / (1 - cpu_at(i))), 30.0 * i)
            plan = decide(at, SIZED, memory)
            memory = plan.memory
        return plan
    flat = last_plan(lambda i: 0.15)
    rising = last_plan(lambda i: 0.05 + 0.005 * i)  # at 0.15 too, after ten minutes of rise
    assert len(gone(flat)) == 1 and flat.sizing.target == 5
    assert not gone(rising) and "forecast 1.32" in rising.reason


def test_switched_off_it_is_silent_and_the_default_does_not_scale_in_on_the_forecast():
    idle = queued_snapshot([0.1] * 6)
    off = SIZED.model_copy(update={"scale_in_on_forecast": False})
    assert sized(ShrinkToDemand(), idle, off, watched(idle, off, seconds=630.0)) is None
    plan = decide(idle, off, watched(idle, off, seconds=630.0))
    assert "node-loads" not in plan.reason  # MET's headroom rule said it, if anything


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.01, 0.6), min_size=2, max_size=8))
def test_a_scale_in_never_leaves_fewer_nodes_than_carry_the_demand(cpus):
    snap = queued_snapshot(cpus)
    memory = watched(snap, SIZED, seconds=630.0)
    plan = decide(snap, SIZED, memory)
    view = context(snap, SIZED, memory, observers=(Measure(),)).view
    assert view is not None
    if gone(plan):
        left = len(cpus) - len(gone(plan))
        room = max(view.forecast.now * view.rise, view.forecast.ahead, view.peak)
        assert left >= 1 and left * view.u_max >= room
        assert left >= len(cpus) - len(cpus) // 2  # at most half the nodes in one decision


def test_a_peak_already_seen_is_not_risen_again():
    # 20 minutes at 0.5 CPU on six nodes (3 node-loads), then 2 minutes at 0.1 (0.6): the
    # scale-in keeps room for the peak just seen, or for today's demand risen as far as it
    # may within a lead time, whichever is more; not for the peak risen again (it kept 19
    # nodes through a compressed week whose weekday peak needs 10)
    memory, plan = DONE, None
    for i in range(45):
        snap = later(queued_snapshot([0.5 if i < 40 else 0.1] * 6), 30.0 * i)
        plan = decide(snap, SIZED, memory)
        memory = plan.memory
    view = context(snap, SIZED, memory, observers=(Measure(),)).view
    found = re.search(r"the most of now ([\d.]+), forecast ([\d.]+), peak ([\d.]+)\), with room "
                      r"to rise x([\d.]+) within a lead time \(([\d.]+)\)", plan.reason)
    assert found, plan.reason
    now, ahead, peak, rise, room = map(float, found.groups())
    assert peak == pytest.approx(3.0, abs=0.01) and now == pytest.approx(0.6, abs=0.01)
    assert room == pytest.approx(max(now * rise, ahead, peak), abs=0.02)
    assert room < peak * rise
    assert view is not None and view.room(view.peak) == pytest.approx(room, abs=0.01)
