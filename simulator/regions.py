"""Region geometry: the per-region arrays (index = region) and what changes their number or
shape — a table's regions built from its workload, a daughter appended by a split, a key range
cut in two. No nodes and no clock: simulator.store decides when a region opens, moves or splits.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from simulator import capacity
from simulator.scenario import Workload
from simulator.settings import CostSettings


def new_region_ids(rng: np.random.Generator, n: int) -> list[str]:
    """Deterministic 32-hex names (like HBase encoded names), from the seeded generator."""
    raw = rng.integers(0, 2**63, size=(n, 2))
    return [f"{a:016x}{b:016x}"[:32] for a, b in raw]


@dataclass
class Regions:
    """One entry per region in every array and list. A split appends a region (`grow`), so
    every field grows with it; tests/simulator/test_regions.py fails when one does not."""

    ids: list[str]  # HBase encoded names
    tables: list[str]
    cls: np.ndarray  # workload index (the table's workload)
    share: np.ndarray  # share of its workload's requests (YCSB's hotspot over its key range)
    ins: np.ndarray  # 1 for the region YCSB's ordered inserts append to, else 0
    hot_req: np.ndarray  # fraction of its requests that fall on hot keys
    hot_size: np.ndarray  # fraction of its keys that are hot
    lo: np.ndarray  # key range [lo, hi), fractions of the table's loaded key space
    hi: np.ndarray
    size: np.ndarray  # MiB stored
    # YCSB draws read and scan keys from the records loaded at the start (its key chooser's
    # bounds are fixed at recordcount), so inserts grow a region but not what is read.
    read_mb: np.ndarray
    server: np.ndarray  # node index serving it, -1 offline
    assigned: np.ndarray  # node index the store reports
    open_at: np.ndarray  # offline until (when server == -1 and a target is set)
    open_target: np.ndarray  # node it opens on (-1 none, -2 any live node after a failover)
    locality: np.ndarray  # fraction of its data on its server's disk
    home: np.ndarray  # node that wrote most of its data
    warmth: np.ndarray  # share of the steady-state block-cache hit ratio reached since it opened
    hit: np.ndarray  # steady-state block-cache hit ratio on its current node
    cached_kb: np.ndarray
    block_rate: np.ndarray
    reads: np.ndarray  # cumulative counters since it last opened (HBase restarts them at 0)
    writes: np.ndarray
    scans: np.ndarray
    # Nodes in the cluster when the data was written: its replicas are spread over them
    # (MET §6.4: the initial state has 100 % locality on the initial nodes).
    written_at_nodes: np.ndarray
    opened_at: np.ndarray  # when it last opened on a cold block cache
    mem_hit: np.ndarray  # reads served from block cache or page cache (no disk)
    # A split daughter reads its parent's files through reference files until a compaction
    # rewrites them, and HBase cannot split a region that still has references (HBase
    # reference guide, "RegionServer Splitting Implementation").
    refs: np.ndarray
    # since when its files' pages are cached by its node's page cache: reset with the block
    # cache when it opens on a server, kept by a split (the daughters read the same files)
    page_since: np.ndarray
    # share of its files read into its server's block cache by a prefetch since it opened
    # (hbase.rs.prefetchblocksonopen; 0 where its server does not prefetch)
    prefetched: np.ndarray

    @classmethod
    def build(cls, workloads: tuple[Workload, ...], c: CostSettings, initial_nodes: int,
              rng: np.random.Generator) -> "Regions":
        """Each workload's table in equal key ranges, none placed yet."""
        wl, share, ins, hot_req, hot_size, size, tables, lo, hi = [], [], [], [], [], [], [], [], []
        for ci, w in enumerate(workloads):
            s, hr, hs = capacity.hotspot_shares(w.regions, w.hot_data_fraction, w.hot_ops_fraction)
            table_mb = w.records * c.record_kb * c.storage_overhead / 1024.0
            for ri in range(w.regions):
                wl.append(ci)
                share.append(s[ri])
                # YCSB ordered inserts append at the end of the key space: the last region.
                ins.append(1.0 if ri == w.regions - 1 else 0.0)
                hot_req.append(hr[ri])
                hot_size.append(hs[ri])
                size.append(table_mb / w.regions)
                tables.append(f"usertable_{w.name.lower()}")
                lo.append(ri / w.regions)
                hi.append((ri + 1) / w.regions)
        n = len(wl)
        return cls(
            ids=new_region_ids(rng, n), tables=tables, cls=np.array(wl, dtype=int),
            share=np.array(share), ins=np.array(ins), hot_req=np.array(hot_req),
            hot_size=np.array(hot_size), lo=np.array(lo), hi=np.array(hi), size=np.array(size),
            read_mb=np.array(size), server=np.full(n, -1, dtype=int),
            assigned=np.full(n, -1, dtype=int), open_at=np.zeros(n),
            open_target=np.full(n, -1, dtype=int), locality=np.ones(n),
            home=np.full(n, -1, dtype=int), warmth=np.ones(n), hit=np.ones(n),
            cached_kb=np.zeros(n), block_rate=np.zeros(n), reads=np.zeros(n), writes=np.zeros(n),
            scans=np.zeros(n), written_at_nodes=np.full(n, initial_nodes),
            opened_at=np.full(n, -np.inf), mem_hit=np.ones(n), refs=np.zeros(n, dtype=bool),
            page_since=np.full(n, -np.inf), prefetched=np.zeros(n))

    def __len__(self) -> int:
        return len(self.ids)

    def grow(self, r: int) -> int:
        """Append one region, a copy of region r in every array and list; return its index.
        (Existing indices stay: transfers and compactions refer to them.)"""
        for f in fields(self):
            a = getattr(self, f.name)
            if isinstance(a, list):
                a.append(a[r])
            else:
                setattr(self, f.name, np.concatenate([a, a[r:r + 1]]))
        return len(self.ids) - 1

    def split(self, r: int, w: Workload, rng: np.random.Generator) -> int:
        """Cut region r in two: r becomes the left daughter, the right one is appended; both get
        new ids (HBase daughters get new encoded names). Returns the right daughter's index.

        Split point: the middle of the region's data (HBase: the middle key of its largest
        store file). The loaded records are spread evenly over [lo, hi) and ordered inserts
        are appended after hi, so the middle falls inside the range unless inserts are more
        than half the region; then the left daughter keeps every loaded key."""
        lo, hi = float(self.lo[r]), float(self.hi[r])
        loaded, total = float(self.read_mb[r]), float(self.size[r])
        half = total / 2.0
        left_loaded = min(loaded, half)
        mid = lo + (hi - lo) * (left_loaded / loaded if loaded > 0 else 1.0)
        b = self.grow(r)
        self.ids[r], self.ids[b] = new_region_ids(rng, 2)
        self.lo[r], self.hi[r], self.lo[b], self.hi[b] = lo, mid, mid, hi
        share, hot_req, hot_size = capacity.key_range_shares(
            np.array([lo, mid]), np.array([mid, hi]), w.hot_data_fraction, w.hot_ops_fraction)
        self.share[[r, b]] = share
        self.hot_req[[r, b]] = hot_req
        self.hot_size[[r, b]] = hot_size
        # new keys are appended at the end of the key space: the right daughter's (it keeps
        # the parent's ins), so splitting the insert region does not spread its writes
        self.ins[r] = 0.0
        self.size[r], self.size[b] = half, total - half
        self.read_mb[r], self.read_mb[b] = left_loaded, loaded - left_loaded
        return b

    def record_served(self, gets: np.ndarray, scans: np.ndarray, puts: np.ndarray,
                      inserted_mb: np.ndarray, written_mb: np.ndarray) -> None:
        """Count one step's requests on the regions that are served; inserts grow them, and
        new store files are written locally: locality creeps back with writes."""
        served = self.server >= 0
        self.reads += np.where(served, gets, 0.0)
        self.scans += np.where(served, scans, 0.0)
        self.writes += np.where(served, puts, 0.0)
        self.size += np.where(served, inserted_mb, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(self.size > 0, np.minimum(1.0, written_mb / self.size), 0.0)
        self.locality = np.where(served, self.locality + (1.0 - self.locality) * frac, self.locality)
