"""Steady-state capacity: the latency a cluster of a given size would give a given offered load
once everything has settled — balanced placement, one profile on every node, warm caches, all
data local, no boot, move or compaction under way. Pure functions over arrays: the oracle of
cost at the SLO asks it for the smallest node count that serves each minute within the SLO
(/work/notes/capacity-api.md, docs/simulator.md "Steady-state capacity").

The model is the simulator's own, below saturation: the capacity model's cost per operation
(simulator.capacity), Che's LRU approximation for block cache + page cache, and per node an
M/M/c CPU and an M/M/1 disk (simulator.solver.station_wait); latency per tenant is a mixture
over the nodes its requests reach (simulator.solver.LatencyMix). At or above saturation of any
station the backlog grows without bound: no finite p99.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simulator import balancer, capacity, solver
from simulator.arrivals import Arrivals
from simulator.scenario import Scenario
from simulator.settings import SimulatorSettings


@dataclass(frozen=True)
class RegionLoad:
    """Offered load per region (index = region), requests per second."""

    reads: np.ndarray  # gets (a read-modify-write counts a get and a put)
    writes: np.ndarray  # puts (updates and inserts)
    scans: np.ndarray
    size_mb: np.ndarray  # data stored
    tenant: np.ndarray | None = None  # the tenant (workload index) each region serves; None: one tenant
    hot_req: np.ndarray | None = None  # share of its reads on its hot keys (None: reads spread evenly)
    hot_size: np.ndarray | None = None  # share of its keys that are hot


@dataclass(frozen=True)
class SteadyState:
    """What `nodes` nodes give the load at steady state."""

    nodes: int
    p99_ms: float  # the worst tenant's 99th-percentile latency; inf when saturated
    p99_by_tenant: tuple[float, ...]  # NaN for a tenant with no requests
    mean_ms: float  # over all requests; inf when saturated
    failed_share: float  # requests waiting longer than timeout_ms (of all); 1.0 when saturated
    max_utilisation: float  # the busiest station (CPU or disk), 0..; >= 1 is saturation
    saturated: bool

    def meets(self, slo_latency_ms: float, slo_max_failed: float = 0.001) -> bool:
        return (not self.saturated and self.p99_ms <= slo_latency_ms
                and self.failed_share <= slo_max_failed)


def _placement(cpu_ms_per_s: np.ndarray, nodes: int) -> np.ndarray:
    """Balanced placement: LPT on CPU work, at most ceil(regions/nodes) regions a node
    (simulator.balancer.initial_placement, MET §6.4's manual balance)."""
    node = np.zeros(len(cpu_ms_per_s), dtype=int)
    for r, k in balancer.initial_placement("balanced", cpu_ms_per_s, nodes, np.random.default_rng(0)):
        node[r] = k
    return node


def _memory_hits(load: RegionLoad, node: np.ndarray, nodes: int, block_kb: float,
                 blocks_per_s: np.ndarray, st: SimulatorSettings, cache_share: float) -> np.ndarray:
    """Share of each region's block reads served from memory (block cache + page cache, one
    LRU of both sizes, Che's approximation, warm: simulator.cache without the warm-up)."""
    h = st.hardware
    hot_req = load.hot_req if load.hot_req is not None else np.ones(len(node))
    hot_size = load.hot_size if load.hot_size is not None else np.ones(len(node))
    blocks = load.size_mb * 1024.0 / block_kb
    seg_node = np.concatenate([node, node])
    seg_blocks = np.concatenate([blocks * hot_size, blocks * (1.0 - hot_size)])
    seg_rate = np.concatenate([blocks_per_s * hot_req, blocks_per_s * (1.0 - hot_req)]) + 1e-9
    cache_blocks = h.heap_mb * cache_share * 1024.0 / block_kb
    page_blocks = max(h.ram_mb - h.heap_mb - h.os_mb, 0.0) * 1024.0 / block_kb
    mem = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, np.full(nodes, cache_blocks + page_blocks))
    m = len(node)
    return hot_req * mem[:m] + (1.0 - hot_req) * mem[m:]


def steady_state(load: RegionLoad, nodes: int, settings: SimulatorSettings | None = None, *,
                 profile: str = "default", timeout_ms: float = 1000.0) -> SteadyState:
    """The latency `nodes` nodes of `profile` give `load` at steady state (module docstring)."""
    if nodes < 1:
        raise ValueError("nodes must be at least 1")
    st = settings or SimulatorSettings()
    h, p = st.hardware, st.profiles[profile]
    c = capacity.on_shared_machine(st.costs, nodes, h.shared_machine_cost_growth)
    reads, writes, scans = (np.asarray(a, dtype=float) for a in (load.reads, load.writes, load.scans))
    b = np.full(len(reads), p.block_kb)
    cpu = reads * capacity.get_cpu_ms(b, c) + scans * capacity.scan_cpu_ms(b, c) + writes * c.put_cpu_ms
    node = _placement(cpu, nodes)
    blocks_per_s = reads + scans * capacity.scan_blocks(b, c)
    miss = 1.0 - _memory_hits(load, node, nodes, p.block_kb, blocks_per_s, st, p.block_cache_share)
    written = np.bincount(node[writes > 0], minlength=nodes).astype(float)
    flush = np.minimum(c.max_flush_mb, h.heap_mb * p.memstore_share / np.maximum(written[node], 1.0))
    miss_ms = float(capacity.miss_disk_ms(np.array(p.block_kb), h))
    disk_reads = blocks_per_s * miss  # random reads per second
    disk = disk_reads * miss_ms + writes * capacity.put_disk_ms(np.asarray(load.size_mb, dtype=float), flush, c, h)
    util_cpu = np.bincount(node, weights=cpu, minlength=nodes) / (h.cores * 1000.0)
    util_disk = np.bincount(node, weights=disk, minlength=nodes) / 1000.0
    busiest = float(max(util_cpu.max(), util_disk.max()))
    tenant = np.zeros(len(reads), dtype=int) if load.tenant is None else np.asarray(load.tenant, dtype=int)
    tenants = int(tenant.max(initial=0)) + 1
    if busiest >= 1.0:
        return SteadyState(nodes, math.inf, (math.inf,) * tenants, math.inf, 1.0, busiest, True)
    return _latency(reads + writes + scans, cpu, disk, disk_reads, writes, node, tenant, tenants,
                    util_cpu, util_disk, miss_ms, nodes, busiest, st, timeout_ms)


def _latency(requests: np.ndarray, cpu: np.ndarray, disk: np.ndarray, disk_reads: np.ndarray,
             writes: np.ndarray, node: np.ndarray, tenant: np.ndarray, tenants: int,
             util_cpu: np.ndarray, util_disk: np.ndarray, miss_ms: float, nodes: int,
             busiest: float, st: SimulatorSettings, timeout_ms: float) -> SteadyState:
    """Per tenant, a mixture over nodes of delays + service + M/M/c CPU wait + disk waits."""
    c, h = st.costs, st.hardware

    def per(values: np.ndarray) -> np.ndarray:  # (tenants, nodes) sums over regions
        out = np.zeros((tenants, nodes))
        np.add.at(out, (tenant, node), values)
        return out
    weight = per(requests)
    base = per(requests * (h.network_rtt_ms + c.rpc_floor_ms) + writes * c.wal_sync_ms)
    with np.errstate(divide="ignore", invalid="ignore"):
        each = np.where(weight > 0, 1.0 / weight, 0.0)
        cpu_per_req = np.where(weight.sum(axis=0) > 0, util_cpu * h.cores * 1000.0 / weight.sum(axis=0), 0.0)
    p_cpu, w_cpu = solver.station_wait(np.full(nodes, h.cores), util_cpu, cpu_per_req)
    p_disk, w_disk = solver.station_wait(np.ones(nodes), util_disk, np.full(nodes, miss_ms))
    visits = per(disk_reads) * each  # random reads per request at the disk
    mix = solver.LatencyMix(weight, (base + per(cpu) + per(disk)) * each, np.zeros(weight.shape),
                            np.zeros(weight.shape), np.broadcast_to(p_cpu, weight.shape),
                            np.broadcast_to(w_cpu, weight.shape), np.minimum(visits, 1.0) * p_disk,
                            visits * w_disk).under_quota(util_cpu, h.cpu_quota_period_ms, h.cpu_quota_run_share,
                                                         *(capacity.quota_stops(util_cpu, weight.sum(axis=0), h) or ()))
    p99 = mix.quantile_ms()
    totals = weight.sum(axis=1)
    late = mix.survival(np.full((tenants, 1), timeout_ms))[:, 0]
    everyone = max(float(totals.sum()), 1e-300)
    mean = float(np.nansum(mix.mean_ms() * totals) / everyone)
    return SteadyState(nodes, float(np.nanmax(p99, initial=0.0)), tuple(float(v) for v in p99), mean,
                       float((late * totals).sum() / everyone), busiest, False)


def smallest_nodes(load: RegionLoad, slo_latency_ms: float, settings: SimulatorSettings | None = None,
                   *, slo_max_failed: float = 0.001, profile: str = "default",
                   timeout_ms: float = 1000.0, max_nodes: int = 1000) -> int | None:
    """The fewest nodes whose steady state meets the SLO (every tenant's p99 within
    slo_latency_ms, at most slo_max_failed of the requests over timeout_ms); None if even
    max_nodes do not. Searches up from the CPU bound by doubling, then bisects: it takes
    meeting the SLO to be monotone in the node count (true up to the balanced placement's
    granularity, which can make one size meet where the next does not)."""
    st = settings or SimulatorSettings()
    c, h = st.costs, st.hardware
    p = st.profiles[profile]
    b = np.array(p.block_kb)
    work = (np.sum(load.reads) * float(capacity.get_cpu_ms(b, c)) + np.sum(load.writes) * c.put_cpu_ms
            + np.sum(load.scans) * float(capacity.scan_cpu_ms(b, c)))
    lo = max(1, math.ceil(work / (h.cores * 1000.0)))  # below this the CPUs saturate

    def ok(n: int) -> bool:
        return steady_state(load, n, st, profile=profile, timeout_ms=timeout_ms).meets(slo_latency_ms, slo_max_failed)
    if lo > max_nodes:
        return None
    if ok(lo):
        return lo
    hi = lo
    while not ok(hi):
        if hi >= max_nodes:
            return None
        lo, hi = hi, min(max_nodes, hi * 2)
    while hi - lo > 1:  # ok(hi), not ok(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def scenario_load(scenario: Scenario, t0_s: float, t1_s: float, settings: SimulatorSettings | None = None,
                  closed_ops_per_s: np.ndarray | None = None) -> RegionLoad:
    """The load a scenario offers over [t0_s, t1_s), per region as the run starts (each
    workload's table in its `regions` equal key ranges, YCSB's hotspot): open workloads their
    mean scheduled rate (noise included, not the Poisson draws); closed ones
    `closed_ops_per_s[i]` (e.g. what a run served of them in that minute), else nothing. The
    tenant of each region is its workload's index."""
    st = settings or SimulatorSettings()
    c = st.costs
    rates = Arrivals(scenario.workloads, scenario.seed).mean_rates(t0_s, t1_s)
    if closed_ops_per_s is not None:
        closed = np.array([not w.open_loop for w in scenario.workloads])
        rates = np.where(closed, np.asarray(closed_ops_per_s, dtype=float), rates)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("reads", "writes", "scans", "size_mb", "tenant", "hot_req", "hot_size")}
    for i, w in enumerate(scenario.workloads):
        mix = w.op_mix()
        share, hot_req, hot_size = capacity.hotspot_shares(w.regions, w.hot_data_fraction, w.hot_ops_fraction)
        ins = np.zeros(w.regions)
        ins[-1] = 1.0  # YCSB's ordered inserts append to the last region
        lam = rates[i]
        cols["reads"].append(lam * share * (mix.get("read", 0.0) + mix.get("rmw", 0.0)))
        cols["scans"].append(lam * share * mix.get("scan", 0.0))
        cols["writes"].append(lam * (share * (mix.get("update", 0.0) + mix.get("rmw", 0.0)) + ins * mix.get("insert", 0.0)))
        cols["size_mb"].append(np.full(w.regions, w.records * c.record_kb * c.storage_overhead / 1024.0 / w.regions))
        cols["tenant"].append(np.full(w.regions, i))
        cols["hot_req"].append(hot_req)
        cols["hot_size"].append(hot_size)
    a = {k: np.concatenate(v) for k, v in cols.items()}
    return RegionLoad(a["reads"], a["writes"], a["scans"], a["size_mb"], a["tenant"].astype(int),
                      a["hot_req"], a["hot_size"])
