"""What the simulated cluster shows: each node's host metrics as gmond reports them (CPU,
io_wait, memory over its window), each RegionServer's mean call time as HBase's /jmx reports
it, the live view's rows, and the per-step recording the report reads."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from simulator.nodes import SimNode
from simulator.settings import HardwareSettings


@dataclass(frozen=True)
class Recording:
    """What a run recorded, one row per step (the report's input). Per workload, counts are
    requests in the step: `offered` arrived (closed loop: as many as completed), `ops`
    completed, `failed` timed out (open loop only; closed-loop clients never time out),
    `backlog` still waiting at the step's end; latencies are measured from each request's
    arrival (docs/simulator.md, "Open-loop workloads")."""

    t: np.ndarray  # s, step start
    ops: np.ndarray  # (steps, workloads) operations completed in the step
    latency_ms: np.ndarray  # mean response time over all operations in the step
    latency_wl_ms: np.ndarray  # (steps, workloads) each workload's mean response time (0: none completed)
    vms: np.ndarray  # VMs billed (booting, running or stopping)
    servers: np.ndarray  # RegionServers serving
    tick_s: float
    workloads: tuple[str, ...]
    offered: np.ndarray  # (steps, workloads) requests that arrived in the step
    failed: np.ndarray  # (steps, workloads) requests that timed out in the step
    backlog: np.ndarray  # (steps, workloads) requests waiting at the step's end
    p99_wl_ms: np.ndarray  # (steps, workloads) 99th-percentile latency (NaN: none completed)
    open_loop: tuple[bool, ...]  # per workload: open (rate) or closed (threads)
    timeout_ms: tuple[float, ...]  # per workload (open loop)
    # (steps, workloads) share of the step's answers slower than the scenario's slo_latency_ms
    # (NaN: none completed); None in recordings made before it was kept
    slow_wl: np.ndarray | None = None


@dataclass(frozen=True)
class NodeView:
    """One VM as the live view shows it."""

    host: str
    profile: str
    state: str  # the RegionServer's state once the VM runs, else the VM's
    cpu: float  # gmond-window means; NaN before the first report
    io_wait: float
    memory: float
    regions: int
    ops_per_s: float


@dataclass
class Recorder:
    """The recorded series, one entry per step."""

    workloads: tuple[str, ...]
    tick_s: float
    open_loop: tuple[bool, ...] = ()
    timeout_ms: tuple[float, ...] = ()
    t: list[float] = field(default_factory=list)
    ops: list[np.ndarray] = field(default_factory=list)  # ops per workload in the step
    latency_ms: list[float] = field(default_factory=list)  # mean response time over all operations
    latency_wl_ms: list[np.ndarray] = field(default_factory=list)
    vms: list[int] = field(default_factory=list)  # VMs billed (booting, running or stopping)
    servers: list[int] = field(default_factory=list)  # RegionServers serving
    offered: list[np.ndarray] = field(default_factory=list)
    failed: list[np.ndarray] = field(default_factory=list)
    backlog: list[np.ndarray] = field(default_factory=list)
    p99_ms: list[np.ndarray] = field(default_factory=list)
    slow: list[np.ndarray] = field(default_factory=list)

    def record(self, t: float, dt: float, step: Any, vms: int, servers: int) -> None:
        """One step (a simulator.network.StepResult) at time t."""
        x, lat_wl = step.x, step.latency_ms
        self.t.append(t)
        self.ops.append(x * dt)
        total = float(x.sum())
        self.latency_ms.append(float((x * lat_wl).sum() / total) if total > 0 else 0.0)
        self.latency_wl_ms.append(lat_wl)
        self.vms.append(vms)
        self.servers.append(servers)
        self.offered.append(step.offered)
        self.failed.append(step.failed)
        self.backlog.append(step.backlog)
        self.p99_ms.append(step.p99_ms)
        self.slow.append(step.slow)

    def recording(self) -> Recording:
        n = len(self.t)
        w = len(self.workloads)

        def table(rows: list[np.ndarray]) -> np.ndarray:
            return np.asarray(rows, dtype=float).reshape(n, w)
        return Recording(t=np.asarray(self.t, dtype=float), ops=table(self.ops),
                         latency_ms=np.asarray(self.latency_ms, dtype=float),
                         latency_wl_ms=table(self.latency_wl_ms),
                         vms=np.asarray(self.vms, dtype=float),
                         servers=np.asarray(self.servers, dtype=float),
                         tick_s=self.tick_s, workloads=self.workloads, offered=table(self.offered),
                         failed=table(self.failed), backlog=table(self.backlog),
                         p99_wl_ms=table(self.p99_ms),
                         open_loop=self.open_loop or (False,) * w,
                         timeout_ms=self.timeout_ms or (1000.0,) * w,
                         slow_wl=table(self.slow))


@dataclass(frozen=True)
class NodeLoad:
    """Per node (index = node), what one step asked of it."""

    util_cpu: np.ndarray
    util_disk: np.ndarray
    bg_cpu: np.ndarray  # background share (transfers, compactions)
    bg_disk: np.ndarray
    disk_queue: np.ndarray  # requests at its disk (MVA), for io_wait
    latency_ms: np.ndarray  # server_time_ms, NaN where no request arrived
    queue: np.ndarray  # open requests waiting for it at the step's end (its RPC call queue)
    dropped: np.ndarray  # open requests that timed out waiting for it in the step
    cache_share: np.ndarray  # profile: block cache and memstore shares of the heap
    memstore_share: np.ndarray
    cached_kb: np.ndarray  # block cache filled with the regions it serves
    writes: np.ndarray  # puts in the step


def _at(a: np.ndarray, i: int, default: float) -> float:
    return float(a[i]) if i < len(a) else default


def observe_hosts(nodes: Sequence[SimNode], load: NodeLoad, h: HardwareSettings
                  ) -> dict[str, tuple[float, float, float]]:
    """Append one step's host metrics to every live node's window; return them by server id."""
    out: dict[str, tuple[float, float, float]] = {}
    for n in nodes:
        if n.vm_state == "terminated":
            continue
        i = n.index
        if n.rs_state in ("active",):
            cpu = float(load.util_cpu[i])
            fill = min(1.0, load.cached_kb[i] / max(1.0, h.heap_mb * load.cache_share[i] * 1024.0))
            ms_fill = 0.5 if load.writes[i] > 0 else 0.05
            heap_used = h.heap_mb * (h.heap_base_share + load.cache_share[i] * fill + load.memstore_share[i] * ms_fill)
        else:
            cpu = _at(load.bg_cpu, i, 0.0)
            heap_used = 0.0 if n.rs_state in ("absent", "stopped") else h.heap_mb * h.heap_base_share
        mem = min(1.0, (h.os_mb + heap_used) / h.ram_mb)
        # Linux counts a CPU's idle time as iowait while a task that last ran on it waits
        # for I/O (kernel/sched/cputime.c: account_idle_time, nr_iowait_cpu > 0;
        # Documentation/filesystems/proc.rst "iowait"). So at most one CPU per blocked
        # task, and only idle CPUs: iowait = min(outstanding I/Os, idle cores) / cores,
        # outstanding = the disk's queue (MVA) plus the background stream while it runs.
        waiting = _at(load.disk_queue, i, 0.0) + _at(load.bg_disk, i, 0.0)
        io_wait = min(waiting, h.cores * (1.0 - cpu)) / h.cores if n.rs_state == "active" else 0.0
        n.cpu_hist.append(cpu)
        n.io_hist.append(io_wait)
        n.mem_hist.append(mem)
        if n.rs_state == "active":
            # NaN: no call reached it this step (HBase's histogram then holds none either)
            n.lat_hist.append(_at(load.latency_ms, i, math.nan))
            n.queue_hist.append(_at(load.queue, i, 0.0))
            n.dropped += _at(load.dropped, i, 0.0)
        out[n.server_id] = (cpu, io_wait, mem)
    return out


def host_metrics(node: SimNode) -> tuple[float, float, float] | None:
    """CPU, io_wait and memory averaged over the node's window; None before its first report."""
    if not node.cpu_hist:
        return None
    return (float(np.mean(node.cpu_hist)), float(np.mean(node.io_hist)), float(np.mean(node.mem_hist)))


def server_latency_ms(node: SimNode) -> float | None:
    """Mean time a request spent in this RegionServer over the metrics window, ms: over
    the steps in which calls reached it, 0.0 when none did (HBase 2.6.4's call-time
    histogram is emptied at every metrics snapshot: HistogramImpl.snapshot() calls
    FastLongHistogram.snapshotAndReset(), so an idle server's TotalCallTime_mean reads 0,
    never the latency of calls long gone); None before it ever served."""
    if not node.lat_hist:
        return None
    served = [v for v in node.lat_hist if math.isfinite(v)]
    return float(np.mean(served)) if served else 0.0


def server_queue_length(node: SimNode) -> float | None:
    """Calls waiting in this RegionServer's call queue, averaged over the metrics window (HBase
    reports the queue's length at each read of its gauge; the window stands for the monitor's
    smoothing); None before it ever served."""
    if not node.queue_hist:
        return None
    return float(np.mean(node.queue_hist))


def node_views(nodes: Sequence[SimNode], server: np.ndarray, requests_per_s: np.ndarray) -> list[NodeView]:
    """Every VM not yet terminated: state, host metrics, regions and requests served (server
    and requests_per_s per region)."""
    served = server >= 0
    ops_node = np.bincount(server[served], weights=requests_per_s[served], minlength=len(nodes))
    out = []
    for n in nodes:
        if n.vm_state == "terminated":
            continue
        m = host_metrics(n) or (float("nan"),) * 3
        out.append(NodeView(host=n.host, profile=n.profile,
                            state=n.rs_state if n.vm_state == "running" else n.vm_state,
                            cpu=m[0], io_wait=m[1], memory=m[2],
                            regions=int(np.sum(server == n.index)),
                            ops_per_s=float(ops_node[n.index])))
    return out
