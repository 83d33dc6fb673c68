"""Brown's double exponential smoothing: checked against its closed form (weighted sums)."""
import math

import pytest
from hypothesis import given, strategies as st

from monitor.smoothing import BrownSmoother

alphas = st.floats(min_value=0.05, max_value=0.95)
series = st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=40)


def single_smoothed(xs, a):
    """S'_t as an explicit weighted sum: Σ α(1−α)^k x_{t−k} plus the initial value's weight."""
    t = len(xs) - 1
    return sum(a * (1 - a) ** k * xs[t - k] for k in range(t)) + (1 - a) ** t * xs[0]


@given(series, alphas)
def test_single_smoothing_equals_weighted_sum(xs, a):
    s = BrownSmoother(a)
    for x in xs:
        s.update(x)
    assert s.s1 == pytest.approx(single_smoothed(xs, a), rel=1e-9, abs=1e-6)


@given(series, alphas)
def test_double_smoothing_is_smoothing_of_the_smoothed(xs, a):
    s = BrownSmoother(a)
    firsts = []
    for x in xs:
        s.update(x)
        firsts.append(s.s1)
    assert s.s2 == pytest.approx(single_smoothed(firsts, a), rel=1e-9, abs=1e-6)
    assert s.level == pytest.approx(2 * s.s1 - s.s2)
    assert s.forecast(1) == pytest.approx(s.level + s.trend)


@given(st.floats(min_value=-1e6, max_value=1e6), alphas, st.integers(1, 30))
def test_constant_series_is_its_own_level_and_has_no_trend(c, a, n):
    s = BrownSmoother(a)
    for _ in range(n):
        s.update(c)
    assert s.level == pytest.approx(c, abs=1e-9 * max(1, abs(c)))
    assert s.trend == pytest.approx(0, abs=1e-9 * max(1, abs(c)))


@given(alphas, st.floats(-100, 100), st.floats(-10, 10))
def test_linear_series_level_catches_up_with_the_trend(a, start, slope):
    """Double smoothing exists to follow a trend without lag: the error on a line decays to 0."""
    s = BrownSmoother(a)
    xs = [start + slope * t for t in range(400)]
    for x in xs:
        s.update(x)
    assert s.level == pytest.approx(xs[-1], abs=1e-6 * (1 + abs(xs[-1])))
    assert s.trend == pytest.approx(slope, abs=1e-6 * (1 + abs(slope)))


def test_newest_observation_weighs_most():
    s = BrownSmoother(0.5)
    for x in (0, 0, 0, 10):
        s.update(x)
    spike = s.level
    t = BrownSmoother(0.5)
    for x in (10, 0, 0, 0):
        t.update(x)
    assert spike > t.level


def test_value_clamps_to_physical_bounds_and_refuses_bad_input():
    s = BrownSmoother(0.7)
    for x in (100, 100, 100, 0, 0):  # a sharp drop: the trend-corrected level undershoots below 0
        s.update(x)
    assert s.level < 0
    assert s.value("level", low=0.0) == 0.0
    with pytest.raises(ValueError):
        s.update(math.nan)
    with pytest.raises(ValueError):
        BrownSmoother(1.0)
    with pytest.raises(ValueError):
        BrownSmoother(0.5).value()
