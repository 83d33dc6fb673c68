"""Brown's double exponential smoothing (R. G. Brown, *Smoothing, forecasting and prediction of
discrete time series*, 1963 — MET's reference [5]), one instance per smoothed series.

With smoothing constant α (0 < α < 1) and observation x_t:

    S'_t  = α·x_t  + (1 − α)·S'_{t−1}          (single smoothing)
    S''_t = α·S'_t + (1 − α)·S''_{t−1}         (double smoothing)
    a_t   = 2·S'_t − S''_t                     (level, trend-corrected)
    b_t   = α/(1 − α) · (S'_t − S''_t)         (trend per step)
    F_{t+m} = a_t + m·b_t                      (m-step forecast)

initialised with S'_0 = S''_0 = x_0 (so a_0 = x_0, b_0 = 0).

What feeds decisions: by default the level a_t. MET smooths "to account for temporary load spikes"
and the decision core judges the cluster's *current* load (Stage A thresholds, Stage C shares);
a_t is the smoothed estimate of that present value, without the lag a single exponential
average has under a trend. The forecast a_t + b_t extrapolates the trend one more step, which
amplifies the noise of a short window (MET decides after only 6 samples) — available as
`smoothing_output: forecast` for those who want to act ahead of a ramp.

Both a_t and F can leave the range of the series after a sharp change (a rate below 0, a cpu
fraction above 1); `value()` clamps to the given bounds, which are physical limits, not guesses.
"""
from __future__ import annotations

import math


class BrownSmoother:
    """Double exponential smoothing of one series; `update` per observation, `value` to read."""

    __slots__ = ("alpha", "s1", "s2", "count")

    def __init__(self, alpha: float):
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"smoothing alpha must be in (0, 1), got {alpha}")
        self.alpha = alpha
        self.s1 = 0.0
        self.s2 = 0.0
        self.count = 0  # observations since creation

    def update(self, x: float) -> None:
        if not math.isfinite(x):
            raise ValueError(f"cannot smooth a non-finite observation {x!r}")
        if self.count == 0:
            self.s1 = self.s2 = x
        else:
            a = self.alpha
            self.s1 = a * x + (1.0 - a) * self.s1
            self.s2 = a * self.s1 + (1.0 - a) * self.s2
        self.count += 1

    @property
    def level(self) -> float:
        return 2.0 * self.s1 - self.s2

    @property
    def trend(self) -> float:
        return self.alpha / (1.0 - self.alpha) * (self.s1 - self.s2)

    def forecast(self, steps: float = 1.0) -> float:
        return self.level + steps * self.trend

    def value(self, output: str = "level", low: float = -math.inf, high: float = math.inf) -> float:
        """The value decisions use (`level` or one-step `forecast`), clamped to [low, high]."""
        if self.count == 0:
            raise ValueError("no observation smoothed yet")
        raw = self.level if output == "level" else self.forecast(1.0)
        return min(high, max(low, raw))
