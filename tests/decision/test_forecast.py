"""The demand forecast: the least-squares slope of the recent demand, followed damped over the
horizon, bounded growth; the recent peak scale-in sizes for."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decision.forecast import Recent, forecast, significant, skill

ARGS = {"window_s": 300.0, "max_growth": 1.0, "persistence_s": 1e9}  # undamped unless said


def recent(series: list[tuple[float, float]], window_s: float = 3600.0) -> Recent:
    r = Recent()
    for t, d in series:
        r = r.add(t, d, window_s)
    return r


def test_a_steady_demand_forecasts_itself():
    f = forecast(recent([(30.0 * i, 8.0) for i in range(40)]), 8.0, 600.0, **ARGS)
    assert f.ahead == pytest.approx(8.0) and f.slope == pytest.approx(0.0)


def test_a_ramp_is_followed_ahead_by_its_slope():
    # +1 node-load a minute: 10 minutes ahead is 10 node-loads more
    r = recent([(30.0 * i, 2.0 + 0.5 * i) for i in range(40)])
    f = forecast(r, 2.0 + 0.5 * 39, 600.0, **ARGS)
    assert f.slope == pytest.approx(1 / 60)
    assert f.ahead == pytest.approx(2.0 + 0.5 * 39 + 10.0)


def test_the_slope_is_damped_by_how_long_a_trend_lasts():
    r = recent([(30.0 * i, 2.0 + 0.5 * i) for i in range(40)])
    now = 2.0 + 0.5 * 39
    damped = forecast(r, now, 600.0, **{**ARGS, "persistence_s": 300.0})
    assert damped.ahead == pytest.approx(now + (1 / 60) * 300.0 * (1 - math.exp(-2.0)))


def test_only_the_window_counts_for_the_slope():
    # flat for an hour, then a ramp over the last two minutes
    r = recent([(30.0 * i, 4.0) for i in range(120)] + [(3600.0 + 30 * i, 4.0 + i) for i in range(1, 5)])
    assert forecast(r, 8.0, 60.0, **{**ARGS, "window_s": 120.0}).slope == pytest.approx(1 / 30)


def test_a_step_is_a_new_level_once_demand_stops_rising():
    # 4 node-loads, a tenant arrives (8 within a minute), then flat: the whole window's line
    # still climbs, but the demand does not
    before = [(30.0 * i, 4.0) for i in range(10)]
    rising = before + [(300.0, 6.0), (330.0, 8.0)]
    during = forecast(recent(rising), 8.0, 600.0, **ARGS)
    assert during.ahead > 8.0 + 1.0  # still rising: followed
    after = forecast(recent(rising + [(360.0 + 30 * i, 8.0) for i in range(5)]), 8.0, 600.0,
                     **ARGS)
    assert after.slope == pytest.approx(0.0) and after.ahead == pytest.approx(8.0)


def test_growth_is_bounded_and_a_fall_forecasts_less():
    up = forecast(recent([(0.0, 1.0), (30.0, 5.0), (60.0, 9.0)]), 9.0, 600.0,
                  **{**ARGS, "max_growth": 0.5})
    assert up.ahead == pytest.approx(13.5)
    down = forecast(recent([(30.0 * i, 20.0 - 0.4 * i) for i in range(30)]), 8.4, 300.0, **ARGS)
    assert down.ahead < down.now and down.slope < 0


def test_with_fewer_than_three_samples_there_is_no_slope():
    assert forecast(recent([(0.0, 1.0), (30.0, 5.0)]), 5.0, 600.0, **ARGS).ahead == 5.0


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0])
def test_demand_that_is_no_number_is_refused(bad):
    with pytest.raises(ValueError):
        Recent().add(0.0, bad, 60.0)


@given(st.lists(st.floats(0, 1e4), min_size=1, max_size=40), st.floats(0, 3600),
       st.floats(0, 4), st.floats(1, 1e4))
def test_the_forecast_is_never_negative_nor_beyond_its_bound(demands, horizon, growth, persist):
    r = recent([(30.0 * i, d) for i, d in enumerate(demands)])
    f = forecast(r, demands[-1], horizon, window_s=300.0, max_growth=growth, persistence_s=persist)
    assert 0.0 <= f.ahead <= demands[-1] * (1 + growth) + 1e-6


def test_recent_keeps_the_window_its_peak_and_its_pace():
    r = Recent()
    for i, d in enumerate([3.0, 9.0, 4.0, 5.0]):
        r = r.add(100.0 * i, d, window_s=250.0)
    assert [t for t, _ in r.samples] == [100.0, 200.0, 300.0]
    assert r.peak() == 9.0 and r.peak(since=250.0) == 5.0 and r.gap() == 100.0
    assert r.add(400.0, 1.0, window_s=250.0).peak() == 5.0
    assert Recent().peak() == 0.0 and Recent().gap() == 0.0
    # a clock that stepped back keeps only what is not after the new sample
    assert [t for t, _ in r.add(150.0, 2.0, window_s=250.0).samples] == [100.0, 150.0]


JUDGE = {"window_s": 150.0, "max_growth": 1.0, "persistence_s": 1800.0}


def held_noise(level: float, n: int, seed: int, every: int = 2, share: float = 0.05):
    """`level` x lognormal noise drawn every `every` samples and held between draws (the
    scenarios' noise: 5 % draws held for 60 s, sampled every 30 s)."""
    draws = np.random.default_rng(seed).lognormal(0.0, share, n // every + 1)
    return [(30.0 * i, level * float(draws[i // every])) for i in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_a_steady_loads_noise_slopes_are_judged_and_no_longer_followed(seed):
    series = held_noise(6.2, 70, seed)
    r = recent(series)
    factor, judged = skill(r, 480.0, since=series[-1][0] - 480.0 - 1200.0, prior_rise=0.25,
                           **JUDGE)
    assert judged >= 30
    assert factor < 0.5  # the rises it drew did not come
    followed = forecast(r, series[-1][1], 480.0, skill=factor, **JUDGE)
    raw = forecast(r, series[-1][1], 480.0, **JUDGE)
    assert abs(followed.ahead - followed.now) <= abs(raw.ahead - raw.now) * 0.5 + 1e-9


def test_a_ramps_rises_come_true_and_are_followed_in_full():
    ramp = [(30.0 * i, 2.0 + 0.1 * i) for i in range(70)]
    factor, judged = skill(recent(ramp), 480.0, since=ramp[-1][0] - 1680.0, prior_rise=0.25,
                           **JUDGE)
    assert judged >= 30 and factor > 0.95


def test_a_ramp_after_a_steady_hour_wins_its_forecasts_back_once_they_come_due():
    steady = held_noise(4.0, 60, 3)
    ramp = steady + [(1800.0 + 30 * i, steady[-1][1] * (1 + 0.05 * i)) for i in range(1, 30)]
    r = recent(ramp)
    early, _ = skill(Recent(r.samples[:64]), 480.0, since=0.0, prior_rise=0.25, **JUDGE)
    late, _ = skill(r, 480.0, since=ramp[-1][0] - 1680.0, prior_rise=0.25, **JUDGE)
    assert late > early and late > 0.8


def test_a_dip_while_a_scale_in_ran_does_not_silence_the_ramp_after_it():
    # A steady load; a scale-in from 330 s to 390 s, whose moves held requests back (the
    # demand measured dipped, its forecasts fell); then the ramp. Judged, those falls make
    # the ramp's record nil; left out, the ramp is followed.
    steady = [(30.0 * i, 1.0) for i in range(12)]
    dip = [(360.0, 0.84), (390.0, 0.92)]
    ramp = [(390.0 + 30 * i, 0.92 + 0.75 * i) for i in range(1, 5)]
    r = recent(steady + dip + ramp)
    judged, _ = skill(r, 90.0, since=0.0, prior_rise=0.25, **JUDGE)
    left_out, _ = skill(r, 90.0, since=0.0, prior_rise=0.25, held=(330.0, 390.0), **JUDGE)
    assert judged < 0.2 and left_out > 0.9
    ahead = forecast(r, ramp[-1][1], 480.0, skill=left_out, **JUDGE)
    assert ahead.ahead > 1.5 * ahead.now  # the ramp's rise is followed


def test_with_nothing_judged_the_slope_is_followed_whole():
    assert skill(recent([(0.0, 1.0), (30.0, 2.0), (60.0, 3.0)]), 480.0, since=0.0,
                 prior_rise=0.25, **JUDGE) == (1.0, 0)


@given(st.lists(st.floats(0, 1e4), min_size=1, max_size=60), st.floats(0, 1800),
       st.floats(0, 2))
def test_the_record_is_a_share_of_the_slope(demands, horizon, prior):
    r = recent([(30.0 * i, d) for i, d in enumerate(demands)])
    factor, judged = skill(r, horizon, since=0.0, prior_rise=prior, **JUDGE)
    assert 0.0 <= factor <= 1.0 and 0 <= judged <= len(demands)


# The demand metctl measured at its first three decisions beside a freshly started quota'd
# HBase, at a steady 346 requests/s (docs/compare-hbase-2026-12-07-report.json, run 2): cold
# JVMs' CPU, not a ramp. Followed whole, its line forecast 2.86 in 480 s and bought two nodes.
COLD_START = [(0.0, 1.30), (25.0, 0.83), (55.0, 1.45)]


def test_before_any_forecast_is_judged_a_line_through_noise_adds_nothing():
    r = recent(COLD_START)
    whole = forecast(r, 1.45, 480.0, **JUDGE)
    assert whole.ahead > 2.5  # what the policy forecast that day
    kept = forecast(r, 1.45, 480.0, significance=True, **JUDGE)
    assert kept.ahead == pytest.approx(1.45) and kept.stands_out == 0.0


def test_before_any_forecast_is_judged_a_ramp_is_followed_nearly_whole():
    # +0.3 node-loads a decision with 2 % noise: the rise stands far out of it
    rng = np.random.default_rng(3)
    ramp = [(30.0 * i, (2.0 + 0.3 * i) * float(rng.lognormal(0.0, 0.02))) for i in range(6)]
    now = ramp[-1][1]
    whole = forecast(recent(ramp), now, 480.0, **JUDGE)
    kept = forecast(recent(ramp), now, 480.0, significance=True, **JUDGE)
    assert kept.stands_out > 0.9
    assert kept.ahead - now >= 0.9 * (whole.ahead - now) > 0.5


def test_once_forecasts_are_judged_their_record_speaks_not_the_lines_noise():
    r = recent(COLD_START)
    judged = forecast(r, 1.45, 480.0, skill=0.8, judged=4, significance=True, **JUDGE)
    assert judged.stands_out == 1.0
    assert judged.ahead == pytest.approx(forecast(r, 1.45, 480.0, skill=0.8, judged=4,
                                                  **JUDGE).ahead)


def test_a_lines_standard_error_is_its_residuals_over_the_times_spread():
    assert Recent(((0.0, 1.0), (30.0, 2.0), (60.0, 3.0))).line() == (pytest.approx(1 / 30), 0.0)
    # a flat line through 1, 2, 1 (mean 4/3): residuals -1/3, 2/3, -1/3 over n - 2 = 1 degree
    # of freedom, over the times' spread 30^2 + 0 + 30^2
    slope, error = Recent(((0.0, 1.0), (30.0, 2.0), (60.0, 1.0))).line()
    assert slope == pytest.approx(0.0, abs=1e-12)
    assert error == pytest.approx(math.sqrt((1 / 9 + 4 / 9 + 1 / 9) / 1 / 1800), rel=1e-9)


@given(st.floats(-10, 10), st.floats(0, 10))
def test_a_slope_is_kept_in_a_share_of_zero_to_one(slope, error):
    kept = significant(slope, error)
    assert 0.0 <= kept <= 1.0
    if abs(slope) <= error:
        assert kept == 0.0
