"""Work the nodes do besides serving requests: region data streamed to a new server (transfer
modes incremental and parallel), compactions (a rewrite of a region's files on its node) and
prefetches (a region's files read into its new server's block cache as it opens), each
progressing every step and taking CPU and disk from the nodes that do it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from simulator.regions import Regions
from simulator.settings import ActionSettings, HardwareSettings

# Background work never takes a whole node: requests keep a share of its CPU and disk.
# Assumption: a 5 % floor keeps the demand stretch (1 / (1 - background)) finite.
MAX_BACKGROUND_SHARE = 0.95


@dataclass
class Transfer:
    region: int
    source: int
    target: int
    remaining_mb: float
    batch: bool  # parallel mode: served only when every copy to the target has arrived


@dataclass
class Prefetch:
    region: int
    node: int
    remaining_mb: float
    total_mb: float


@dataclass
class Background:
    """Transfers, compactions and prefetches under way, and the utilisation they took in the
    last step."""

    transfers: list[Transfer] = field(default_factory=list)
    compactions: dict[int, tuple[int, float]] = field(default_factory=dict)  # region -> (node, MiB left)
    prefetches: list[Prefetch] = field(default_factory=list)  # in the order the regions opened
    load: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))  # (cpu, disk) per node

    def start_prefetch(self, r: int, node: int, mb: float) -> None:
        self.prefetches = [pf for pf in self.prefetches if pf.region != r]
        self.prefetches.append(Prefetch(r, node, mb, mb))

    def moving(self, r: int) -> bool:
        return any(tr.region == r for tr in self.transfers)

    def progress(self, dt: float, k: int, a: ActionSettings, h: HardwareSettings,
                 finish_transfer: Callable[[Transfer], None],
                 compacted: Callable[[int, int], None], served_by: Callable[[int], int],
                 read_shares: Callable[[int], np.ndarray], prefetched: Callable[[int, float], None],
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Advance everything by dt over k nodes; return the CPU and disk share each node gave
        to it. finish_transfer(tr) runs for each copy that arrived (before compactions move
        on, as its region closes), compacted(region, node) for each compaction that ended;
        served_by(region) is its server now (a compaction or prefetch whose region left is
        abandoned); read_shares(region): per node, the share of the region's file reads its
        disk serves; prefetched(region, fraction): the share of its files now in the cache."""
        bg_cpu = np.zeros(k)
        bg_disk = np.zeros(k)
        self._stream(dt, a, h, bg_cpu, bg_disk)
        keep: list[Transfer] = []
        for tr in self.transfers:
            if tr.remaining_mb > 1e-9:
                keep.append(tr)
            elif tr.batch and any(o.target == tr.target and o.batch and o.remaining_mb > 1e-9
                                  for o in self.transfers):
                keep.append(tr)  # parallel: served only once every copy to the target arrived
            else:
                finish_transfer(tr)
        self.transfers = keep
        # Compactions rewrite the region locally: sequential read + write on its node.
        for r in list(self.compactions):
            node, remaining = self.compactions[r]
            if served_by(r) != node:
                del self.compactions[r]  # moved away: the compaction is abandoned
                continue
            mb = min(remaining, a.compaction_mb_s * dt)
            bg_disk[node] += 2 * mb / h.disk_seq_mb_s / dt
            bg_cpu[node] += mb * a.compaction_cpu_ms_per_mb / 1000.0 / dt / h.cores
            remaining -= mb
            if remaining <= 1e-9:
                del self.compactions[r]
                compacted(r, node)
            else:
                self.compactions[r] = (node, remaining)
        if self.prefetches:
            self._prefetch(dt, a, h, bg_cpu, bg_disk, served_by, read_shares, prefetched)
        self.load = (np.minimum(bg_cpu, MAX_BACKGROUND_SHARE), np.minimum(bg_disk, MAX_BACKGROUND_SHARE))
        return self.load

    def _stream(self, dt: float, a: ActionSettings, h: HardwareSettings, bg_cpu: np.ndarray,
                bg_disk: np.ndarray) -> None:
        """Transfers: incremental = one active copy per target (FIFO, one source at a time);
        parallel = every copy to a target at once, sharing its link."""
        active: dict[int, list[Transfer]] = {}
        for tr in self.transfers:
            if tr.remaining_mb <= 0:
                continue
            lst = active.setdefault(tr.target, [])
            if tr.batch or not lst:
                lst.append(tr)
        for target, trs in active.items():
            rate = min(a.sender_mb_s, a.receiver_mb_s / len(trs))
            for tr in trs:
                mb = min(tr.remaining_mb, rate * dt)
                tr.remaining_mb -= mb
                cpu = mb * a.transfer_cpu_ms_per_mb / 1000.0 / dt / h.cores
                bg_cpu[tr.source] += cpu
                bg_cpu[target] += cpu
                bg_disk[tr.source] += mb / h.disk_seq_mb_s / dt
                bg_disk[target] += mb / h.disk_seq_mb_s / dt

    def _prefetch(self, dt: float, a: ActionSettings, h: HardwareSettings, bg_cpu: np.ndarray,
                  bg_disk: np.ndarray, served_by: Callable[[int], int],
                  read_shares: Callable[[int], np.ndarray],
                  prefetched: Callable[[int, float], None]) -> None:
        """One prefetch at a time per node, in the order its regions opened: the files are read
        in order, so the disks that hold them bound the rate (at most prefetch_disk_share of
        each), and so does the node's CPU (prefetch_cpu_ms_per_mb)."""
        keep: list[Prefetch] = []
        busy: set[int] = set()
        for pf in self.prefetches:
            if served_by(pf.region) != pf.node:
                continue  # moved away or closed: its new server starts its own
            if pf.node in busy:
                keep.append(pf)
                continue
            busy.add(pf.node)
            shares = read_shares(pf.region)  # per node, summing to 1
            mb = min(pf.remaining_mb, a.prefetch_disk_share * h.disk_seq_mb_s * dt / float(shares.max()))
            if a.prefetch_cpu_ms_per_mb > 0:
                mb = min(mb, MAX_BACKGROUND_SHARE * h.cores * 1000.0 * dt / a.prefetch_cpu_ms_per_mb)
            bg_disk += shares * mb / h.disk_seq_mb_s / dt
            bg_cpu[pf.node] += mb * a.prefetch_cpu_ms_per_mb / 1000.0 / dt / h.cores
            pf.remaining_mb -= mb
            if pf.remaining_mb > 1e-9:
                prefetched(pf.region, 1.0 - pf.remaining_mb / max(pf.total_mb, 1e-9))
                keep.append(pf)
            else:
                prefetched(pf.region, 1.0)
        self.prefetches = keep


def compaction_done(regions: Regions, r: int, node: int, serving: int) -> None:
    """A compaction rewrote region r's files on `node`: its reference files are gone, its
    data is local there, written while `serving` servers were up."""
    regions.refs[r] = False
    regions.locality[r] = 1.0
    regions.home[r] = node
    regions.written_at_nodes[r] = serving

