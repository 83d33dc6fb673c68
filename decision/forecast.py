"""Demand forecast: where the cluster's demand (node-loads) is heading over the time a new node
needs to become useful, from the demand the policy measured at its recent decisions.

The slope is the least-squares line through the demand of the last `window_s` (a ramp shows
within a few decisions; the monitor already smooths each metric, so no second smoothing lags
it further), or that of the window's latter half when it rises less: once demand stops rising,
a step (a tenant arriving) is a new level, not a trend. The slope is followed damped (Gardner &
McKenzie, "Forecasting trends in time series", Management Science 31(10), 1985): a trend lasts
`persistence_s` on average, so over a horizon h it adds slope x persistence_s x
(1 - exp(-h / persistence_s)) — a ramp seen for a few minutes is not assumed to run for the
whole lead time. The forecast is never below zero and at most `max_growth` above today's
demand. The callers size a scale-out for the larger of now and the forecast, and a scale-in
for the largest of now, the forecast and the recent peak: a forecast can keep nodes or add
them, never remove them by itself.

A forecast knows its own record (`skill`): the rise it adds is scaled by how far the rises it
forecast from the recent samples, judged a short horizon ahead, came true (the least-squares
factor of the rises that came on the rises forecast, after Mincer and Zarnowitz's regression
of outcomes on forecasts, NBER 1969; within [0, 1]). On a steady load the slope is noise and
its rises do not come (the factor falls towards 0); on a ramp they do (towards 1); on a cycle
it overshoots, in between. Before any of its forecasts has been judged (the first minutes
after the controller starts, or with no record kept), the line's own residuals are the only
measure of its noise: the slope is kept in proportion to how far it stands out of them
(`significant`, with `significance`). On a freshly started HBase, two RegionServers' CPU read
1.30, 0.83 and 1.45 node-loads in the first 55 s at a steady 346 requests/s (a cold JVM;
docs/evaluation.md), and the line through them, followed whole, forecast 2.86 and bought two
nodes.

Pure: values in, values out; the decision memory keeps the recent samples.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from decision.demand_cycle import CycleAhead


@dataclass(frozen=True)
class Forecast:
    """What the demand is now and is expected to be `horizon_s` ahead, in node-loads."""

    now: float
    ahead: float
    horizon_s: float
    slope: float  # node-loads per second, the least-squares line of the recent demand
    skill: float = 1.0  # the share of the slope's rise followed (its record, `skill`)
    judged: int = 0  # past forecasts that record rests on
    stands_out: float = 1.0  # the share of the slope kept for standing out of its noise
    cycle: CycleAhead | None = None  # what the last cycle says of the stretch ahead, if known

    @property
    def by_cycle(self) -> bool:
        """Whether the last cycle, not the trend, says where the demand is heading."""
        return self.cycle is not None and self.cycle.demand >= self.ahead

    def with_cycle(self, cycle: CycleAhead | None) -> Forecast:
        """This forecast, at least what the last cycle had over the same stretch ahead."""
        if cycle is None:
            return self
        return replace(self, ahead=max(self.ahead, cycle.demand), cycle=cycle)


@dataclass(frozen=True)
class Recent:
    """The demand measured at the last few decisions, (taken_at, node-loads), oldest first."""

    samples: tuple[tuple[float, float], ...] = ()

    def add(self, at: float, demand: float, window_s: float, keep: int = 128) -> Recent:
        """With one more sample; older than `window_s` before `at`, later than `at` (a clock
        that stepped back) or beyond the last `keep`, dropped."""
        if not np.isfinite(demand) or demand < 0:
            raise ValueError(f"demand must be finite and >= 0, got {demand}")
        kept = tuple(s for s in self.samples if at - window_s <= s[0] < at)
        return Recent((kept + ((at, demand),))[-keep:])

    def peak(self, since: float | None = None) -> float:
        """The most demand of the samples (taken at or after `since`, when given)."""
        return max((d for t, d in self.samples if since is None or t >= since), default=0.0)

    def slope(self, since: float | None = None) -> float:
        """Node-loads per second: the least-squares slope of the samples (at or after `since`);
        0 with fewer than three, or all at one time."""
        return self.line(since)[0]

    def line(self, since: float | None = None) -> tuple[float, float]:
        """The least-squares slope of the samples (at or after `since`) and its standard error
        (the residuals' variance over n - 2 degrees of freedom, over the times' spread); (0, 0)
        with fewer than three, or all at one time."""
        pts = [(t, d) for t, d in self.samples if since is None or t >= since]
        if len(pts) < 3:
            return 0.0, 0.0
        t = np.array([p[0] for p in pts])
        d = np.array([p[1] for p in pts])
        dt = t - t.mean()
        var = float((dt * dt).sum())
        if var <= 0:
            return 0.0, 0.0
        slope = float((dt * (d - d.mean())).sum() / var)
        residual = d - d.mean() - slope * dt
        return slope, math.sqrt(float((residual * residual).sum()) / (len(pts) - 2) / var)

    def gap(self) -> float:
        """The median time between two decisions of the samples (0 with fewer than two)."""
        if len(self.samples) < 2:
            return 0.0
        return float(np.median(np.diff([t for t, _ in self.samples])))


def forecast(recent: Recent, demand_now: float, horizon_s: float, *, window_s: float,
             max_growth: float, persistence_s: float, skill: float = 1.0,
             judged: int = 0, significance: bool = False) -> Forecast:
    """Demand `horizon_s` ahead along the damped slope of the last `window_s` of `recent`
    (which should end with the sample of now), its rise scaled by `skill`, within
    [0, demand_now x (1 + max_growth)]; with `significance` and no forecast `judged` yet, its
    rise kept as far as the slope stands out of its standard error (`significant`)."""
    now = recent.samples[-1][0] if recent.samples else 0.0
    if significance and judged == 0:
        slope, error = recent.line(since=now - window_s)
        kept = significant(slope, error)
    else:  # skill() calls this once per judged sample: no residuals it does not use
        slope, kept = recent.slope(since=now - window_s), 1.0
    latter = now - window_s / 2
    if slope > 0 and sum(1 for t, _ in recent.samples if t >= latter) >= 3:
        # A rise is followed only while it lasts. A level shift (a tenant arriving, a crowd
        # landing) draws a steep line through the window for window_s after demand stopped
        # rising; a ramp's latter half rises as steeply as the whole window.
        slope = min(slope, max(recent.slope(since=latter), 0.0))
    h = max(horizon_s, 0.0)
    reach = persistence_s * (1.0 - math.exp(-h / persistence_s)) if persistence_s > 0 else h
    ahead = demand_now + kept * skill * slope * reach
    ahead = min(max(ahead, 0.0), demand_now * (1.0 + max_growth))
    return Forecast(now=demand_now, ahead=ahead, horizon_s=horizon_s, slope=slope, skill=skill,
                    judged=judged, stands_out=kept)


def significant(slope: float, error: float) -> float:
    """The share of a slope worth following given its standard error: max(0, 1 - (error /
    slope)^2), the positive-part James-Stein factor for one estimate (Efron & Morris, "Stein's
    estimation rule and its competitors", JASA 68(341), 1973). A line through a few noisy
    samples (t = slope / error about 1 or less) is followed not at all; a ramp's (t of 3 or
    more) nearly in full. 1 for a line with no error, 0 for no slope."""
    if error >= abs(slope):
        return 0.0
    return 1.0 - (error / slope) ** 2


MIN_JUDGED = 0.05  # node-loads: below it a relative rise is noise over nearly nothing


def skill(recent: Recent, horizon_s: float, *, window_s: float, max_growth: float,
          persistence_s: float, since: float, prior_rise: float,
          held: tuple[float, float] | None = None) -> tuple[float, int]:
    """How far the forecast's rises came true, and how many forecasts that rests on.

    Every sample of `recent` taken at or after `since` and at least `horizon_s` before the last
    is a forecast judged: what `forecast` said from the samples up to it (f, its rise over the
    demand then, relative) against the demand that came `horizon_s` later (a, relative). The
    factor is the least-squares slope of a on f through the origin, (sum f a + p^2) / (sum f^2
    + p^2), within [0, 1]: p, `prior_rise`, weighs in one forecast of that rise that came true
    in full, so that a few judged forecasts cannot silence the slope and none leaves it whole.
    Relative rises weigh a small cluster's forecasts as a large one's. The forecasts made
    within `held` (a scale-in's plan: its moves take regions offline and its clients wait, so
    the demand it measured dipped) are not judged: a ramp right after it would find their
    falls wrong and silence its own slope."""
    samples = recent.samples
    if len(samples) < 2 or horizon_s <= 0:
        return 1.0, 0
    last = samples[-1][0]
    times = np.array([t for t, _ in samples])
    levels = np.array([d for _, d in samples])
    fa = ff = 0.0
    judged = 0
    for i, (t, d) in enumerate(samples):
        if t < since or d < MIN_JUDGED or t + horizon_s > last or (
                held is not None and held[0] < t <= held[1]):
            continue
        said = forecast(Recent(samples[:i + 1]), d, horizon_s, window_s=window_s,
                        max_growth=max_growth, persistence_s=persistence_s)
        f = (said.ahead - d) / d
        a = (float(np.interp(t + horizon_s, times, levels)) - d) / d  # linear between samples
        fa, ff, judged = fa + f * a, ff + f * f, judged + 1
    p2 = prior_rise * prior_rise
    if ff + p2 <= 0:
        return 1.0, judged
    return min(max((fa + p2) / (ff + p2), 0.0), 1.0), judged


__all__ = ["Forecast", "Recent", "forecast", "skill"]
