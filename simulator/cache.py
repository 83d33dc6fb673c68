"""The block cache and the page cache: what each node's profile gives to the cache and the
memstore, and every region's hit ratios (steady state, warm-up since it opened, block cache
plus page cache) from Che's approximation (simulator.capacity.che_hit_ratios)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from simulator import capacity
from simulator.nodes import SimNode
from simulator.regions import Regions
from simulator.settings import CostSettings, HardwareSettings, ProfileSettings


def profile_arrays(nodes: Sequence[SimNode], profiles: Mapping[str, ProfileSettings]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: block-cache share of the heap, memstore share, block size (KiB)."""
    cache = np.array([profiles[n.profile].block_cache_share for n in nodes])
    memst = np.array([profiles[n.profile].memstore_share for n in nodes])
    block = np.array([profiles[n.profile].block_kb for n in nodes])
    return cache, memst, block


def update(regions: Regions, nodes: Sequence[SimNode], profiles: Mapping[str, ProfileSettings],
           h: HardwareSettings, c: CostSettings, x_region: np.ndarray, p_get: np.ndarray,
           p_scan: np.ndarray, t: float) -> None:
    """Recompute every served region's hit ratios at time t. Per region: x_region is its
    workload's throughput (ops/s), p_get and p_scan the shares of its workload's requests
    that get (a read-modify-write included) and scan."""
    if not nodes:
        return
    cache, _, block = profile_arrays(nodes, profiles)
    idx = np.where(regions.server >= 0)[0]
    if idx.size == 0:
        return
    # block reads per second per region at the current load, hot and cold parts
    blocks_per_req = p_get + p_scan * capacity.scan_blocks(block[np.maximum(regions.server, 0)], c)
    rate = x_region * regions.share * blocks_per_req
    hot_rate, cold_rate = rate * regions.hot_req, rate * (1.0 - regions.hot_req)
    node = regions.server[idx]
    b = block[node]
    size_kb = regions.read_mb[idx] * 1024.0
    hot_blocks = size_kb * regions.hot_size[idx] / b
    cold_blocks = size_kb * (1.0 - regions.hot_size[idx]) / b
    seg_node = np.concatenate([node, node])
    seg_blocks = np.concatenate([hot_blocks, cold_blocks])
    # a region that is not read yet still gets a token rate so the cache model sees it
    seg_rate = np.concatenate([hot_rate[idx], cold_rate[idx]]) + 1e-9
    cache_blocks = h.heap_mb * cache * 1024.0 / np.maximum(block, 1e-9)
    times = capacity.che_times(seg_node, seg_blocks, seg_rate, cache_blocks)
    hit = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, cache_blocks, times=times)
    age = t - regions.opened_at[idx]
    seg_age = np.concatenate([age, age])
    m = idx.size
    hr = regions.hot_req[idx]
    steady = hr * hit[:m] + (1.0 - hr) * hit[m:]
    cached_kb = (hot_blocks * hit[:m] + cold_blocks * hit[m:]) * b
    # Prefetch on open (simulator.background): the share `pf` of a region's files read so far
    # is in the cache whatever was requested. Where the node's data does not fit its cache,
    # that is more than the region keeps in the steady state, and the LRU makes room by
    # evicting the blocks read least recently, other regions' included; the surplus leaves
    # once unread for the node's characteristic time T (Che). Meanwhile the other regions
    # warm as in a cache that much smaller: the HBase guide's warning, priced.
    pf = regions.prefetched[idx]
    surplus_kb = np.where((pf > 0) & (age < times[node]),
                          np.maximum(pf * size_kb - cached_kb, 0.0), 0.0)
    if np.any(surplus_kb > 0):
        room = np.maximum(cache_blocks - np.bincount(node, weights=surplus_kb / b,
                                                     minlength=len(cache_blocks)), 0.0)
        warm = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, room, seg_age_s=seg_age)
    else:
        warm = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, cache_blocks,
                                       seg_age_s=seg_age, times=times)
    # a block is cached if the prefetch read it or a request did since the region opened,
    # never beyond the steady state's share
    seg_pf = np.concatenate([pf, pf])
    warm = np.minimum(hit, 1.0 - (1.0 - seg_pf) * (1.0 - warm))
    now = hr * warm[:m] + (1.0 - hr) * warm[m:]
    regions.hit[idx] = steady
    # warmth: the share of the steady-state hit ratio reached since the region opened
    regions.warmth[idx] = np.where(steady > 0, np.minimum(1.0, now / np.maximum(steady, 1e-12)), 1.0)
    regions.cached_kb[idx] = cached_kb
    # A block the block cache misses is read through the DataNode from its files, and
    # Linux keeps recently read file pages in the page cache (HDFS does not bypass it), so
    # it costs a disk read only when it is in neither. Both are LRU-like and see the same
    # reference stream, so memory hits are approximated as one LRU of both sizes (Che
    # again; an exclusive-hierarchy approximation); the page cache is the RAM left after
    # the heap and os_mb, and starts empty like the block cache.
    page_blocks = max(h.ram_mb - h.heap_mb - h.os_mb, 0.0) * 1024.0 / np.maximum(block, 1e-9)
    mem = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, cache_blocks + page_blocks,
                                  seg_age_s=seg_age)
    page_age = t - regions.page_since[idx]
    if np.any(page_age > age):
        # A split daughter: cold block cache, but the page cache still holds its parent's
        # file pages. Memory serves at least what the page cache alone would hold since
        # then (the same LRU with the page cache's size and age); for every other region
        # both ages are equal and this bound is below the combined one.
        page = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, page_blocks,
                                       seg_age_s=np.concatenate([page_age, page_age]))
        mem = np.maximum(mem, page)
    mem = np.maximum(mem, warm)  # what the block cache holds is in memory
    regions.mem_hit[idx] = hr * mem[:m] + (1.0 - hr) * mem[m:]
