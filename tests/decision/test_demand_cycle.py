"""The demand's cycle (decision/demand_cycle.py): the record at fixed steps, the period found in
it, and what the last cycle says of the stretch ahead."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decision.demand_cycle import MAX_STEPS, MISSING, DemandRecord, find_period, last_cycle_ahead

STEP = 30.0
FIND = dict(min_s=300.0, max_s=7200.0, match=0.5, swing=0.3)


def recorded(values, step: float = STEP, start: float = 0.0) -> DemandRecord:
    """The record of one decision a step, at the given demands."""
    record = DemandRecord(step)
    for i, v in enumerate(values):
        record = record.add(start + i * step, float(v), keep_s=1e9)
    return record


def lunch_peaks(cycles: float, period_steps: int = 40, noise: float = 0.05, seed: int = 1) -> np.ndarray:
    """Two peaks a cycle over a trough (open-lunch-peaks' shape), with noise."""
    t = np.arange(int(cycles * period_steps))
    phase = (t % period_steps) / period_steps
    shape = 1.0 + 3.0 * np.exp(-((phase - 0.2) / 0.05) ** 2) + 3.5 * np.exp(-((phase - 0.5) / 0.07) ** 2)
    return shape * np.random.default_rng(seed).lognormal(0.0, noise, t.size)


def test_a_cycle_that_repeated_is_found_at_its_period_not_twice_it():
    found = find_period(recorded(lunch_peaks(4.5)), **FIND)
    assert found is not None
    assert found.period_s == pytest.approx(40 * STEP, abs=STEP)


def test_a_load_seen_for_less_than_two_cycles_has_no_cycle_yet():
    # the first cycle cannot be told from anything else: it has to come again
    assert find_period(recorded(lunch_peaks(1.9)), **FIND) is None


@pytest.mark.parametrize("shape", ["flat", "ramp", "decline", "step"])
def test_a_load_without_a_cycle_has_none(shape):
    n = 400
    t = np.arange(n, dtype=float)
    noise = np.random.default_rng(3).lognormal(0.0, 0.05, n)
    demand = {"flat": np.full(n, 4.0), "ramp": 1.0 + t / 40.0, "decline": 11.0 - t / 40.0,
              "step": np.where(t < 250, 2.0, 6.0)}[shape] * noise
    assert find_period(recorded(demand), **FIND) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 5.0), min_size=20, max_size=160), st.booleans())
def test_no_cycle_is_found_in_a_demand_that_only_rises_or_only_falls(steps, falling):
    # every period of a monotone demand differs from the one before by more than its spread
    demand = np.cumsum(steps)
    demand = demand[::-1] if falling else demand
    assert find_period(recorded(demand), **FIND) is None


def test_the_stretch_ahead_is_the_last_cycles_most_at_that_time():
    demand = lunch_peaks(1.1, noise=0.0)  # 44 steps: now is the trough before cycle 2's peaks
    record = recorded(demand)
    now = (len(demand) - 1) * STEP
    ahead = last_cycle_ahead(record, now, 40 * STEP, horizon_s=10 * STEP, level_window_s=5 * STEP)
    assert ahead is not None and ahead.level == pytest.approx(1.0, abs=0.01)
    # 40 steps back (step 3) and 300 s on (step 13): the first cycle's first peak (step 8)
    assert ahead.demand == pytest.approx(demand[3:14].max() * ahead.level)
    assert demand[3:14].max() == demand[8]
    assert ahead.demand > 3 * demand[-1]
    assert not ahead.found


def test_a_lower_demand_than_the_last_cycle_scales_its_peak_down_a_higher_one_never_up():
    demand = lunch_peaks(1.5, noise=0.0)
    now = (len(demand) - 1) * STEP
    lower = recorded(np.concatenate([demand[:50], demand[50:] * 0.7]))
    higher = recorded(np.concatenate([demand[:50], demand[50:] * 1.5]))
    down = last_cycle_ahead(lower, now, 40 * STEP, 10 * STEP, 5 * STEP)
    up = last_cycle_ahead(higher, now, 40 * STEP, 10 * STEP, 5 * STEP)
    assert down is not None and up is not None
    assert down.level == pytest.approx(0.7) and up.level == 1.0
    assert up.demand == pytest.approx(demand[19:30].max())


def test_nothing_is_said_of_a_stretch_the_record_does_not_reach():
    record = recorded([1.0] * 10)
    assert last_cycle_ahead(record, 9 * STEP, 3600.0, 300.0, 150.0) is None
    assert last_cycle_ahead(DemandRecord(), 0.0, 600.0, 300.0, 150.0) is None


def test_a_step_keeps_the_most_demand_measured_in_it_and_gaps_are_missing():
    record = DemandRecord(STEP).add(0.0, 1.0, 1e9).add(10.0, 3.0, 1e9).add(20.0, 2.0, 1e9)
    assert record.values == (3.0,)
    record = record.add(95.0, 4.0, 1e9)  # steps 1 and 2 saw no decision (the daemon was down)
    assert record.values == (3.0, MISSING, MISSING, 4.0)
    assert np.isnan(record.array()[1:3]).all()


def test_a_clock_that_steps_back_or_a_gap_longer_than_kept_starts_afresh():
    record = recorded([1.0, 2.0, 3.0])
    back = record.add(0.0, 5.0, 1e9)
    assert back.values == (5.0,) and back.start_at == 0.0
    far = record.add(10_000.0, 7.0, keep_s=600.0)
    assert far.values == (7.0,) and far.start_at == pytest.approx(10_000.0 - 10_000.0 % STEP)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.floats(STEP, 1e6))
def test_the_record_keeps_what_it_is_told_and_never_more_than_max_steps(n, keep_s):
    record = DemandRecord(STEP)
    for i in range(n):
        record = record.add(i * STEP, 1.0, keep_s)
    assert 1 <= len(record.values) <= min(MAX_STEPS, int(keep_s // STEP) + 1)
    assert record.start_at == (n - len(record.values)) * STEP


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_a_demand_that_is_no_number_is_refused(bad):
    with pytest.raises(ValueError, match="demand must be finite"):
        DemandRecord(STEP).add(0.0, bad, 600.0)
