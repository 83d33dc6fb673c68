"""One step of the queueing network every request crosses: the stations (each node's CPU and
disk, each client machine) built from the demands (simulator.demand), closed classes (YCSB
threads) solved by approximate MVA, open classes (`rate:`) by M/M/c waits below saturation and
a fluid backlog at or above it, and what each workload got: requests offered, answered and
failed, mean and 99th-percentile latency. The formulas are simulator.solver's; this module
only wires the cluster's arrays to them and carries the state from step to step.

How open and closed classes share a station (docs/simulator.md, "Open-loop workloads"):
Lazowska et al.'s mixed-network solution (QSP §7.4): open classes hold a share U_open of each
station whatever the closed ones do; closed classes are solved by MVA on stations whose
queueing demand is inflated by 1/(1 − U_open), and also wait behind an open backlog (FIFO).
What the closed classes then use is taken from what the open classes can be served with.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simulator import capacity, solver
from simulator.demand import Demands, RegionCosts, WorkloadMix, per_node
from simulator.settings import CostSettings, HardwareSettings

STATIONS = 2  # per node: CPU, disk


@dataclass
class NetworkState:
    """What the network carries from one step to the next."""

    q: np.ndarray | None = None  # closed classes' queue lengths (MVA starts from them)
    # the closed classes' last latency mixture whose percentile was computed, and that
    # percentile: reused while the mixture stays within P99_REUSE_RTOL of it (steady state)
    closed_mix: np.ndarray = field(default_factory=lambda: np.zeros(0))  # its arrays, flattened
    closed_p99: np.ndarray = field(default_factory=lambda: np.zeros(0))
    closed_slow: np.ndarray = field(default_factory=lambda: np.zeros(0))  # and its share over the SLO
    backlog: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (workloads, nodes) open requests waiting
    wait_s: np.ndarray = field(default_factory=lambda: np.zeros(0))  # (nodes,) an open backlog's wait at the end

    def fit(self, workloads: int, nodes: int) -> None:
        """Nodes are only ever appended: grow the per-node state with zeros."""
        if self.backlog.shape != (workloads, nodes):
            grown = np.zeros((workloads, nodes))
            grown[:, :self.backlog.shape[1]] = self.backlog[:, :nodes] if self.backlog.size else 0.0
            self.backlog = grown
            self.wait_s = np.concatenate([self.wait_s, np.zeros(nodes - len(self.wait_s))])[:nodes]


@dataclass(frozen=True)
class StepInput:
    """Everything one step needs about the cluster (per workload, per node, per region)."""

    rc: RegionCosts
    d: Demands
    cls: np.ndarray  # (regions,) each region's workload
    active: np.ndarray  # (workloads,) switched on
    open_loop: np.ndarray  # (workloads,) open (rate) rather than closed (threads)
    arrivals: np.ndarray  # (workloads,) open requests arriving in the step
    timeout_s: np.ndarray  # (workloads,)
    serving: np.ndarray  # (nodes,) its RegionServer is active
    block_kb: np.ndarray  # (nodes,) its profile's block size
    bg_cpu: np.ndarray  # (nodes,) background share of the CPU, of the disk
    bg_disk: np.ndarray
    dt: float
    # the response-time objective: each step counts the share of its answers slower than it, so
    # a window's percentile is scored over the window's requests (controller.scoring)
    slo_ms: float = float("inf")


@dataclass(frozen=True)
class StepResult:
    x: np.ndarray  # (workloads,) requests answered per second
    offered: np.ndarray  # (workloads,) requests in the step (closed: as many as answered)
    failed: np.ndarray  # (workloads,) requests that timed out in the step
    backlog: np.ndarray  # (workloads,) requests waiting at the end of the step
    latency_ms: np.ndarray  # (workloads,) mean, 0 where nothing was answered
    p99_ms: np.ndarray  # (workloads,) 99th percentile, NaN where nothing was answered
    util_cpu: np.ndarray  # (nodes,)
    util_disk: np.ndarray
    disk_queue: np.ndarray  # (nodes,) requests at the disk, for io_wait
    node_latency_ms: np.ndarray  # (nodes,) mean time a request spends in the server, NaN if none
    node_queue: np.ndarray  # (nodes,) open requests waiting at the step's end (HBase's call queue)
    node_dropped: np.ndarray  # (nodes,) open requests that timed out waiting for it in the step
    slow: np.ndarray  # (workloads,) share of the step's answers slower than slo_ms, NaN where none


def solve(state: NetworkState, s: StepInput, mix: WorkloadMix, c: CostSettings,
          h: HardwareSettings) -> StepResult:
    nw, k = len(mix.names), len(s.serving)
    state.fit(nw, k)
    if not s.open_loop.any():
        return _closed_only(state, s, mix, c, h)
    return _mixed(state, s, mix, c, h)


def _closed_queue_demands(d: Demands, mix: WorkloadMix, h: HardwareSettings, c: CostSettings,
                          closed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Queueing demand (CPU D/m | disk | client D/mc) and delay of the closed classes."""
    cpu_q, cpu_delay = solver.seidmann(d.cpu, h.cores)
    client_q, client_delay = solver.seidmann(d.client, c.client_cores)
    Dq = np.concatenate([cpu_q, d.disk, client_q], axis=1)
    Z = d.delay + cpu_delay + client_delay
    Dq[~closed] = 0.0
    return Dq, Z


def _mva(state: NetworkState, Dq: np.ndarray, Z: np.ndarray, closed: np.ndarray,
         mix: WorkloadMix) -> solver.ClosedSolution:
    if not closed.any():  # nothing to solve (open workloads only)
        zero = np.zeros(Dq.shape)
        return solver.ClosedSolution(np.zeros(len(closed)), zero, zero, np.zeros(len(closed)))
    N = np.where(closed, mix.threads, 0.0)
    q0 = state.q if (state.q is not None and state.q.shape == Dq.shape) else None
    sol = solver.closed_mva(Dq, Z, N, mix.target, closed, q0)
    state.q = sol.q
    return sol


def _closed_only(state: NetworkState, s: StepInput, mix: WorkloadMix, c: CostSettings,
                 h: HardwareSettings) -> StepResult:
    """Every workload closed loop: the network as it always was (figures unchanged)."""
    k = len(s.serving)
    Dq, Z = _closed_queue_demands(s.d, mix, h, c, s.active)
    sol = _mva(state, Dq, Z, s.active, mix)
    x = sol.x
    disk_queue = sol.q[:, k:2 * k].sum(axis=0) if k else np.zeros(0)
    util_cpu = util_disk = node_latency = np.zeros(0)
    visits = per_node(s.rc.weight, s.rc, s.cls, len(x), k)
    if k:
        remote = per_node(s.rc.remote, s.rc, s.cls, len(x), k)
        node_latency = _server_time(x, sol.R[:, :k] + sol.R[:, k:2 * k] + s.d.cpu[:, :k] * (h.cores - 1) / h.cores
                                    + remote, visits, c.rpc_floor_ms)
        util_cpu = solver.utilisation(x, s.d.cpu, s.bg_cpu[:k], h.cores)
        util_disk = solver.utilisation(x, s.d.disk, s.bg_disk[:k], 1)
    p99, slow = _closed_p99(state, _closed_mix(sol, Dq, x, visits, util_cpu, util_disk, s, h, c, k), s.slo_ms)
    ops = x * s.dt
    return StepResult(x, ops, np.zeros(len(x)), np.zeros(len(x)), sol.response_ms, p99,
                      util_cpu, util_disk, disk_queue, node_latency, np.zeros(k), np.zeros(k), slow)


# A closed class's latency distribution barely moves from step to step once its clients have
# settled: its percentile is computed again only when some part of its mixture moved by more
# than this share (an error of about as much in the p99; the quantile's own precision is 2e-3).
P99_REUSE_RTOL = 1e-3


def _closed_p99(state: NetworkState, mix: solver.LatencyMix, slo_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """The closed classes' p99 and share of answers over slo_ms (reused in steady state)."""
    now = np.concatenate([np.ravel(a) for a in solver.astuple(mix)] + [np.array(mix.weight.shape, dtype=float), [slo_ms]])
    last = state.closed_mix
    if last.shape == now.shape and bool(np.all(np.abs(now - last) <= 1e-9 + P99_REUSE_RTOL * np.abs(last))):
        return state.closed_p99, state.closed_slow
    state.closed_mix, state.closed_p99, state.closed_slow = now, mix.quantile_ms(), mix.share_over(slo_ms)
    return state.closed_p99, state.closed_slow


def _server_time(x: np.ndarray, inside: np.ndarray, visits: np.ndarray, floor_ms: float) -> np.ndarray:
    """Mean time a request spends in each RegionServer (what HBase's /jmx TotalCallTime
    measures, plus the wait on a remote DataNode): `inside` per request of each workload,
    over the requests that reach the node, plus the RPC floor. NaN where none arrives."""
    arriving = (x[:, None] * visits).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(arriving > 0, (x[:, None] * inside).sum(axis=0) / arriving + floor_ms, np.nan)


def _station_waits(util_cpu: np.ndarray, util_disk: np.ndarray, cpu_per_request_ms: np.ndarray,
                   s: StepInput, h: HardwareSettings) -> tuple[np.ndarray, ...]:
    """M/M/c waits at every node's CPU (cores servers, service = CPU per request) and disk
    (one server, service = one random block read): P(wait), mean wait (ms) each."""
    p_cpu, w_cpu = solver.station_wait(np.full(len(util_cpu), h.cores), util_cpu, cpu_per_request_ms)
    miss = capacity.miss_disk_ms(s.block_kb, h) / (1.0 - s.bg_disk)
    p_disk, w_disk = solver.station_wait(np.ones(len(util_disk)), util_disk, miss)
    return p_cpu, w_cpu, p_disk, w_disk, miss


def _closed_mix(sol: solver.ClosedSolution, Dq: np.ndarray, x: np.ndarray, visits: np.ndarray,
                util_cpu: np.ndarray, util_disk: np.ndarray, s: StepInput, h: HardwareSettings,
                c: CostSettings, k: int, served_per_s: np.ndarray | None = None) -> solver.LatencyMix:
    """Closed classes' latency as a mixture over the nodes their requests reach, so that its
    mean is the MVA's response time: the MVA's mean wait at each node's CPU and disk (residence
    less demand) plus the rest of the response as an offset. The wait's shape follows the
    arrival theorem: a request finds A = (R − D)/D requests ahead at a station (the MVA's queue
    seen on arrival) and waits for their services, an Erlang-A (gamma) wait; with fewer than
    one ahead it waits with probability C (M/M/c) and then exponentially."""
    nw = len(x)
    if not k:
        z = np.zeros((nw, 1))
        return solver.LatencyMix(np.where(x > 0, 1.0, 0.0)[:, None], sol.response_ms[:, None], z, z, z, z, z, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_req = np.where(visits > 0, 1.0 / visits, 0.0)
        cpu_served = (x[:, None] * s.d.cpu[:, :k]).sum(axis=0) / np.maximum((x[:, None] * visits).sum(axis=0), 1e-12)
        ahead = [np.where(Dq[:, a:b] > 0, np.maximum(sol.R[:, a:b] - Dq[:, a:b], 0.0) / Dq[:, a:b], 0.0)
                 for a, b in ((0, k), (k, 2 * k))]
    p_cpu, _, p_disk, _, _ = _station_waits(util_cpu, util_disk, cpu_served, s, h)
    w1 = np.maximum(sol.R[:, :k] - Dq[:, :k], 0.0) * per_req
    w2 = np.maximum(sol.R[:, k:2 * k] - Dq[:, k:2 * k], 0.0) * per_req
    weight = x[:, None] * visits
    offset = np.broadcast_to((sol.response_ms - (visits * (w1 + w2)).sum(axis=1))[:, None], weight.shape)
    cpu_first = w1 >= w2  # the station that holds most of the wait sets its shape
    shape = np.where(cpu_first, ahead[0], ahead[1])
    p = np.where(shape >= 1.0, 1.0, np.where(cpu_first, p_cpu[None, :], p_disk[None, :]))
    p = np.where(w1 + w2 > 0, p, 0.0)
    zero = np.zeros(weight.shape)
    mix = solver.LatencyMix(weight, offset, zero, zero, p, w1 + w2, zero, zero, shape=shape)
    # requests each node answers a second (served_per_s: the open classes' too)
    stops = capacity.quota_stops(util_cpu, weight.sum(axis=0) if served_per_s is None else served_per_s, h)
    return mix.under_quota(util_cpu, h.cpu_quota_period_ms, h.cpu_quota_run_share, *(stops or ()))


@dataclass(frozen=True)
class _OpenParts:
    """Per (workload, node) pieces of the open classes' requests."""

    visits: np.ndarray  # share of the workload's requests that reach the node
    service_ms: np.ndarray  # CPU, local and remote disk and network time of one request there
    disk_ms: np.ndarray  # local disk time of one request there (its visits to the disk queue)
    work: np.ndarray  # (workloads, nodes, stations) work one queued request asks
    unqueued: np.ndarray  # (nodes, stations) work asked by requests queued elsewhere (remote reads)


def _open_parts(s: StepInput, nw: int, k: int) -> _OpenParts:
    rc, d = s.rc, s.d
    visits = per_node(rc.weight, rc, s.cls, nw, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_req = np.where(visits > 0, 1.0 / visits, 0.0)
    cpu = d.cpu[:, :k]
    disk_local = per_node(rc.disk, rc, s.cls, nw, k) / (1.0 - s.bg_disk[None, :k])
    remote = per_node(rc.remote_disk + rc.remote, rc, s.cls, nw, k)
    work = np.stack([cpu * per_req, d.disk[:, :k] * per_req], axis=2)
    unqueued = np.stack([np.zeros(k), (np.where(visits > 0, 0.0, d.disk[:, :k]) * s.arrivals[:, None]).sum(axis=0)], axis=1)
    return _OpenParts(visits, (cpu + disk_local + remote) * per_req, disk_local * per_req, work, unqueued)


def _mixed(state: NetworkState, s: StepInput, mix: WorkloadMix, c: CostSettings,
           h: HardwareSettings) -> StepResult:
    """Open and closed classes together (Lazowska et al., QSP §7.4; module docstring)."""
    nw, k, dt = len(mix.names), len(s.serving), s.dt
    closed = s.active & ~s.open_loop
    op = _open_parts(s, nw, k)
    arriving = s.arrivals[:, None] * op.visits
    cap = np.stack([np.full(k, h.cores * 1000.0 * dt), np.full(k, 1000.0 * dt)], axis=1) * s.serving[:, None]
    asked = np.einsum("oks,ok->ks", op.work, state.backlog + arriving) + op.unqueued
    with np.errstate(divide="ignore", invalid="ignore"):
        open_share = np.where(cap > 0, asked / cap, 0.0)
    # closed classes: queueing demand inflated by the open share, and the open backlog's wait
    Dq, Z = _closed_queue_demands(s.d, mix, h, c, closed)
    Dq[:, :2 * k] = Dq[:, :2 * k] * np.concatenate([solver.mixed_inflation(open_share[:, 0]),
                                                    solver.mixed_inflation(open_share[:, 1])])[None, :]
    Z = Z + np.where(closed, (op.visits * state.wait_s[None, :] * 1000.0).sum(axis=1), 0.0)
    sol = _mva(state, Dq, Z, closed, mix)
    closed_work = np.stack([(sol.x[:, None] * s.d.cpu[:, :k]).sum(axis=0),
                            (sol.x[:, None] * s.d.disk[:, :k]).sum(axis=0)], axis=1) * dt
    free = np.maximum(cap - closed_work - op.unqueued, 0.0)
    fl = solver.fluid_queues(state.backlog, arriving, op.work, free, dt, s.timeout_s)
    state.backlog = fl.backlog
    state.wait_s = np.minimum(np.where(np.isfinite(fl.wait_end_s), fl.wait_end_s, 0.0),
                              s.timeout_s[s.open_loop].max(initial=0.0))
    off = _offline(s, nw)
    served = fl.served.sum(axis=1) + off[0]
    x = np.where(s.open_loop, served / dt, sol.x)
    open_work = np.einsum("oks,ok->ks", op.work, fl.served) + op.unqueued
    used = closed_work + open_work
    util_cpu = np.minimum(used[:, 0] * (1.0 - s.bg_cpu[:k]) / (h.cores * 1000.0 * dt) + s.bg_cpu[:k], 1.0)
    util_disk = np.minimum(used[:, 1] * (1.0 - s.bg_disk[:k]) / (1000.0 * dt) + s.bg_disk[:k], 1.0)
    return _mixed_result(state, s, mix, c, h, sol, Dq, x, op, fl, off, util_cpu, util_disk, used)


def _offline(s: StepInput, nw: int) -> tuple[np.ndarray, ...]:
    """Open requests for regions that are offline (moving, splitting, reopening after a
    failure): answered when the region opens if that is within the timeout, else failed.
    Per workload: answered, failed, and the answered ones' shortest and longest wait (s)."""
    off = ~s.rc.served
    if not off.any():
        z = np.zeros(nw)
        return z, z, z, z
    cls = s.cls[off]
    arr = s.arrivals[cls] * s.rc.weight[off]
    ok, failed, lo, hi = solver.offline_wait(arr, s.rc.wait[off] / 1000.0, s.dt, s.timeout_s[cls])
    sums = [np.bincount(cls, weights=v, minlength=nw) for v in (ok, failed, ok * lo, ok * hi)]
    with np.errstate(divide="ignore", invalid="ignore"):
        return sums[0], sums[1], np.where(sums[0] > 0, sums[2] / sums[0], 0.0), np.where(sums[0] > 0, sums[3] / sums[0], 0.0)


def _mixed_result(state: NetworkState, s: StepInput, mix: WorkloadMix, c: CostSettings,
                  h: HardwareSettings, sol: solver.ClosedSolution, Dq: np.ndarray, x: np.ndarray,
                  op: _OpenParts, fl: solver.FluidStep, off: tuple[np.ndarray, ...],
                  util_cpu: np.ndarray, util_disk: np.ndarray, used: np.ndarray) -> StepResult:
    nw, k, dt = len(mix.names), len(s.serving), s.dt
    answered = x[:, None] * op.visits * dt
    answered[s.open_loop] = fl.served[s.open_loop]
    served = answered.sum(axis=0)  # requests each node answers in the step, every class's
    with np.errstate(divide="ignore", invalid="ignore"):
        cpu_per_req = used[:, 0] / np.maximum(served, 1e-12)
    p_cpu, w_cpu, p_disk, w_disk, miss = _station_waits(util_cpu, util_disk, cpu_per_req, s, h)
    open_mix = _open_mix(s, op, fl, off, p_cpu, w_cpu, p_disk, w_disk, miss, util_cpu, h, served / dt)
    p99, slow = np.full(nw, np.nan), np.full(nw, np.nan)
    opened = open_mix.rows(s.open_loop)
    p99[s.open_loop], slow[s.open_loop] = opened.quantile_ms(), opened.share_over(s.slo_ms)
    closed = ~s.open_loop
    if (sol.x[closed] > 0).any():
        closed_mix = _closed_mix(sol, Dq, np.where(closed, sol.x, 0.0), op.visits, util_cpu, util_disk, s, h, c, k,
                                 served / dt)
        p99[closed], slow[closed] = _closed_p99(state, closed_mix.rows(closed), s.slo_ms)
    mean_open = np.nan_to_num(open_mix.mean_ms(), nan=0.0)
    latency = np.where(s.open_loop, mean_open, sol.response_ms)
    offered = np.where(s.open_loop, s.arrivals, x * dt)
    failed = np.where(s.open_loop, fl.failed.sum(axis=1) + off[1], 0.0)
    # requests at each disk (io_wait): the MVA's queue for closed classes, and for open ones
    # their share of an M/M/1's mean number in system at the disk's utilisation
    rho = np.minimum(util_disk, solver.RHO_MAX)
    open_disk = np.einsum("ok,ok->k", op.work[:, :, 1], fl.served) / (1000.0 * dt)
    disk_queue = sol.q[:, k:2 * k].sum(axis=0) + open_disk / (1.0 - rho)
    # time inside each server: open requests' service, waits and backlog wait (their mixture
    # components less the delays outside); closed ones' MVA residence there (as _closed_only)
    open_inside = (open_mix.offset_ms[:, :k] - s.d.base_delay[:, None] + open_mix.mean1_ms[:, :k]
                   + open_mix.mean2_ms[:, :k] + (open_mix.fluid_lo_ms[:, :k] + open_mix.fluid_hi_ms[:, :k]) / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        closed_inside = (sol.R[:, :k] + sol.R[:, k:2 * k] + s.d.cpu[:, :k] * (h.cores - 1) / h.cores
                         + per_node(s.rc.remote, s.rc, s.cls, nw, k)) / op.visits
    inside = np.where(s.open_loop[:, None], open_inside, np.nan_to_num(closed_inside, nan=0.0, posinf=0.0))
    node_latency = _node_latency(answered, inside, c.rpc_floor_ms)
    return StepResult(x, offered, failed, np.where(s.open_loop, fl.backlog.sum(axis=1), 0.0),
                      latency, p99, util_cpu, util_disk, disk_queue, node_latency,
                      fl.backlog[s.open_loop].sum(axis=0), fl.failed[s.open_loop].sum(axis=0), slow)


def _node_latency(answered: np.ndarray, inside: np.ndarray, floor_ms: float) -> np.ndarray:
    """Mean in-server time over the requests each node answered (+ the RPC floor)."""
    total = answered.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, (answered * inside).sum(axis=0) / total + floor_ms, np.nan)


def _col(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=float)[:, None]


def _open_mix(s: StepInput, op: _OpenParts, fl: solver.FluidStep, off: tuple[np.ndarray, ...],
              p_cpu: np.ndarray, w_cpu: np.ndarray, p_disk: np.ndarray, w_disk: np.ndarray,
              miss: np.ndarray, util_cpu: np.ndarray, h: HardwareSettings,
              served_per_s: np.ndarray) -> solver.LatencyMix:
    """Open classes' latency, measured from each request's arrival, as a mixture over the
    nodes that answered them and the regions that were offline (the last component): the
    delays and service times, the fluid backlog's wait (moving from its value at the step's
    start to its end, capped by the timeout), and the M/M/c waits of the stations that are not
    saturated (a saturated one's wait is the backlog's)."""
    nw = len(s.arrivals)
    tau = s.timeout_s[:, None]
    a = np.minimum(np.broadcast_to(fl.wait_start_s[None, :], fl.served.shape), tau) * 1000.0
    b = np.minimum(np.broadcast_to(fl.wait_end_s[None, :], fl.served.shape), tau) * 1000.0
    sat_cpu, sat_disk = fl.saturated[:, 0], fl.saturated[:, 1]
    visits_disk = op.disk_ms / miss[None, :]  # random reads per request at this node's disk
    p1 = np.broadcast_to(np.where(sat_cpu, 0.0, p_cpu)[None, :], a.shape)
    m1 = np.broadcast_to(np.where(sat_cpu, 0.0, w_cpu)[None, :], a.shape)
    p2 = np.minimum(visits_disk, 1.0) * np.where(sat_disk, 0.0, p_disk)[None, :]
    m2 = visits_disk * np.where(sat_disk, 0.0, w_disk)[None, :]
    offset = s.d.base_delay[:, None] + op.service_ms
    # offline regions' requests: the class's average delays and service, their wait to open
    with np.errstate(divide="ignore", invalid="ignore"):
        avg = np.where(op.visits.sum(axis=1) > 0, (op.visits * op.service_ms).sum(axis=1) / op.visits.sum(axis=1), 0.0)
    z = np.zeros((nw, 1))
    # served_per_s: requests each node answers a second, closed classes' too (their wake-ups
    # spend the same quota)
    stops = capacity.quota_stops(util_cpu, served_per_s, h)
    return solver.LatencyMix(
        np.hstack([fl.served, _col(off[0])]), np.hstack([offset, _col(s.d.base_delay + avg)]),
        np.hstack([np.minimum(a, b), _col(off[2] * 1000.0)]), np.hstack([np.maximum(a, b), _col(off[3] * 1000.0)]),
        np.hstack([p1, z]), np.hstack([m1, z]), np.hstack([p2, z]), np.hstack([m2, z])
    ).under_quota(np.append(util_cpu, 0.0), h.cpu_quota_period_ms, h.cpu_quota_run_share,
                  *(() if stops is None else _stops_with_offline(*stops)))


def _stops_with_offline(stopped: np.ndarray, rest: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The quota's stops of the nodes with the offline regions' component last (never stopped)."""
    return np.append(stopped, 0.0), None if rest is None else np.vstack([rest, np.full((1, rest.shape[1]), 1.0 / rest.shape[1])])
