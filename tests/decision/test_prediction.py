"""Predictive scale-out (policy.predict_cycle_s, opt-in): the last cycle's short slots ahead
scale the cluster out before the load comes, and hold off a scale-in; nothing else predicts."""
from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from decision import decide
from decision.model import DecisionMemory
from decision.policy import PolicyConfig
from decision.prediction import Prediction, expected_hot, predicted_need, record_hot, record_need
from tests.decision.plan_checks import check_plan
from tests.fixtures.snapshots import (
    even_snapshot as even, later, make_snapshot, partition, snapshots, spread_partitions,
)

HOUR = PolicyConfig(predict_cycle_s=3600.0)  # lead 600 s, slots of 300 s
DONE = DecisionMemory(step=1, first_decision_done=True)


def test_only_the_last_cycles_slots_ahead_predict():
    memo: dict[str, float] = {}
    record_need(memo, 1000.0, 6, HOUR)  # slot 900-1200 s of the hour
    # One cycle later, 400 s before: the slot starts 300 s ahead and ends 600 s ahead.
    assert predicted_need(memo, 1000.0 + 3600 - 400, HOUR) == Prediction(6, 300.0, 600.0)
    # Further ahead than predict_lead_s: not yet.
    assert predicted_need(memo, 1000.0 + 3600 - 1000, HOUR) is None
    # Later in the same cycle: this cycle's own slot does not predict.
    assert predicted_need(memo, 1000.0 - 400 + 3600 * 0.25, HOUR) is None
    # No decision fell in the slot in the last cycle (a long plan): the cycle before counts;
    # three cycles on, the memory is stale.
    assert predicted_need(memo, 1000.0 + 2 * 3600 - 400, HOUR).nodes == 6
    assert predicted_need(memo, 1000.0 + 3 * 3600 - 400, HOUR) is None
    # A second visit of the slot in the same cycle keeps the larger need; the next cycle's
    # first write replaces it, and a cycle that was not short there (0) stops the prediction.
    record_need(memo, 1100.0, 4, HOUR)
    assert predicted_need(memo, 1000.0 + 3600 - 400, HOUR).nodes == 6
    record_need(memo, 1000.0 + 3600, 3, HOUR)
    assert predicted_need(memo, 1000.0 + 2 * 3600 - 400, HOUR).nodes == 3
    record_need(memo, 1000.0 + 2 * 3600, 0, HOUR)
    assert predicted_need(memo, 1000.0 + 3 * 3600 - 400, HOUR) is None


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
    assert PolicyConfig().predict_cycle_s is None
    assert decide(calm, PolicyConfig(), first.memory).is_empty


def test_no_scale_in_when_the_last_cycle_needed_every_node_just_ahead():
    snap = even([0.3, 0.3, 0.3, 0.3, 0.05])  # would lose its underloaded node
    assert decide(snap, HOUR, DONE).summary.terminations == 1
    memo: dict[str, float] = {}
    at = snap.taken_at.timestamp() - 3600 + 450  # last cycle, a slot 300-600 s from now
    record_need(memo, at, 5, HOUR)
    memory = DecisionMemory(step=1, first_decision_done=True, history=tuple(sorted(memo.items())))
    plan = decide(snap, HOUR, memory)
    assert plan.summary.terminations == 0 and plan.summary.launches == 0
    assert "not scaling in" in plan.reason


def test_the_lead_must_leave_the_slots_ahead_to_the_last_cycle():
    with pytest.raises(ValidationError, match="predict_lead_s"):
        PolicyConfig(predict_cycle_s=1000.0)  # 600 s ahead of 1,000 s is this cycle's own
    with pytest.raises(ValidationError, match="slots"):
        PolicyConfig(predict_cycle_s=86400.0, predict_bucket_s=1.0)
    with pytest.raises(ValidationError, match="predict_cycle_s must be a finite number"):
        PolicyConfig(predict_cycle_s=float("inf"))


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
    memo: dict[str, float] = {}
    record_need(memo, snap.taken_at.timestamp() + written, need, HOUR)
    memory = DecisionMemory(step=1, first_decision_done=True, history=tuple(sorted(memo.items())))
    policy = HOUR.model_copy(update={"max_nodes": max_nodes})
    plan = decide(snap, policy, memory)
    check_plan(snap, plan)
    current = sum(n.state == "active" for n in snap.nodes)
    assert plan.summary.terminations <= 1 and plan.sizing.delta >= -1
    if plan.sizing.reason.startswith("predicted scale-out"):
        assert current < plan.sizing.target <= min(2 * current, max_nodes)
        assert plan.summary.terminations == 0
    if plan.summary.terminations:
        ahead = predicted_need(memo, snap.taken_at.timestamp(), policy)
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


def test_a_partition_hot_through_a_long_peak_is_expected_from_when_it_woke():
    memo: dict[str, float] = {}
    for t in (1000.0, 1300.0, 1600.0):  # one peak, three short decisions
        record_hot(memo, t, {"p1": 0.5 if t < 1600 else 0.8}, HOUR)
    # next cycle, 500 s before it woke: expected, at its largest share
    assert expected_hot(memo, 1000.0 + 3600 - 500, HOUR) == {"p1": 0.8}
    # three cycles on: forgotten at the next write
    record_hot(memo, 1000.0 + 3 * 3600, {}, HOUR)
    assert expected_hot(memo, 1000.0 + 4 * 3600 - 500, HOUR) == {}
