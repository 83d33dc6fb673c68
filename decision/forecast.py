"""Demand forecast: where the cluster's demand (node-loads) is heading over the time a new node
needs to become useful, from the demand the policy measured at each decision.

Holt's linear exponential smoothing (Holt 1957; Hyndman & Athanasopoulos, "Forecasting:
Principles and Practice", §8.2) on an irregular clock: each observation y at time t moves the
level towards y and the trend (node-loads per second) towards the level's change, with weights
1 - exp(-dt / half-life * ln 2), so a decision every 30 s and one every 180 s learn alike.
The forecast over a horizon h is level + trend x h, never below what is asked now, and the
trend's contribution is bounded (`max_growth`): a step the monitor saw once is not a slope to
extrapolate for ten minutes.

`recent` keeps the largest demand of the last `window_s` (a few samples): scale-in sizes for
the most of now, the forecast and that (a prediction may keep nodes, never remove them).

Pure: values in, values out; the decision memory keeps the state between decisions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Trend:
    """The smoothed demand and its slope at `at` (taken_at, epoch seconds)."""

    level: float   # node-loads
    slope: float   # node-loads per second
    at: float


@dataclass(frozen=True)
class Forecast:
    """What the demand is now and is expected to be `horizon_s` ahead, in node-loads."""

    now: float
    ahead: float
    horizon_s: float
    slope: float  # node-loads per second, as smoothed


def _weight(dt: float, half_life_s: float) -> float:
    if half_life_s <= 0:
        return 1.0
    return 1.0 - math.exp(-max(dt, 0.0) * math.log(2.0) / half_life_s)


def observe(trend: Trend | None, demand: float, at: float, *, level_half_life_s: float,
            slope_half_life_s: float) -> Trend:
    """`trend` after one more measurement. The first measurement starts it flat; one at or
    before the last (a replayed snapshot, a clock step back) replaces the level only."""
    if not math.isfinite(demand) or demand < 0:
        raise ValueError(f"demand must be finite and >= 0, got {demand}")
    if trend is None:
        return Trend(demand, 0.0, at)
    dt = at - trend.at
    if dt <= 0:
        return replace(trend, level=demand)
    expected = trend.level + trend.slope * dt
    level = expected + _weight(dt, level_half_life_s) * (demand - expected)
    b = _weight(dt, slope_half_life_s)
    slope = (1.0 - b) * trend.slope + b * (level - trend.level) / dt
    return Trend(max(level, 0.0), slope, at)


def forecast(trend: Trend, demand_now: float, horizon_s: float, *, max_growth: float) -> Forecast:
    """Demand `horizon_s` ahead: the smoothed level moved along its slope, at most `max_growth`
    (a fraction) above the larger of the level and the demand measured now. A falling slope
    gives a forecast under today's demand: the callers size scale-out for the larger of the
    two and scale-in for the largest of now, the forecast and the recent peak, so a forecast
    can keep nodes or add them, never remove them by itself."""
    base = max(trend.level, demand_now)
    ahead = trend.level + trend.slope * max(horizon_s, 0.0)
    ahead = min(max(ahead, 0.0), base * (1.0 + max_growth))
    return Forecast(now=demand_now, ahead=ahead, horizon_s=horizon_s, slope=trend.slope)


@dataclass(frozen=True)
class Recent:
    """The demand measured at the last few decisions, (taken_at, node-loads), oldest first."""

    samples: tuple[tuple[float, float], ...] = ()

    def add(self, at: float, demand: float, window_s: float, keep: int = 64) -> Recent:
        """With one more sample; older than `window_s` before `at`, or beyond `keep`, dropped."""
        kept = tuple(s for s in self.samples if at - window_s <= s[0] < at)
        return Recent((kept + ((at, demand),))[-keep:])

    def peak(self) -> float:
        return max((d for _, d in self.samples), default=0.0)


__all__ = ["Trend", "Forecast", "Recent", "observe", "forecast"]
