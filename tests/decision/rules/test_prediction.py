"""Predictive scale-out (decision/rules/prediction.py, cycle.py; policy.predict_cycle_s,
opt-in): the last cycle's short slots ahead scale the cluster out before the load comes, and
hold off a scale-in; nothing else predicts."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from decision import decide
from decision.model import DecisionMemory
from decision.policy import PolicyConfig
from decision.rules.cycle import predicted_need, record_need
from decision.rules.memory import RulesMemory, memory_pairs
from decision.rules.cycle import Prediction, slot_of
from decision.rules.prediction import PredictedScaleOut
from decision.rules.rule import Carry, Change
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import SIZED, alone, context, marks
from tests.fixtures.snapshots import (
    even_snapshot as even, later, make_snapshot, partition, snapshots, spread_partitions,
)

HOUR = marks(predict_cycle_s=3600.0)  # lead 600 s, slots of 300 s
DONE = DecisionMemory(step=1, first_decision_done=True)


def with_cycle(cycle) -> DecisionMemory:
    """A memory whose last cycles asked for what `cycle` says."""
    return DecisionMemory(step=1, first_decision_done=True,
                          history=memory_pairs(RulesMemory(cycle=cycle)))


def test_a_cycle_short_of_capacity_ahead_scales_out_before_the_load_comes():
    busy = even([0.9] * 4)  # short: demand 6 node-loads / 0.75 -> 8 nodes
    first = decide(busy, HOUR, DONE)
    assert first.sizing.delta > 0  # the reactive scale-out, recorded for the next cycle
    calm = later(even([0.4] * 4), 3600 - 400)
    plan = decide(calm, HOUR, first.memory)
    check_plan(calm, plan)
    launches = [a for a in plan.actions if a.op == "launch"]
    assert launches and plan.sizing.reason.startswith("predicted scale-out")
    moves = [a for a in plan.actions if a.op == "move"]
    assert moves and {a.target for a in moves} <= {a.node for a in launches}
    assert not any(a.op in ("terminate", "drain") for a in plan.actions)
    # Off (the default), the same calm cluster is left alone.
    assert marks().predict_cycle_s is None
    assert decide(calm, marks(), first.memory).is_empty


def test_no_scale_in_when_the_last_cycle_needed_every_node_just_ahead():
    snap = even([0.3, 0.3, 0.3, 0.3, 0.05])  # would lose its underloaded node
    assert decide(snap, HOUR, DONE).summary.terminations == 1
    at = snap.taken_at.timestamp() - 3600 + 450  # last cycle, a slot 300-600 s from now
    memory = with_cycle(record_need({}, at, 5, HOUR))
    plan = decide(snap, HOUR, memory)
    assert plan.summary.terminations == 0 and plan.summary.launches == 0
    assert "not scaling in" in plan.reason


def test_the_lead_must_leave_the_slots_ahead_to_the_last_cycle():
    with pytest.raises(ValidationError, match="predict_lead_s"):
        marks(predict_cycle_s=1000.0)  # 600 s ahead of 1,000 s is this cycle's own
    with pytest.raises(ValidationError, match="slots"):
        marks(predict_cycle_s=86400.0, predict_bucket_s=1.0)
    with pytest.raises(ValidationError, match="predict_cycle_s must be a finite number"):
        marks(predict_cycle_s=float("inf"))


def test_sized_from_demand_the_cycle_is_the_forecasts_and_any_length_is_accepted():
    # the slots and their lead are MET's marks'; the default reads the cycle into its forecast
    # (rules/measure.py), so a 20-minute cycle with the marks' 600-s lead is no contradiction
    sized_cycle = SIZED.model_copy(update={"predict_cycle_s": 1000.0})
    assert PolicyConfig.model_validate(sized_cycle.model_dump()).predict_cycle_s == 1000.0
    assert not PredictedScaleOut().enabled(sized_cycle) and PredictedScaleOut().enabled(HOUR)
    with pytest.raises(ValidationError, match="min_cycle_s"):
        PolicyConfig(min_cycle_s=3600.0, max_cycle_s=600.0)


def test_new_nodes_ahead_of_a_peak_also_get_their_share_of_the_idle_partitions():
    """Which partitions the peak wakes is unknown (idle ones weigh nothing now): the new
    nodes take their share of the count, idle partitions from the nodes holding most."""
    busy = even([0.9] * 4)
    first = decide(busy, HOUR, DONE)
    ids = ["rs1", "rs2", "rs3", "rs4"]
    parts = spread_partitions(ids, [(100.0, 50.0, 0.0)] * 16)
    parts += [partition(f"peak{k}", ids[k % 4]) for k in range(16)]  # the peak's tables, asleep
    calm = later(make_snapshot([0.4] * 4, parts), 3600 - 400)
    plan = decide(calm, HOUR, first.memory)
    check_plan(calm, plan)
    new = {a.node for a in plan.actions if a.op == "launch"}
    assert new
    holding = {a.node: len(a.partitions) for a in plan.assignment}
    share = len(parts) // len(holding)
    assert all(holding[n] >= share for n in new), holding
    assert any(a.op == "move" and a.partition.startswith("peak") and a.target in new
               for a in plan.actions)


def calm(snap):
    """The same snapshot under the overload marks (a prediction acts only while none is short)."""
    return replace(snap, nodes=tuple(
        replace(n, metrics=replace(n.metrics, cpu=0.55 * n.metrics.cpu,
                                   io_wait=0.15 * n.metrics.io_wait)) if n.metrics else n
        for n in snap.nodes))


@settings(max_examples=100, deadline=None)
@given(st.one_of(snapshots(max_nodes=8, max_partitions=40),
                 snapshots(min_nodes=2, max_nodes=8, max_partitions=40).map(calm)),
       st.integers(0, 20), st.integers(1, 20),
       st.one_of(st.floats(300.0, 600.0).map(lambda ahead: ahead - 3600.0),  # last cycle, ahead
                 st.floats(-3600.0 * 3, 0.0)))
def test_predictions_keep_the_safety_rules(snap, need, max_nodes, written):
    """Whatever the memory predicts: at most doubling, never above max_nodes, never a
    removal while the last cycle asked for as many nodes just ahead, and the usual rules."""
    cycle = record_need({}, snap.taken_at.timestamp() + written, need, HOUR)
    memory = with_cycle(cycle)
    policy = HOUR.model_copy(update={"max_nodes": max_nodes})
    plan = decide(snap, policy, memory)
    check_plan(snap, plan)
    current = sum(n.state == "active" for n in snap.nodes)
    assert plan.summary.terminations <= 1 and plan.sizing.delta >= -1
    if plan.sizing.reason.startswith("predicted scale-out"):
        assert current < plan.sizing.target <= min(2 * current, max_nodes)
        assert plan.summary.terminations == 0
    if plan.summary.terminations:
        ahead = predicted_need(cycle, snap.taken_at.timestamp(), policy)
        assert ahead is None or ahead.nodes < current


def test_new_nodes_ahead_of_a_peak_take_the_partitions_the_last_peak_woke():
    """The partitions that carried the last cycle's peak are idle now; the predicted
    scale-out gives them to the new nodes first (weighed as they weighed then)."""
    ids = ["rs1", "rs2", "rs3", "rs4"]
    steady = spread_partitions(ids, [(100.0, 50.0, 0.0)] * 8)
    peak = [partition(f"peak{k}", ids[k % 4], reads=2000.0) for k in range(8)]
    busy = make_snapshot([0.9] * 4, steady + peak)
    first = decide(busy, HOUR, DONE)
    assert first.sizing.delta > 0
    asleep = [partition(p.id, p.node) for p in peak]  # the same partitions, idle again
    calm = later(make_snapshot([0.3] * 4, steady + asleep), 3600 - 400)
    plan = decide(calm, HOUR, first.memory)
    check_plan(calm, plan)
    new = {a.node for a in plan.actions if a.op == "launch"}
    woke = [a for a in plan.actions if a.op == "move" and a.partition.startswith("peak")]
    assert new and woke and all(a.target in new for a in woke)
    assert {a.target for a in woke} == new  # every new node takes some of the peak
    # placed by the load they carried then, not as idle partitions dealt by count
    assert not any("spread by count" in a.reason for a in woke), [a.reason for a in woke]


def test_alone_it_records_the_cycle_and_refuses_a_scale_in_before_a_peak_and_off_does_nothing():
    snap = even([0.3, 0.3, 0.3, 0.3, 0.05])
    now = snap.taken_at.timestamp()
    memory = with_cycle(record_need({}, now - 3600 + 450, 5, HOUR))
    ctx = context(snap, HOUR, memory, observers=(PredictedScaleOut(),))
    assert ctx.prediction == Prediction(5, 300.0 - now % 300, 600.0 - now % 300)
    assert ctx.memory.cycle[slot_of(now, HOUR)].need == 0  # not short now: said
    refused = PredictedScaleOut().veto(ctx, Change("remove"))
    assert refused.cause == "predicted" and refused.reason.startswith("not scaling in")
    assert PredictedScaleOut().veto(ctx, Change("add")) is None
    assert alone(PredictedScaleOut(), snap, HOUR, memory) is None  # 5 nodes: none to add
    # off: nothing observed, nothing refused
    off = context(snap, marks(), memory, observers=(PredictedScaleOut(),))
    assert off.prediction is None and not PredictedScaleOut().enabled(marks())
    assert off.memory == context(snap, marks(), memory).memory


def test_inside_a_predicted_peak_the_slot_is_rewritten_with_the_nodes_held():
    snap = even([0.3, 0.3, 0.3, 0.3, 0.05])  # scale-in would remove one
    now = snap.taken_at.timestamp()
    carried = DecisionMemory(step=1, first_decision_done=True, history=memory_pairs(
        RulesMemory(predict_until=now + 300)))
    out = alone(PredictedScaleOut(), snap, HOUR, carried)
    assert isinstance(out, Carry) and out.memory.cycle[slot_of(now, HOUR)].need == 4
