"""The capacity model: what one operation costs a node, by operation and node profile, and how
full the block cache keeps what the node serves. Pure numpy functions over arrays of regions;
the constants come from `simulator.settings` with their sources.

Model, per region r served by node k with profile p (block size b, cache and memstore shares):

* get   cpu = rpc + block + seek · b/64   (the linear seek inside a block scales with its size)
        disk = (1 − hit_r) · (random_read + b / seq_bw)     one block per get
* scan  blocks = 1 + rows·record/b;  cpu = rpc + seek · b/64 + blocks · block + rows · row
        disk = (1 − hit_r) · blocks · (random_read + b / seq_bw)  HBase reads each block with a
        positional read, so a missed block costs a seek; bigger blocks mean fewer of them.
* put   cpu = put_cpu_ms;  disk = record · overhead · replication · (1 + amplification) / seq_bw,
        amplification = 1 + log_ratio(store size / flush size), flush size = min(128 MiB,
        memstore / regions written on the node): a small memstore flushes small files that are
        compacted more often (HBase's minor compactions merge `compaction_ratio` files).
* rmw   a get plus a put (YCSB read-modify-write).

A missed block that is not local (HDFS locality < 1) also waits one more network hop.

The hit ratio comes from Che's approximation of an LRU cache (Che, Tung, Wang 2002): a block
read λ times a second stays cached with probability 1 − exp(−λ·T), where the node's
characteristic time T fills the cache exactly: Σ blocks · (1 − exp(−λ·T)) = cache blocks. Scans
therefore pollute a shared cache in proportion to the blocks they touch, and a node that holds
only one kind of partition keeps more of them — the mechanism behind MET §3.4.
"""
from __future__ import annotations

import numpy as np

from simulator import solver
from simulator.settings import CostSettings, HardwareSettings


# The costs a RegionServer's CPU pays per request (the client's and the disk's are apart).
SERVER_CPU_COSTS = ("get_cpu_ms", "rpc_cpu_ms", "block_cpu_ms", "put_cpu_ms", "scan_row_cpu_ms")


def on_shared_machine(c: CostSettings, servers: int, growth: float) -> CostSettings:
    """`c` with every server CPU cost times 1 + growth · ln(servers): RegionServers that share
    one machine each spend more CPU per request the more of them serve
    (HardwareSettings.shared_machine_cost_growth; 0 leaves `c` as it is)."""
    if growth <= 0 or servers <= 1:
        return c
    f = 1.0 + growth * float(np.log(servers))
    return c.model_copy(update={k: getattr(c, k) * f for k in SERVER_CPU_COSTS})


def hotspot_shares(n_regions: int, hot_data: float, hot_ops: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """YCSB's hotspot generator over ordered keys split into equal regions.

    Returns per region: its share of the table's requests, the fraction of its requests that
    fall in the hot key range, and the fraction of its keys that are hot. (MET §3.1: 50 % of
    the requests on 40 % of the keys; with 4 regions: 31/27/21/21 %, the paper measured
    34/26/20/20 %.)"""
    i = np.arange(n_regions)
    return key_range_shares(i / n_regions, (i + 1) / n_regions, hot_data, hot_ops)


def key_range_shares(lo: np.ndarray, hi: np.ndarray, hot_data: float,
                     hot_ops: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """YCSB's hotspot generator over key ranges [lo, hi) of a table's ordered key space
    (fractions of it, 0..1): the hot range [0, hot_data) gets hot_ops of the requests, spread
    evenly over its keys, and the cold range the rest. A region's load follows from its range
    alone, so a region split in two (simulator.regions: Regions.split) gives each daughter the
    requests that fall in its half.

    Returns per range: its share of the table's requests, the fraction of its requests that
    fall in the hot range, and the fraction of its keys that are hot."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    width = np.clip(hi - lo, 0.0, None)
    hot = np.clip(np.minimum(hi, hot_data) - lo, 0.0, width)
    cold = width - hot
    hot_density = hot_ops / hot_data
    cold_density = (1.0 - hot_ops) / (1.0 - hot_data) if hot_data < 1.0 else 0.0
    # requests over the whole key space: 1 unless every key is hot (then only hot_ops of them
    # are described by the densities, and the shares are scaled back to 1)
    total = hot_data * hot_density + (1.0 - hot_data) * cold_density
    hot_req = hot * hot_density
    cold_req = cold * cold_density
    share = (hot_req + cold_req) / total if total > 0 else width.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        hot_req_frac = np.where(hot_req + cold_req > 0, hot_req / (hot_req + cold_req), 0.0)
        hot_size = np.where(width > 0, hot / width, 0.0)
    return share, np.clip(hot_req_frac, 0.0, 1.0), np.clip(hot_size, 0.0, 1.0)


def _seek_ms(block_kb: np.ndarray, c: CostSettings) -> np.ndarray:
    """Finding a key inside a block: HFile blocks are searched linearly (half a block on average)."""
    return max(c.get_cpu_ms - c.rpc_cpu_ms - c.block_cpu_ms, 0.0) * block_kb / 64.0


def get_cpu_ms(block_kb: np.ndarray, c: CostSettings) -> np.ndarray:
    return c.rpc_cpu_ms + c.block_cpu_ms + _seek_ms(block_kb, c)


def scan_blocks(block_kb: np.ndarray, c: CostSettings) -> np.ndarray:
    return 1.0 + c.mean_scan_rows * c.record_kb * c.storage_overhead / block_kb


def scan_cpu_ms(block_kb: np.ndarray, c: CostSettings) -> np.ndarray:
    return (c.rpc_cpu_ms + _seek_ms(block_kb, c) + scan_blocks(block_kb, c) * c.block_cpu_ms
            + c.mean_scan_rows * c.scan_row_cpu_ms)


def miss_disk_ms(block_kb: np.ndarray, h: HardwareSettings) -> np.ndarray:
    return h.disk_random_read_ms + block_kb / 1024.0 / h.disk_seq_mb_s * 1000.0


def quota_stops(busy: np.ndarray, requests_per_s: np.ndarray,
                h: HardwareSettings) -> tuple[np.ndarray, np.ndarray | None] | None:
    """The share of the time each node under a control-group CPU quota is stopped (a request
    arriving then waits the stop's rest) and what rest of a stop such a request waits: from
    the share of its quota it asks, its utilisation plus its wake-ups (solver.quota_asked),
    the dispersion of a period's demand and a stop's length per demand over the quota
    (solver.quota_stopped_share, solver.quota_stop_rest: None, a uniform rest of a whole
    stop, without cpu_quota_stop_per_excess). None where the model has no such stops: no
    quota, or neither wake-ups nor dispersion (a node at most fully used then never stops
    that way)."""
    if h.cpu_quota_period_ms <= 0 or (h.cpu_wakeup_ms <= 0 and h.cpu_quota_dispersion <= 0):
        return None
    asked = solver.quota_asked(busy, requests_per_s, h.cpu_wakeup_ms, h.cpu_wakeup_window_ms, h.cores)
    args = (h.cpu_quota_dispersion, h.cpu_quota_run_share, h.cpu_quota_stop_per_excess)
    return solver.quota_stopped_share(asked, *args), solver.quota_stop_rest(asked, *args)


def put_disk_ms(size_mb: np.ndarray, flush_mb: np.ndarray, c: CostSettings, h: HardwareSettings) -> np.ndarray:
    rounds = np.log(np.maximum(size_mb / np.maximum(flush_mb, 1e-6), 1.0)) / np.log(c.compaction_ratio)
    amplification = 1.0 + rounds
    mb = c.record_kb * c.storage_overhead / 1024.0 * h.replication * (1.0 + amplification)
    return mb / h.disk_seq_mb_s * 1000.0


def che_times(seg_node: np.ndarray, seg_blocks: np.ndarray, seg_rate: np.ndarray,
              cache_blocks: np.ndarray, iterations: int = 64) -> np.ndarray:
    """Each node's characteristic time T (s): a block stays cached iff it was read within the
    last T seconds (Che et al. 2002); inf where everything that is read fits. Arguments as
    for che_hit_ratios. Vectorised bisection on log T for all nodes at once."""
    n_nodes = cache_blocks.shape[0]
    lam = np.where(seg_blocks > 0, seg_rate / np.maximum(seg_blocks, 1e-12), 0.0)
    total_blocks = np.bincount(seg_node, weights=seg_blocks * (lam > 0), minlength=n_nodes)
    fits = total_blocks <= cache_blocks  # everything that is read fits: all hits
    lo = np.full(n_nodes, -30.0)
    hi = np.full(n_nodes, 40.0)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        t = np.exp(mid)[seg_node]
        occ = np.bincount(seg_node, weights=seg_blocks * -np.expm1(-lam * t), minlength=n_nodes)
        over = occ > cache_blocks
        hi = np.where(over, mid, hi)
        lo = np.where(over, lo, mid)
    return np.where(fits, np.inf, np.exp(0.5 * (lo + hi)))


def che_hit_ratios(seg_node: np.ndarray, seg_blocks: np.ndarray, seg_rate: np.ndarray,
                   cache_blocks: np.ndarray, iterations: int = 64,
                   seg_age_s: np.ndarray | None = None, times: np.ndarray | None = None
                   ) -> np.ndarray:
    """Hit ratio of every cache segment (a group of blocks read at the same rate per block).

    seg_node: node index of each segment; seg_blocks: blocks in it; seg_rate: block reads per
    second on the whole segment; cache_blocks: capacity per node; times: che_times' result
    for the same arguments when the caller has it already.

    seg_age_s (optional): seconds since the segment's region opened on the node with an empty
    cache. Warm-up follows the same approximation: under independent references a block is
    cached iff it was read within the last T seconds (Che et al. 2002), and a cache that
    started empty `age` seconds ago holds it iff it was read since then, so the hit ratio is
    1 − exp(−λ·min(T, age)). (HBase caches a block when a read misses it, cacheDataOnRead
    default true, and prefetch on open is off by default: a region that moves starts cold;
    simulator.cache adds what a prefetch read.)"""
    if seg_node.size == 0:
        return np.zeros(0)
    lam = np.where(seg_blocks > 0, seg_rate / np.maximum(seg_blocks, 1e-12), 0.0)
    if times is None:
        times = che_times(seg_node, seg_blocks, seg_rate, cache_blocks, iterations)
    t = times[seg_node]
    if seg_age_s is not None:
        t = np.minimum(t, np.maximum(seg_age_s, 0.0))
    with np.errstate(invalid="ignore"):
        hit = -np.expm1(-lam * t)
    return np.where(lam > 0, np.nan_to_num(hit, nan=1.0), 0.0)
