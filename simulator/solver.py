"""The queueing network, solved: pure functions over numpy arrays (no cluster, no state).

Closed classes (YCSB threads) are solved with Schweitzer's approximate Mean Value Analysis:
throughput X_c = min(target_c, N_c / (Z_c + Σ_s R_cs)), residence R_cs = D_cs (1 + Q_s −
Q_cs / N_c) (Lazowska et al., "Quantitative System Performance", 1984, §6.4.2). A station with
m servers is a queue with demand D/m plus a delay D(m−1)/m (Seidmann, Schweitzer and
Shalev-Oren, 1987).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

import numpy as np
from scipy.special import gammaincc

MVA_MAX_ITERATIONS = 200
MVA_TOLERANCE = 1e-3  # customers, on every queue length (convergence of the fixed point)


def seidmann(D: np.ndarray, servers: float) -> tuple[np.ndarray, np.ndarray]:
    """A station of `servers` identical servers as (queueing demand, delay per row): D/m
    queues, D(m−1)/m is spent as if no one else were there."""
    return D / servers, (D * (servers - 1) / servers).sum(axis=1)


@dataclass(frozen=True)
class ClosedSolution:
    x: np.ndarray  # (classes,) throughput, ops/s
    R: np.ndarray  # (classes, stations) residence per request, ms
    q: np.ndarray  # (classes, stations) mean customers (the next solve starts from it)
    response_ms: np.ndarray  # (classes,) Z + Σ R, 0 for inactive classes


def closed_mva(Dq: np.ndarray, Z: np.ndarray, N: np.ndarray, target: np.ndarray,
               active: np.ndarray, q0: np.ndarray | None = None) -> ClosedSolution:
    """Schweitzer's approximate MVA with damped updates (converges for heavily loaded
    stations). Dq: (classes, stations) queueing demand per request, ms; Z: (classes,) delay,
    ms; N: customers per class; target: throughput cap per class (inf: none); active: which
    classes run; q0: queue lengths to start from (the last step's), zeros if None."""
    nw = Dq.shape[0]
    q = q0 if q0 is not None else np.zeros(Dq.shape)
    x = np.zeros(nw)
    R = Dq.copy()
    for it in range(MVA_MAX_ITERATIONS):
        qtot = q.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            own = np.where(N[:, None] > 0, q / np.maximum(N[:, None], 1e-12), 0.0)
        R = Dq * (1.0 + qtot[None, :] - own)
        resp = Z + R.sum(axis=1)  # ms
        x_new = np.where(active, np.minimum(target, N / np.maximum(resp, 1e-9) * 1000.0), 0.0)
        q_new = x_new[:, None] * R / 1000.0
        # damped update: converges for heavily loaded stations
        q_next = 0.5 * q + 0.5 * q_new
        if np.max(np.abs(q_next - q)) < MVA_TOLERANCE and it > 2:
            q = q_next
            x = x_new
            break
        q = q_next
        x = x_new
    resp = Z + R.sum(axis=1)
    return ClosedSolution(x, R, q, np.where(active, resp, 0.0))


def utilisation(x: np.ndarray, D: np.ndarray, background: np.ndarray, servers: float) -> np.ndarray:
    """Busy share of each station (columns of D, the demand stretched by the background share
    the station gives away; background per station): the requests' work plus the
    background's, capped at 1."""
    work = (x[:, None] * D * (1.0 - background[None, :])).sum(axis=0) / 1000.0 / servers
    return np.minimum(work + background, 1.0)


# ---------------------------------------------------------------- open classes

# Utilisation at which the M/M/c formulas are evaluated at most: at 1 they diverge, and a
# station that busy is in the fluid regime for open traffic (fluid_queues). Assumption.
RHO_MAX = 0.999
# Largest share of a station that open traffic is taken to hold when closed classes are
# slowed by it (mixed_inflation): closed clients keep a trickle even behind a saturating
# open load, as YCSB threads in the same FIFO call queue would. Assumption.
OPEN_SHARE_MAX = 0.99


def erlang_c(servers: np.ndarray, utilisation: np.ndarray) -> np.ndarray:
    """Probability that an arrival waits in an M/M/c queue (Erlang's C formula) with `servers`
    servers at utilisation ρ < 1, by the numerically stable Erlang-B recursion
    B_0 = 1, B_k = a·B_{k−1} / (k + a·B_{k−1}) with a = c·ρ, then C = B_c / (1 − ρ (1 − B_c))
    (e.g. Kleinrock, "Queueing Systems", vol. 1, 1975, §3.5; Harchol-Balter, "Performance
    Modeling and Design of Computer Systems", 2013, ch. 14). c = 1 gives C = ρ (M/M/1)."""
    c = np.asarray(servers, dtype=float)
    rho = np.clip(np.asarray(utilisation, dtype=float), 0.0, RHO_MAX)
    c, rho = np.broadcast_arrays(c, rho)
    a = c * rho
    b = np.ones(a.shape)
    for k in range(1, int(c.max(initial=1)) + 1):
        step = a * b / (k + a * b)
        b = np.where(k <= c, step, b)
    return b / (1.0 - rho * (1.0 - b))


def station_wait(servers: np.ndarray, utilisation: np.ndarray, service_ms: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """M/M/c waiting time at each station: (P(W > 0), E[W] in ms). The wait is 0 with
    probability 1 − C and exponential with rate θ = c(1 − ρ)/S otherwise, so
    P(W > t) = C·e^{−θt} and E[W] = C/θ (the same sources as erlang_c)."""
    c = np.asarray(servers, dtype=float)
    rho = np.clip(np.asarray(utilisation, dtype=float), 0.0, RHO_MAX)
    p = erlang_c(c, rho)
    return p, p * np.asarray(service_ms, dtype=float) / (c * (1.0 - rho))


def mixed_inflation(open_share: np.ndarray) -> np.ndarray:
    """Factor on closed classes' queueing demand at a station where open traffic holds
    `open_share` of the capacity: 1 / (1 − U_open) (Lazowska et al., "Quantitative System
    Performance", 1984, §7.4, mixed networks: the closed classes are solved on stations
    slowed by the open classes' utilisation; open throughput is its arrival rate)."""
    return 1.0 / (1.0 - np.clip(open_share, 0.0, OPEN_SHARE_MAX))


@dataclass(frozen=True)
class FluidStep:
    """One step of the open classes' queues, one FIFO per node (rows = classes, columns = nodes)."""

    served: np.ndarray  # requests answered in the step
    failed: np.ndarray  # requests that waited longer than their class's timeout
    backlog: np.ndarray  # requests still waiting at the end of the step
    wait_start_s: np.ndarray  # (nodes,) what a request arriving at the step's start waits
    wait_end_s: np.ndarray  # (nodes,) ... at its end (before the timeout sheds requests)
    saturated: np.ndarray  # (nodes, stations) the station could not serve all it was asked


def fluid_queues(backlog: np.ndarray, arrivals: np.ndarray, work_ms: np.ndarray,
                 capacity_ms: np.ndarray, dt: float, timeout_s: np.ndarray) -> FluidStep:
    """Advance every node's queue of open requests by dt as a fluid.

    backlog, arrivals: (classes, nodes) requests; work_ms: (classes, nodes, stations) work one
    request of the class asks of each of the node's stations; capacity_ms: (nodes, stations)
    work the stations can give open requests in dt; timeout_s: (classes,).

    Each node serves the same share f of everything queued at it (its backlog and the step's
    arrivals), the share its bottleneck station can do: f = min(1, min_s capacity_s / asked_s).
    Below saturation the queue empties within the step (f = 1; M/M/c gives the waits); at or
    above it the backlog carries over: backlog += (arrivals − served), served = capacity·dt.
    A request arriving at the end of the step waits (1 − f)/f · dt (what remains over what the
    node serves per second); requests of a class whose timeout is shorter than that wait fail,
    the oldest first: the class keeps timeout/wait of what remains (a fluid queue whose
    patience is deterministic holds at most rate · patience; e.g. Whitt, "Fluid models for
    multiserver queues with abandonments", Operations Research 54(1), 2006)."""
    queued = backlog + arrivals
    asked = np.einsum("oks,ok->ks", work_ms, queued)
    held = np.einsum("oks,ok->ks", work_ms, backlog)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        share = np.where(asked > 0, np.minimum(1.0, capacity_ms / asked), 1.0)
        per_s = capacity_ms / dt
        wait_start = np.where(held > 0, held / per_s, 0.0).max(axis=1, initial=0.0)
    f = share.min(axis=1, initial=1.0)
    served = queued * f[None, :]
    remaining = queued - served
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        wait_end = np.where(remaining.sum(axis=0) > 0, np.where(f > 0, (1.0 - f) / f * dt, np.inf), 0.0)
        keep = np.where(wait_end[None, :] > timeout_s[:, None],
                        timeout_s[:, None] / wait_end[None, :], 1.0)
    left = remaining * keep
    return FluidStep(served, remaining - left, left, np.nan_to_num(wait_start, posinf=np.inf),
                     wait_end, share < 1.0)


def offline_wait(arrivals: np.ndarray, until_open_s: np.ndarray, dt: float, timeout_s: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Requests for a region that is offline wait until it opens (`until_open_s` after the
    step's start). Arriving evenly over the step, a request waits between u − dt and u; those
    that would wait longer than the timeout fail. Returns (answered, failed, shortest and
    longest wait of the answered, s); all per entry."""
    u = np.maximum(until_open_s, 0.0)
    fail_share = np.clip((u - timeout_s) / dt, 0.0, 1.0)
    failed = arrivals * fail_share
    lo = np.maximum(u - dt, 0.0)
    hi = np.minimum(u, timeout_s)
    return arrivals - failed, failed, np.minimum(lo, hi), hi


def _sum_of_waits_survival(x: np.ndarray, p1: np.ndarray, th1: np.ndarray, p2: np.ndarray,
                           th2: np.ndarray) -> np.ndarray:
    """P(W1 + W2 > x) for independent waits W_i = 0 w.p. 1 − p_i, Exp(θ_i) w.p. p_i
    (x >= 0): the two single terms plus, when both wait, the hypoexponential survival
    (θ2 e^{−θ1 x} − θ1 e^{−θ2 x}) / (θ2 − θ1), or (1 + θx) e^{−θx} when θ1 = θ2."""
    e1, e2 = np.exp(-th1 * x), np.exp(-th2 * x)
    single = p1 * (1.0 - p2) * e1 + p2 * (1.0 - p1) * e2
    both = p1 * p2
    if not np.any(both > 0):
        return single
    close = np.abs(th2 - th1) <= 1e-9 * np.maximum(th1, th2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        hypo = np.where(close, (1.0 + th1 * x) * e1, (th2 * e1 - th1 * e2) / (th2 - th1))
    return single + both * np.clip(np.where(np.isnan(hypo), 0.0, hypo), 0.0, 1.0)


def astuple(mix: "LatencyMix") -> tuple[np.ndarray, ...]:
    """The mixture's arrays and numbers (a missing one as an empty array), to compare two mixtures."""
    return tuple(np.zeros(0) if getattr(mix, f.name) is None else np.atleast_1d(getattr(mix, f.name))
                 for f in fields(mix))


THROTTLE_POINTS = 16  # quadrature points over where in its period a throttled node is met


def throttled_wait_survival(x: np.ndarray, wait_survival: Callable[[np.ndarray], np.ndarray], busy: np.ndarray, period_ms: float,
                            run_share: float) -> np.ndarray:
    """P(T > x) for the wait T of a request at a node whose CPU runs under a control-group quota
    (CFS bandwidth control: a group that has spent its quota of a period is stopped until the
    next one begins), given the wait W the node would have were its capacity spread evenly
    over time (`wait_survival`, the model's wait at a node of the quota's speed).

    Within a period the node runs at full speed, `run_share` of the period's length for the
    whole quota (quota / the cores it bursts on), so work that takes W evenly takes run_share·W;
    work that does not fit in what is left of the period's quota waits for the next period,
    each crossing adding the stop, (1 − run_share)·period. A request that finds the share φ of
    its node's quota spent crosses m times, m the number of k >= 1 with W >= (k − φ)·period:
    T = run_share·W + m·(1 − run_share)·period. φ is taken uniform over [0, busy], busy the
    share of the quota the node uses (fluid: the quota is spent evenly over the period). At
    busy = 1 the expectation of T is W's (a randomised rounding to periods); below it T is
    shorter, as a node that rarely spends its quota rarely stops.

    T is increasing in W for each φ, so P(T > x) = E_φ[P(W > w*(x, φ))] with w* the W at which
    T reaches x: w* = min((x − m(1 − s)P) / s, (m + 1 − φ)P), m = floor((x + sφP) / P)."""
    s, P = run_share, period_ms
    total = np.zeros(np.broadcast_shapes(np.shape(x), np.shape(busy)))
    # φ = busy (1 − r²), r by the midpoint rule: the points crowd where the node has nearly spent
    # its quota, where whether a short wait crosses into the next period is decided
    r = (np.arange(THROTTLE_POINTS) + 0.5) / THROTTLE_POINTS
    for rj, weight in zip(r, 2.0 * r / THROTTLE_POINTS):
        phi = busy * (1.0 - rj * rj)
        total = total + weight * wait_survival(_even_wait_reaching(x, phi, s, P))
    return total


def _even_wait_reaching(x: np.ndarray, phi: np.ndarray | float, run_share: float, period_ms: float) -> np.ndarray:
    """w*(x, φ): the even-speed wait W at which a request that finds the share φ of its node's
    quota spent waits x under the quota (throttled_wait_survival), at least 0."""
    s, P = run_share, period_ms
    m = np.floor((x + s * phi * P) / P)
    return np.maximum(np.minimum((x - m * (1.0 - s) * P) / s, (m + 1.0 - phi) * P), 0.0)


def quota_asked(busy: np.ndarray, requests_per_s: np.ndarray, wakeup_ms: float, window_ms: float,
                cores: float) -> np.ndarray:
    """The share of its quota a node under a control-group quota asks for (may pass 1): its
    utilisation (`busy`, its costs per request) plus its wake-ups, `wakeup_ms` of CPU each on
    its `cores`, at λ / (1 + λ·window) a second for λ requests a second: a wake-up serves what
    arrives within `window_ms` of it (a counter with a dead time; the local cluster's fit,
    HardwareSettings.cpu_wakeup_ms). wakeup_ms 0: `busy` itself."""
    busy = np.asarray(busy, dtype=float)
    if wakeup_ms <= 0:
        return busy
    lam = np.maximum(np.asarray(requests_per_s, dtype=float), 0.0)
    return busy + wakeup_ms * lam / (1.0 + lam * window_ms / 1000.0) / (1000.0 * cores)


def _excess(mean: np.ndarray, dispersion: float, above: np.ndarray | float) -> np.ndarray:
    """E[(D − above)+] for a period's demand D, gamma with `mean` and variance dispersion·mean
    (dispersion 0, or too small to divide by: D is its mean): x·Q(k + 1, a/d) − a·Q(k, a/d),
    k = x/d, Q the regularised upper incomplete gamma function."""
    if dispersion <= 1e-12:
        return np.maximum(mean - above, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.maximum(mean, 1e-300) / dispersion
        out = mean * gammaincc(k + 1.0, above / dispersion) - above * gammaincc(k, above / dispersion)
    return np.where(mean > 0, np.maximum(out, 0.0), 0.0)


def quota_stopped_share(asked: np.ndarray, dispersion: float, run_share: float,
                        stop_per_excess: float = 0.0) -> np.ndarray:
    """The share of the time a node under a control-group quota is stopped, σ, when it asks
    `asked` of its quota on average: a period's demand D (in quotas) is gamma with that mean and
    variance dispersion·mean, the quota runs out in the periods where D > 1, P(D > 1) =
    Q(mean / dispersion, 1 / dispersion) (the regularised upper incomplete gamma function).
    Such a period stops for the rest of it once the quota is spent, (1 − run_share) of it,
    with stop_per_excess 0; else for min(1 − run_share, stop_per_excess·(D − 1)) of it (a
    period that asks a little more than its quota runs out late and stops briefly), so
    σ = κ·(E[(D − 1)+] − E[(D − 1 − (1 − run_share)/κ)+]). dispersion 0: D is its mean
    (stopped only above 1)."""
    x = np.maximum(np.asarray(asked, dtype=float), 0.0)
    if stop_per_excess > 0:
        kappa, most = float(stop_per_excess), 1.0 - run_share
        return np.clip(kappa * (_excess(x, dispersion, 1.0) - _excess(x, dispersion, 1.0 + most / kappa)), 0.0, most)
    if dispersion <= 0:
        ran_out = (x > 1.0).astype(float)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            ran_out = np.where(x > 0, gammaincc(np.maximum(x, 1e-300) / dispersion, 1.0 / dispersion), 0.0)
    return (1.0 - run_share) * ran_out


STOP_POINTS = 16  # quadrature points over the rest of a stop a request arrives in
# ... and with stops of their own length (quota_stop_rest) the edges of the bins over it, as
# shares of the whole rest: crowded at both ends, toward short rests (where a short stop's
# rests all lie) and toward the whole rest (where a whole stop's p99 lies): the p99 within
# 1.0 ms of 512 even bins' at 0.8-1.75 quotas asked (the local cluster's fit), 16 even bins 1.5 ms
_REST_EDGES = (1.0 - np.cos(np.pi * np.arange(STOP_POINTS + 1) / STOP_POINTS)) / 2.0


def quota_stop_rest(asked: np.ndarray, dispersion: float, run_share: float, stop_per_excess: float) -> np.ndarray | None:
    """The rest R of the stop a request arriving while its node is stopped waits, as the
    probabilities of STOP_POINTS bins of [0, (1 − run_share)·period] (asked: (nodes,) ->
    (nodes, STOP_POINTS); the bins' edges _REST_EDGES of it); None with stop_per_excess 0,
    where every stop is the period's whole rest and R is uniform. A request arrives in a stop of length L in proportion to L (the
    stops are length-biased) and at a uniform time within it, so P(R > r) = E[(L − r)+] / E[L],
    with L = min(1 − run_share, κ·(D − 1)) periods (quota_stopped_share): the bins' exact
    probabilities from the gamma's partial expectations."""
    if stop_per_excess <= 0:
        return None
    x = np.maximum(np.asarray(asked, dtype=float), 0.0)
    kappa, most = float(stop_per_excess), 1.0 - run_share
    edges = most * _REST_EDGES
    beyond = kappa * (_excess(x[..., None], dispersion, 1.0 + edges / kappa)
                      - _excess(x[..., None], dispersion, 1.0 + most / kappa))  # E[(L − r)+], periods
    bins = np.maximum(beyond[..., :-1] - beyond[..., 1:], 0.0)
    total = bins.sum(axis=-1, keepdims=True)
    # a node (nearly) never stopped: its requests never arrive in a stop; uniform keeps it finite
    return np.where(total > 1e-12, bins / np.maximum(total, 1e-300), 1.0 / STOP_POINTS)


def _after_a_stop_survival(x: np.ndarray, wait_survival: Callable[[np.ndarray], np.ndarray], period_ms: float,
                           run_share: float, rest: np.ndarray | None = None) -> np.ndarray:
    """P(R + T0 > x) for a request that arrives while its node is stopped: it waits R, the rest
    of the stop, then its wait T0 at a node whose period's quota is whole (throttled_wait_survival
    at φ = 0). R is uniform over [0, (1 − run_share)·period] (a stop of that length; the midpoint
    rule), or with `rest` (quota_stop_rest, broadcast against x with the bins last) in each
    of its bins with its probability, taken at the bin's middle."""
    stop = (1.0 - run_share) * period_ms
    total = np.zeros(np.shape(x))
    for j in range(STOP_POINTS):
        if rest is None:
            left, weight = x - (j + 0.5) / STOP_POINTS * stop, 1.0 / STOP_POINTS
        else:
            left, weight = x - (_REST_EDGES[j] + _REST_EDGES[j + 1]) / 2.0 * stop, rest[..., j]
        after = wait_survival(_even_wait_reaching(np.maximum(left, 0.0), 0.0, run_share, period_ms))
        total = total + np.where(left < 0, 1.0, after) * weight
    return total


FLUID_POINTS = 4  # quadrature points over a fluid wait that moves within the step
_GRID, _ROUNDS = 24, 3  # quantile search: points per round, rounds at most
QUANTILE_TOLERANCE_MS = 0.1  # ... stopping once the bracket is this narrow (or 2e-3 of the value)


@dataclass(frozen=True)
class LatencyMix:
    """Latency of the requests of each class (rows), a mixture over components (columns, e.g.
    the nodes that served them): each component's requests take `offset_ms` plus a fluid wait
    spread evenly over [fluid_lo_ms, fluid_hi_ms] plus two independent station waits
    W_i = 0 w.p. 1 − p_i, exponential with mean mean_i / p_i otherwise (station_wait)."""

    weight: np.ndarray  # requests answered
    offset_ms: np.ndarray
    fluid_lo_ms: np.ndarray
    fluid_hi_ms: np.ndarray
    p1: np.ndarray
    mean1_ms: np.ndarray
    p2: np.ndarray
    mean2_ms: np.ndarray
    # If given, the first wait is not exponential but gamma with this shape (mean mean1_ms / p1
    # when it waits; the second wait is then not used): a request that finds k requests ahead
    # waits for k services, an Erlang-k wait (closed classes, see simulator.network).
    shape: np.ndarray | None = None
    # If given, the components' nodes run under a control-group CPU quota of this period (ms):
    # the waits above are those of a node of the quota's speed, reshaped by the quota's stops
    # (throttled_wait_survival); busy is the share of its quota each component's node uses.
    throttle_busy: np.ndarray | None = None
    period_ms: float = 0.0
    run_share: float = 1.0
    # If given (with throttle_busy), the share of the time each component's node is stopped
    # (quota_stopped_share): a request that arrives then waits the rest of the stop first
    # (_after_a_stop_survival); the others wait as throttle_busy says.
    stopped: np.ndarray | None = None
    # If given (with stopped; classes, components, STOP_POINTS), the probabilities of the rest
    # of the stop such a request waits (quota_stop_rest); None: uniform over a whole stop.
    stop_rest: np.ndarray | None = None

    def mean_ms(self) -> np.ndarray:
        """Mean latency per class; NaN where nothing was answered."""
        each = self.offset_ms + (self.fluid_lo_ms + self.fluid_hi_ms) / 2.0 + self.mean1_ms + self.mean2_ms
        total = self.weight.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(total > 0, (self.weight * each).sum(axis=1) / total, np.nan)

    def _parts(self) -> tuple[np.ndarray, ...]:
        th1 = np.where(self.p1 > 0, self.p1 / np.maximum(self.mean1_ms, 1e-12), 1e12)
        th2 = np.where(self.p2 > 0, self.p2 / np.maximum(self.mean2_ms, 1e-12), 1e12)
        points = FLUID_POINTS if np.any(self.fluid_hi_ms != self.fluid_lo_ms) else 1
        frac = (np.arange(points) + 0.5) / points
        shift = self.offset_ms[..., None] + self.fluid_lo_ms[..., None] + (
            self.fluid_hi_ms - self.fluid_lo_ms)[..., None] * frac  # (classes, comps, quad)
        share = self.weight / np.maximum(self.weight.sum(axis=1, keepdims=True), 1e-300) / points
        return (shift[..., None], share[:, :, None, None],
                *(a[:, :, None, None] for a in (self.p1, th1, self.p2, th2)))

    def survival(self, t_ms: np.ndarray, parts: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
        """P(latency > t) per class for thresholds t_ms (classes, points) -> (classes, points)."""
        shift, share, p1, th1, p2, th2 = parts or self._parts()
        x = np.maximum(t_ms[:, None, None, :] - shift, 0.0)  # (classes, comps, quad, points)
        if self.shape is None:
            def wait_survival(w: np.ndarray) -> np.ndarray:
                return _sum_of_waits_survival(w, p1, th1, p2, th2)
        else:
            k = np.maximum(self.shape, 1.0)[:, :, None, None]

            def wait_survival(w: np.ndarray) -> np.ndarray:
                return p1 * gammaincc(k, w * th1 * k)  # Gamma(k) with mean 1 / th1
        if self.throttle_busy is not None and self.period_ms > 0:
            waits = throttled_wait_survival(x, wait_survival, self.throttle_busy[:, :, None, None],
                                            self.period_ms, self.run_share)
            if self.stopped is not None:
                sigma = self.stopped[:, :, None, None]
                rest = None if self.stop_rest is None else self.stop_rest[:, :, None, None, :]
                waits = (1.0 - sigma) * waits + sigma * _after_a_stop_survival(
                    x, wait_survival, self.period_ms, self.run_share, rest)
        else:
            waits = wait_survival(x)
        tail = np.where(t_ms[:, None, None, :] < shift, 1.0, waits)
        return (share * tail).sum(axis=(1, 2))

    def under_quota(self, busy: np.ndarray, period_ms: float, run_share: float,
                    stopped: np.ndarray | None = None, stop_rest: np.ndarray | None = None) -> "LatencyMix":
        """The same mixture at nodes under a control-group CPU quota of `period_ms` (0: no
        quota, the mixture itself); busy: (components,) the share of its quota each
        component's node uses; stopped: (components,) the share of the time each is stopped
        (quota_stopped_share; None or all 0: requests never arrive into a stop); stop_rest:
        (components, STOP_POINTS) the rest of the stop such a request waits (quota_stop_rest;
        None: uniform over a whole stop)."""
        if period_ms <= 0:
            return self
        shape = self.weight.shape
        sigma, rest = None, None
        if stopped is not None and np.any(np.asarray(stopped) > 0):
            sigma = np.broadcast_to(np.asarray(stopped, dtype=float)[None, :], shape)
            if stop_rest is not None:
                rest = np.broadcast_to(np.asarray(stop_rest, dtype=float)[None, :, :], (*shape, STOP_POINTS))
        return replace(self, throttle_busy=np.broadcast_to(np.asarray(busy, dtype=float)[None, :], shape),
                       period_ms=float(period_ms), run_share=float(run_share), stopped=sigma, stop_rest=rest)

    def rows(self, keep: np.ndarray) -> "LatencyMix":
        """The mixture of the classes in `keep` only."""
        def part(v: object) -> object:
            return v if v is None or np.ndim(v) == 0 else v[keep]  # type: ignore[index]
        return LatencyMix(*(part(getattr(self, f.name)) for f in fields(self)))

    def share_over(self, t_ms: float) -> np.ndarray:
        """P(latency > t_ms) per class: the share of its answers slower than t_ms; NaN where
        nothing was answered (0 for an infinite t_ms)."""
        answered = (self.weight > 0).any(axis=1)
        out = np.full(len(self.weight), np.nan)
        if answered.any():
            out[answered] = 0.0 if math.isinf(t_ms) else self.rows(answered).survival(
                np.full((int(answered.sum()), 1), float(t_ms)))[:, 0]
        return out

    def quantile_ms(self, q: float = 0.99) -> np.ndarray:
        """The q-quantile of latency per class (by refining a grid around where the survival
        crosses 1 − q); NaN where nothing was answered."""
        answered = (self.weight > 0).any(axis=1)
        out = np.full(len(self.weight), np.nan)
        if answered.any():
            out[answered] = self.rows(answered)._quantile_ms(q)
        return out

    def _quantile_ms(self, q: float) -> np.ndarray:
        # The mixture's quantile lies between its components' smallest and largest. A
        # component's is at least its offset and at most offset + fluid + t1 + t2 with t_i the
        # 1 − (1 − q)/2 quantile of W_i alone (then P(W1 + W2 > t1 + t2) <= 1 − q); an
        # exponential's bounds a gamma wait of the same mean (shape >= 1) from above.
        live = self.weight > 0
        level = 2.0 / (1.0 - q)
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = np.where(self.p1 > 0, np.log(np.maximum(level * self.p1, 1.0)) * self.mean1_ms / self.p1, 0.0)
            t2 = np.where(self.p2 > 0, np.log(np.maximum(level * self.p2, 1.0)) * self.mean2_ms / self.p2, 0.0)
        top = self.offset_ms + np.maximum(self.fluid_lo_ms, self.fluid_hi_ms) + t1 + t2
        if self.throttle_busy is not None and self.period_ms > 0:
            top = top + (1.0 - self.run_share) * self.period_ms  # T <= W + one stop
        bottom = self.offset_ms + np.minimum(self.fluid_lo_ms, self.fluid_hi_ms)
        lo = np.where(live, bottom, np.inf).min(axis=1) - 1e-6
        hi = np.where(live, top, 0.0).max(axis=1, initial=0.0) + 1e-6
        parts = self._parts()
        for _ in range(_ROUNDS):
            if np.all(hi - lo <= np.maximum(QUANTILE_TOLERANCE_MS, 2e-3 * hi)):
                break
            width = (hi - lo) / _GRID
            grid = lo[:, None] + width[:, None] * np.arange(1, _GRID + 1)
            first = np.minimum((self.survival(grid, parts) > 1.0 - q).sum(axis=1), _GRID - 1)
            lo, hi = lo + width * first, lo + width * (first + 1)
        return hi
