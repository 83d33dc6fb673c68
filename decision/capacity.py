"""Node capacity, learned online from what the Monitor sees: per node profile, the CPU one
request of each class costs (gets, mutations, scans) and the time a request takes on an idle
node, and from them how busy a node may run while its requests stay within the SLO.

Cost per request class: the nodes' CPU (fraction of the node) is regressed on the requests per
second each serves, by class, by exponentially weighted least squares (half-life `half_life_s`
of the snapshots' clock: the mix and the code change slowly), with a ridge prior that pulls
every class to the pooled cost (CPU over all requests) where the data cannot tell them apart
(a cluster that only served gets says nothing of scans), and no negative cost. A saturated
node is a good sample: it shows the most it serves.

Service time: a node's mean request time (rpc_latency_ms) at utilisation u is read as an
M/M/1 station's, L = s / (1 - u), so s = L (1 - u); the profile keeps the fastest quarter of
its nodes (one slow node, a hot partition or a cold cache, does not make every node slow),
taken at once when lower than the one learned and followed slowly when higher (what a request
takes beyond its service passes: a fresh JVM, cold caches, a quota's stops); nothing is
learned while caches warm after a plan nor from a node over the latency objective (the
caller's call: rules/measure.py).

How busy a node may run: the M/M/1 sojourn time is exponential, so its 99th percentile is
s ln(100) / (1 - u) (Kleinrock, Queueing Systems I, §3.2). The smallest size whose predicted
p99 stays under the SLO with headroom h runs each node at most at
u_max = 1 - ln(100) s / (slo x (1 - h)), never above `max_utilisation` (CPU close to 1 leaves
no room for the monitor's lag) nor under `min_utilisation` (a node that only idles is no
capacity at all). M/M/1 is the cautious case: a node's cores serve in parallel (M/M/c waits
less), which the cap at max_utilisation leaves to spare.

Pure: arrays and dataclasses in, dataclasses out; the decision memory keeps `Learned`.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

CLASSES = ("reads", "writes", "scans")
P99_FACTOR = math.log(100.0)  # an exponential sojourn time's 99th percentile over its mean
SCALE = 1000.0  # requests are regressed in thousands per second (well-conditioned sums)


@dataclass(frozen=True)
class Learned:
    """What one profile's nodes taught so far (all sums exponentially weighted)."""

    xx: tuple[float, ...] = (0.0,) * 6   # upper triangle of sum w x x^T, x = k requests/s
    xy: tuple[float, float, float] = (0.0, 0.0, 0.0)  # sum w x cpu
    yy: float = 0.0                      # sum w cpu^2 (for the fit's error)
    weight: float = 0.0                  # sum w (samples, decayed)
    service_ms: float | None = None      # least seen of the fastest quarter of L (1 - u)
    at: float | None = None              # taken_at of the last update


@dataclass(frozen=True)
class Sample:
    """One active node as a snapshot shows it."""

    profile: str
    reads: float
    writes: float
    scans: float
    cpu: float
    latency_ms: float | None = None
    queued: bool = False  # requests wait in its call queue: its latency is not a service time


@dataclass(frozen=True)
class Capacity:
    """A profile's capacity as the policy uses it."""

    cost: tuple[float, float, float]  # CPU (fraction of a node) per request/s: gets, mutations, scans
    service_ms: float | None          # request time on an idle node, ms (None: no latency seen)
    max_utilisation: float            # the most a node may run with p99 inside the SLO

    def requests(self, mix: tuple[float, float, float]) -> float:
        """Requests/s a node serves at max_utilisation for a mix (shares of gets, mutations,
        scans summing to 1)."""
        per = sum(c * m for c, m in zip(self.cost, mix))
        return self.max_utilisation / per if per > 0 else math.inf

    def words(self, profile: str) -> str:
        get, put, scan = (f"{1.0 / c:,.0f}" if c > 0 else "n/a" for c in self.cost)
        s = f", {self.service_ms:.1f} ms a request idle" if self.service_ms is not None else ""
        return (f"a {profile} node serves {get} gets/s, {put} mutations/s or {scan} scans/s "
                f"at full CPU{s}; runs up to {self.max_utilisation:.0%} CPU within the SLO")


def _decay(dt: float, half_life_s: float) -> float:
    return math.exp(-max(dt, 0.0) * math.log(2.0) / half_life_s) if half_life_s > 0 else 0.0


def _sym(xx: tuple[float, ...]) -> np.ndarray:
    a, b, c, d, e, f = xx
    return np.array([[a, b, c], [b, d, e], [c, e, f]])


def learn(prev: Learned | None, samples: list[Sample], at: float, *, half_life_s: float) -> Learned:
    """`prev` after one snapshot's nodes of one profile (samples serving nothing teach nothing
    about cost; those with a latency and no queue teach the service time)."""
    prev = prev or Learned()
    keep = _decay(at - prev.at, half_life_s) if prev.at is not None else 1.0
    xx = _sym(prev.xx) * keep
    xy = np.array(prev.xy) * keep
    yy, weight = prev.yy * keep, prev.weight * keep
    services: list[float] = []
    for s in samples:
        x = np.array([s.reads, s.writes, s.scans]) / SCALE
        if not (np.all(np.isfinite(x)) and math.isfinite(s.cpu)) or x.sum() <= 0:
            continue
        xx += np.outer(x, x)
        xy += x * s.cpu
        yy += s.cpu * s.cpu
        weight += 1.0
        if s.latency_ms is not None and math.isfinite(s.latency_ms) and s.latency_ms > 0 \
                and not s.queued and s.cpu < 0.9:
            services.append(s.latency_ms * (1.0 - s.cpu))
    service = prev.service_ms
    if services:
        # the fastest quarter of the nodes: a slow node is a hot partition or a cold cache,
        # which placement fixes, not what a request costs the profile
        now = float(np.percentile(services, 25))
        # A request's time on an idle node is the least it is seen to take: what comes on top
        # (a JVM compiling, cold caches, a quota's stops) passes, so a lower reading is taken
        # at once and a higher one only slowly. Taken first at a fresh cluster's start, 9.5 ms
        # stood for ten minutes (nothing is learned while plans run) where 0.5-0.9 ms held
        # after: a node might run at 45 % of its CPU and three plans bought six RegionServers
        # where three carry the load (quota'd HBase, 2026-12-08, docs/evaluation.md).
        service = now if service is None or now < service else service + 0.1 * (now - service)
    return Learned(xx=(xx[0, 0], xx[0, 1], xx[0, 2], xx[1, 1], xx[1, 2], xx[2, 2]),
                   xy=(float(xy[0]), float(xy[1]), float(xy[2])), yy=yy, weight=weight,
                   service_ms=service, at=at)


def costs(learned: Learned, ridge: float = 0.01) -> tuple[float, float, float] | None:
    """CPU per request/s of each class (non-negative least squares with a ridge prior towards
    the pooled cost, each class's pull in proportion to how much of it was seen, plus a
    whisper that pins a class never seen to the pooled cost); None before any node served
    anything."""
    xx, xy = _sym(learned.xx), np.array(learned.xy)
    total = xx.sum()  # sum w (sum x)^2
    if learned.weight <= 0 or total <= 0:
        return None
    pooled = max(float(xy.sum() / total), 0.0)  # cpu per (k requests/s) over all classes
    lam = np.diag(ridge * np.diag(xx) + 1e-6 * float(np.trace(xx)) / 3.0 + 1e-15)
    prior = np.full(3, pooled)
    best: np.ndarray | None = None
    best_err = math.inf
    # Non-negative: solve on every set of free classes (3 classes: 7 sets), keep the best fit.
    for k in range(1, 4):
        for free in itertools.combinations(range(3), k):
            idx = list(free)
            a = xx[np.ix_(idx, idx)] + lam[np.ix_(idx, idx)]
            b = xy[idx] + lam[np.ix_(idx, idx)] @ prior[idx]
            try:
                sol = np.linalg.solve(a, b)
            except np.linalg.LinAlgError:
                continue
            if np.any(sol < 0):
                continue
            c = np.zeros(3)
            c[idx] = sol
            err = float(c @ xx @ c - 2 * c @ xy + (c - prior) @ lam @ (c - prior))
            if err < best_err:
                best, best_err = c, err
    if best is None:
        best = prior
    return (float(best[0] / SCALE), float(best[1] / SCALE), float(best[2] / SCALE))


def max_utilisation(service_ms: float | None, slo_ms: float | None, headroom: float, *,
                    ceiling: float, floor: float) -> float:
    """The utilisation at which a node's predicted p99 (M/M/1: ln(100) s / (1 - u)) reaches
    slo x (1 - headroom), within [floor, ceiling]; the ceiling when either is unknown."""
    if service_ms is None or slo_ms is None or service_ms <= 0:
        return ceiling
    u = 1.0 - P99_FACTOR * service_ms / (slo_ms * (1.0 - headroom))
    return min(ceiling, max(floor, u))


def predicted_p99_ms(service_ms: float, utilisation: float) -> float:
    """A node's predicted 99th-percentile request time at `utilisation` (inf at or above 1)."""
    return P99_FACTOR * service_ms / (1.0 - utilisation) if utilisation < 1.0 else math.inf


def capacity(learned: Learned | None, slo_ms: float | None, headroom: float, *, ceiling: float,
             floor: float) -> Capacity | None:
    """A profile's capacity from what it learned; None before it learned any cost."""
    if learned is None:
        return None
    c = costs(learned)
    if c is None:
        return None
    return Capacity(c, learned.service_ms,
                    max_utilisation(learned.service_ms, slo_ms, headroom, ceiling=ceiling, floor=floor))


def learn_all(prev: Mapping[str, Learned], samples: list[Sample], at: float, *,
              half_life_s: float) -> dict[str, Learned]:
    """Every profile's `Learned` after one snapshot (profiles without a node now keep theirs)."""
    out = dict(prev)
    for profile in sorted({s.profile for s in samples}):
        out[profile] = learn(prev.get(profile), [s for s in samples if s.profile == profile], at,
                             half_life_s=half_life_s)
    return out


def forget_before(learned: Learned, at: float) -> Learned:
    """`learned` with its clock set to `at` (a restored memory whose clock ran ahead)."""
    return replace(learned, at=min(learned.at, at) if learned.at is not None else None)


__all__ = ["Learned", "Sample", "Capacity", "CLASSES", "P99_FACTOR", "learn", "learn_all",
           "costs", "capacity", "max_utilisation", "predicted_p99_ms", "forget_before"]
