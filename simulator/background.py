"""Work the nodes do besides serving requests: region data streamed to a new server (transfer
modes incremental and parallel) and compactions (a rewrite of a region's files on its node),
each progressing every step and taking CPU and disk from the nodes that do it."""
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
class Background:
    """Transfers and compactions under way, and the utilisation they took in the last step."""

    transfers: list[Transfer] = field(default_factory=list)
    compactions: dict[int, tuple[int, float]] = field(default_factory=dict)  # region -> (node, MiB left)
    load: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))  # (cpu, disk) per node

    def moving(self, r: int) -> bool:
        return any(tr.region == r for tr in self.transfers)

    def progress(self, dt: float, k: int, a: ActionSettings, h: HardwareSettings,
                 finish_transfer: Callable[[Transfer], None],
                 compacted: Callable[[int, int], None], served_by: Callable[[int], int]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Advance everything by dt over k nodes; return the CPU and disk share each node gave
        to it. finish_transfer(tr) runs for each copy that arrived (before compactions move
        on, as its region closes), compacted(region, node) for each compaction that ended;
        served_by(region) is its server now (a compaction whose region left is abandoned)."""
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


def compaction_done(regions: Regions, r: int, node: int, serving: int) -> None:
    """A compaction rewrote region r's files on `node`: its reference files are gone, its
    data is local there, written while `serving` servers were up."""
    regions.refs[r] = False
    regions.locality[r] = 1.0
    regions.home[r] = node
    regions.written_at_nodes[r] = serving

