"""The demand's cycle: the demand recorded at fixed steps, the period it repeats with (given by
the operator, or found in the record), and what the last cycle says the demand will reach over
the next lead time.

A load with a cycle (a day's peaks, reports every twenty minutes, a weekly batch) rises at the
same time of each cycle. A trend sees such a rise only once it has begun, a scale-out's lead time
(~6 minutes) too late; the last cycle saw it coming. The forecast the default policy sizes from
is therefore the larger of the trend's (decision/forecast.py) and the most demand the last cycle
had over the same stretch ahead, scaled down when the demand now is lower than at the same time
of the last cycle (a weekend after a week; never up: growth beyond the last cycle is the trend's
to follow). It only ever raises the forecast: it adds nodes ahead of a peak and keeps them
through it, and never removes one by itself.

A period is found, not assumed: the last whole period of the record must repeat the one before
it, step by step, to within `match` of its own spread (the root mean square of the two periods'
differences over the standard deviation of the last: a flat, noisy load reads about 1.4, a ramp
or a decline over 3, a repeating cycle under its noise over its swing), and swing by at least
`swing` of its mean (a steady load has no cycle worth following). The smallest such period
whose mismatch is within a quarter of the best is taken, so a cycle is not read as twice its
length. A load's first cycle is never predicted: it has to happen twice to be found (or the
operator says how long it is, `policy.prediction.cycle_s`).

Pure: values in, values out; the decision memory keeps the record (rules/demand_memory.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

MISSING = -1.0  # a step no decision fell in (the daemon was down): never read as demand
MAX_STEPS = 1024  # the most steps a record keeps (each is a key of the decision memory)


@dataclass(frozen=True)
class DemandRecord:
    """The demand (node-loads) at fixed steps of `step_s`: values[i] is the most demand any
    decision measured in [start_at + i x step_s, start_at + (i + 1) x step_s); MISSING where
    none did. Oldest first."""

    step_s: float = 30.0
    start_at: float | None = None
    values: tuple[float, ...] = ()

    def add(self, at: float, demand: float, keep_s: float) -> DemandRecord:
        """With the demand measured at `at`, keeping the last `keep_s` (at most MAX_STEPS
        steps). A clock that stepped back, or a gap longer than what is kept, starts afresh."""
        if not (math.isfinite(demand) and demand >= 0 and math.isfinite(at)):
            raise ValueError(f"demand must be finite and >= 0 at a finite time, got {demand} at {at}")
        keep = max(1, min(MAX_STEPS, int(keep_s // self.step_s) + 1))
        if self.start_at is None or not self.values:
            return replace(self, start_at=math.floor(at / self.step_s) * self.step_s, values=(demand,))
        i = int((at - self.start_at) // self.step_s)
        if i < len(self.values) - 1 or i - len(self.values) >= keep:
            return DemandRecord(self.step_s).add(at, demand, keep_s)
        values = list(self.values)
        if i == len(values) - 1:
            values[-1] = max(values[-1], demand)
        else:
            values += [MISSING] * (i - len(values)) + [demand]
        drop = max(0, len(values) - keep)
        return replace(self, start_at=self.start_at + drop * self.step_s,
                       values=tuple(values[drop:]))

    def array(self) -> np.ndarray:
        """The values, NaN where MISSING."""
        a = np.asarray(self.values, dtype=float)
        return np.where(a < 0, np.nan, a)


@dataclass(frozen=True)
class CycleFound:
    period_s: float
    mismatch: float  # rms of the last two periods' difference over the last one's spread


def find_period(record: DemandRecord, *, min_s: float, max_s: float, match: float,
                swing: float) -> CycleFound | None:
    """The period (a whole number of steps in [min_s, max_s]) the record's last two periods
    repeat with, within `match`, swinging by `swing` of their mean; None when none does."""
    x = record.array()
    lo = max(2, math.ceil(min_s / record.step_s - 1e-9))
    hi = min(int(max_s // record.step_s), len(x) // 2)
    found: list[tuple[int, float]] = []
    for lag in range(lo, hi + 1):
        last, before = x[-lag:], x[-2 * lag:-lag]
        seen = np.isfinite(last) & np.isfinite(before)
        if seen.sum() < max(3, 0.8 * lag):
            continue
        a, b = last[seen], before[seen]
        mean, spread = float(a.mean()), float(a.std())
        if mean <= 0 or spread <= 0 or float(a.max() - a.min()) < swing * mean:
            continue
        mismatch = float(np.sqrt(np.mean((a - b) ** 2))) / spread
        if mismatch <= match:
            found.append((lag, mismatch))
    if not found:
        return None
    best = min(m for _, m in found)
    lag, mismatch = next((lag, m) for lag, m in found if m <= best * 1.25)
    return CycleFound(lag * record.step_s, mismatch)


@dataclass(frozen=True)
class CycleAhead:
    """What the last cycle says of the stretch ahead."""

    period_s: float
    demand: float   # the most demand over the stretch ahead, as the last cycle had it x level
    level: float    # the demand now over the same time of the last cycle, within [0.5, 1]
    found: bool     # found in the record (False: the period the operator gave)

    def words(self) -> str:
        return (f"the last cycle ({self.period_s:,.0f} s, "
                f"{'found in the demand' if self.found else 'prediction.cycle_s'})")


def last_cycle_ahead(record: DemandRecord, now: float, period_s: float, horizon_s: float,
                     level_window_s: float, *, found: bool = False) -> CycleAhead | None:
    """The most demand of the last cycle over [now, now + horizon_s] shifted back one period,
    scaled by the demand of the last `level_window_s` over the same stretch of the last cycle
    when that is lower (at most halved); None while the record does not reach that far back."""
    start = record.start_at
    if start is None or period_s <= 0 or not record.values:
        return None
    x = record.array()

    def steps(since: float, until: float) -> np.ndarray:
        first = max(0, int((since - start) // record.step_s))
        last = int((until - start) // record.step_s)
        if last < 0 or first >= len(x):
            return np.empty(0)
        part = x[first:last + 1]
        return part[np.isfinite(part)]

    ahead = steps(now - period_s, now - period_s + horizon_s)
    if ahead.size == 0:
        return None
    then = steps(now - period_s - level_window_s, now - period_s)
    recent = steps(now - level_window_s, now)
    level = 1.0
    if then.size and recent.size and float(then.mean()) > 0:
        level = min(1.0, max(0.5, float(recent.mean()) / float(then.mean())))
    return CycleAhead(period_s, float(ahead.max()) * level, level, found)


__all__ = ["DemandRecord", "CycleFound", "CycleAhead", "find_period", "last_cycle_ahead",
           "MISSING", "MAX_STEPS"]
