"""The demand forecast: Holt's smoothing on the snapshots' clock, bounded growth, the recent
peak scale-in sizes for."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decision.forecast import Recent, Trend, forecast, observe

HALF = {"level_half_life_s": 30.0, "slope_half_life_s": 120.0}


def run(series: list[tuple[float, float]]) -> Trend:
    trend = None
    for t, d in series:
        trend = observe(trend, d, t, **HALF)
    assert trend is not None
    return trend


def test_a_steady_demand_forecasts_itself():
    trend = run([(30.0 * i, 8.0) for i in range(40)])
    f = forecast(trend, 8.0, 600.0, max_growth=1.0)
    assert f.ahead == pytest.approx(8.0, abs=1e-6)
    assert abs(f.slope) < 1e-9


def test_a_ramp_is_followed_ahead_by_its_slope():
    # +1 node-load a minute for 20 minutes: 10 minutes ahead is ~10 node-loads more
    trend = run([(30.0 * i, 2.0 + 0.5 * i) for i in range(40)])
    now = 2.0 + 0.5 * 39
    f = forecast(trend, now, 600.0, max_growth=1.0)
    assert 0.8 * (now + 10.0) < f.ahead < 1.1 * (now + 10.0)
    assert f.slope == pytest.approx(1 / 60, rel=0.15)


def test_a_step_is_not_extrapolated_beyond_the_growth_bound():
    trend = run([(30.0 * i, 2.0) for i in range(20)] + [(600.0, 10.0), (630.0, 10.0)])
    f = forecast(trend, 10.0, 600.0, max_growth=0.5)
    assert f.ahead <= 15.0 + 1e-9


def test_a_falling_demand_forecasts_less_than_now():
    trend = run([(30.0 * i, 20.0 - 0.4 * i) for i in range(30)])
    f = forecast(trend, 20.0 - 0.4 * 29, 300.0, max_growth=1.0)
    assert f.ahead < f.now and f.slope < 0


def test_replayed_snapshot_replaces_the_level_only():
    trend = run([(0.0, 4.0), (30.0, 5.0)])
    again = observe(trend, 6.0, 30.0, **HALF)
    assert again.level == 6.0 and again.slope == trend.slope and again.at == trend.at


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_demand_that_is_no_number_is_refused(bad):
    with pytest.raises(ValueError):
        observe(None, bad, 0.0, **HALF)


@given(st.lists(st.floats(0, 1e4), min_size=1, max_size=40), st.floats(0, 3600),
       st.floats(0, 4))
def test_the_forecast_is_never_negative_nor_beyond_its_bound(demands, horizon, growth):
    trend = run([(30.0 * i, d) for i, d in enumerate(demands)])
    f = forecast(trend, demands[-1], horizon, max_growth=growth)
    assert 0.0 <= f.ahead <= max(trend.level, demands[-1]) * (1 + growth) + 1e-6


def test_recent_keeps_the_window_and_its_peak():
    r = Recent()
    for i, d in enumerate([3.0, 9.0, 4.0, 5.0]):
        r = r.add(100.0 * i, d, window_s=250.0)
    assert [t for t, _ in r.samples] == [100.0, 200.0, 300.0]
    assert r.peak() == 9.0
    r = r.add(400.0, 1.0, window_s=250.0)
    assert r.peak() == 5.0
    assert Recent().peak() == 0.0
