"""Open-loop arrivals: each open workload's rate schedule (scenario `rate:`) evaluated over time,
its seeded noise, and the Poisson number of requests that arrive in each step.

Every stream has its own generator (PCG64 seeded by the scenario's seed, or the rate's
`noise_seed`, and the workload's index), apart from the store's: closed-loop scenarios draw
exactly what they drew before open workloads existed.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from simulator.scenario import (
    ConstantRate, DailyRate, PointsRate, RampRate, SpikeRate, StepsRate, Workload,
)

_NOISE, _POISSON = 1, 2  # stream tags in the seed sequences


def rate_at(spec, t: np.ndarray) -> np.ndarray:
    """The scheduled rate (ops/s, no noise) at times t (s)."""
    t = np.asarray(t, dtype=float)
    if isinstance(spec, (tuple, PointsRate)):  # a bare list of [t_s, ops_per_s] points, or shape: points
        pts = np.asarray(spec if isinstance(spec, tuple) else spec.points, dtype=float)
        return np.interp(t, pts[:, 0], pts[:, 1])
    if isinstance(spec, ConstantRate):
        return np.full(t.shape, spec.ops_per_s)
    if isinstance(spec, RampRate):
        frac = np.clip((t - spec.start_s) / (spec.end_s - spec.start_s), 0.0, 1.0)
        return spec.from_ops_per_s + (spec.to_ops_per_s - spec.from_ops_per_s) * frac
    if isinstance(spec, StepsRate):
        pts = np.asarray(spec.steps, dtype=float)
        i = np.clip(np.searchsorted(pts[:, 0], t, side="right") - 1, 0, len(pts) - 1)
        return pts[i, 1]
    if isinstance(spec, DailyRate):
        wave = np.sin(2.0 * math.pi * (t - spec.phase_s) / spec.period_s)
        return spec.mean_ops_per_s * (1.0 + spec.amplitude * wave)
    if isinstance(spec, SpikeRate):
        up = np.clip((t - spec.at_s) / spec.ramp_s, 0.0, 1.0) if spec.ramp_s > 0 else (t >= spec.at_s) * 1.0
        end = spec.at_s + spec.ramp_s + spec.duration_s
        down = np.clip((t - end) / spec.ramp_s, 0.0, 1.0) if spec.ramp_s > 0 else (t >= end) * 1.0
        return spec.base_ops_per_s + (spec.peak_ops_per_s - spec.base_ops_per_s) * (up - down)
    raise TypeError(f"not a rate schedule: {spec!r}")


class _Noise:
    """Lognormal factors with mean 1 and relative standard deviation sigma, one per interval,
    drawn in order as time advances (so a run is the same however it is stepped)."""

    def __init__(self, sigma: float, interval_s: float, seed: int, index: int):
        self.interval_s = interval_s
        # lognormal with E = 1 and sd/E = sigma: s² = ln(1 + sigma²), mu = −s²/2
        self.s = math.sqrt(math.log1p(sigma * sigma))
        self.rng = np.random.Generator(np.random.PCG64([seed, index, _NOISE]))
        self.factors = np.zeros(0)

    def at(self, t: np.ndarray) -> np.ndarray:
        i = np.maximum((np.asarray(t, dtype=float) // self.interval_s).astype(int), 0)
        need = int(i.max()) + 1 if i.size else 0
        if need > len(self.factors):
            more = self.rng.normal(-self.s * self.s / 2.0, self.s, need - len(self.factors) + 64)
            self.factors = np.concatenate([self.factors, np.exp(more)])
        return self.factors[i]


class Arrivals:
    """Per workload (index = workload): the offered rate and the requests that arrive in a
    step. Closed-loop workloads offer nothing here (their clients wait for answers)."""

    def __init__(self, workloads: Sequence[Workload], seed: int):
        self.workloads = tuple(workloads)
        self.open = np.array([w.open_loop for w in workloads], dtype=bool)
        self.timeout_s = np.array([w.timeout_ms / 1000.0 for w in workloads])
        self._noise: dict[int, _Noise] = {}
        self._poisson: dict[int, np.random.Generator] = {}
        for i, w in enumerate(workloads):
            if w.rate is None:
                continue
            self._poisson[i] = np.random.Generator(np.random.PCG64([seed, i, _POISSON]))
            sigma = getattr(w.rate, "noise", 0.0)
            if sigma > 0:
                own = w.rate.noise_seed  # type: ignore[union-attr]
                self._noise[i] = _Noise(sigma, w.rate.noise_interval_s,  # type: ignore[union-attr]
                                        seed if own is None else own, i)

    def rate(self, i: int, t: np.ndarray) -> np.ndarray:
        """Workload i's offered rate at times t (ops/s), its noise included; 0 while it is
        switched off (start_s, stop_s) or closed loop."""
        w = self.workloads[i]
        t = np.asarray(t, dtype=float)
        if w.rate is None:
            return np.zeros(t.shape)
        on = (t >= w.start_s) & ((t < w.stop_s) if w.stop_s is not None else True)
        lam = rate_at(w.rate, t) * on
        if i in self._noise:
            lam = lam * self._noise[i].at(t)
        return lam

    def mean_rates(self, t0: float, t1: float, step_s: float = 1.0) -> np.ndarray:
        """Each workload's mean offered rate over [t0, t1) (ops/s), sampled every step_s."""
        n = max(1, int(round((t1 - t0) / step_s)))
        t = t0 + (np.arange(n) + 0.5) * (t1 - t0) / n
        return np.array([float(self.rate(i, t).mean()) for i in range(len(self.workloads))])

    def step(self, t: float, dt: float) -> np.ndarray:
        """Requests of each workload arriving in [t, t + dt): Poisson with the rate at the
        step's middle (the step's mean rate wherever the schedule is linear over the step)."""
        out = np.zeros(len(self.workloads))
        mid = np.array([t + dt / 2.0])
        for i, rng in self._poisson.items():
            lam = float(self.rate(i, mid)[0]) * dt
            out[i] = float(rng.poisson(lam)) if lam > 0 else 0.0
        return out
