"""The memory of the load's cycle (decision/rules/cycle.py): which slots ahead the last cycle
was short in, and which partitions carried its peak."""
from __future__ import annotations

from decision.policy import PolicyConfig
from decision.rules.cycle import Prediction, expected_hot, predicted_need, record_hot, record_need

HOUR = PolicyConfig(predict_cycle_s=3600.0)  # lead 600 s, slots of 300 s


def test_only_the_last_cycles_slots_ahead_predict():
    cycle = record_need({}, 1000.0, 6, HOUR)  # slot 900-1200 s of the hour
    # One cycle later, 400 s before: the slot starts 300 s ahead and ends 600 s ahead.
    assert predicted_need(cycle, 1000.0 + 3600 - 400, HOUR) == Prediction(6, 300.0, 600.0)
    # Further ahead than predict_lead_s: not yet.
    assert predicted_need(cycle, 1000.0 + 3600 - 1000, HOUR) is None
    # Later in the same cycle: this cycle's own slot does not predict.
    assert predicted_need(cycle, 1000.0 - 400 + 3600 * 0.25, HOUR) is None
    # No decision fell in the slot in the last cycle (a long plan): the cycle before counts;
    # three cycles on, the cyclery is stale.
    assert predicted_need(cycle, 1000.0 + 2 * 3600 - 400, HOUR).nodes == 6
    assert predicted_need(cycle, 1000.0 + 3 * 3600 - 400, HOUR) is None
    # A second visit of the slot in the same cycle keeps the larger need; the next cycle's
    # first write replaces it, and a cycle that was not short there (0) stops the prediction.
    cycle = record_need(cycle, 1100.0, 4, HOUR)
    assert predicted_need(cycle, 1000.0 + 3600 - 400, HOUR).nodes == 6
    cycle = record_need(cycle, 1000.0 + 3600, 3, HOUR)
    assert predicted_need(cycle, 1000.0 + 2 * 3600 - 400, HOUR).nodes == 3
    cycle = record_need(cycle, 1000.0 + 2 * 3600, 0, HOUR)
    assert predicted_need(cycle, 1000.0 + 3 * 3600 - 400, HOUR) is None


def test_a_partition_hot_through_a_long_peak_is_expected_from_when_it_woke():
    peaks: dict = {}
    for t in (1000.0, 1300.0, 1600.0):  # one peak, three short decisions
        peaks = record_hot(peaks, t, {"p1": 0.5 if t < 1600 else 0.8}, HOUR)
    # next cycle, 500 s before it woke: expected, at its largest share
    assert expected_hot(peaks, 1000.0 + 3600 - 500, HOUR) == {"p1": 0.8}
    # three cycles on: forgotten at the next write
    peaks = record_hot(peaks, 1000.0 + 3 * 3600, {}, HOUR)
    assert expected_hot(peaks, 1000.0 + 4 * 3600 - 500, HOUR) == {}
