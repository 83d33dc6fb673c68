"""A snapshot as numpy arrays (one entry per partition, nodes by index), and the placement as
it stands — shared by the policies."""
from __future__ import annotations

import numpy as np

from decision.model import ClusterSnapshot, NodeAssignment


class SnapshotArrays:
    """A snapshot's partitions as numpy arrays, indexed against its active nodes."""

    def __init__(self, snapshot: ClusterSnapshot):
        parts = snapshot.partitions
        self.partitions = parts  # a reference, for per-table rules (policy.tables)
        self.ids = [p.id for p in parts]
        self.current = [p.node for p in parts]
        self.reads = np.fromiter((p.reads for p in parts), np.float64, len(parts))
        self.writes = np.fromiter((p.writes for p in parts), np.float64, len(parts))
        self.scans = np.fromiter((p.scans for p in parts), np.float64, len(parts))
        self.size_mb = np.fromiter((p.size_mb for p in parts), np.float64, len(parts))
        self.locality = np.fromiter((p.locality for p in parts), np.float64, len(parts))
        self.load = self.reads + self.writes + self.scans
        # Input validation belongs to whoever read the snapshot (the CLI refuses such files);
        # the core still refuses to plan on rates it cannot compare.
        bad = ~np.isfinite(self.load) | (self.reads < 0) | (self.writes < 0) | (self.scans < 0)
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            raise ValueError(f"partitions[{p}] ({self.ids[p]}): rates must be finite and >= 0")
        self.active = [n for n in snapshot.nodes if n.state == "active"]
        index = {n.id: i for i, n in enumerate(self.active)}
        self.node_of = np.fromiter((index.get(p.node, -1) for p in parts), np.int64, len(parts))


def load_ratio(loads: np.ndarray) -> float:
    """Most loaded node over the mean (1.0 when nothing is loaded)."""
    if loads.size == 0 or loads.sum() <= 0:
        return 1.0
    # max / sum first: the mean of a few subnormal loads underflows to 0
    return float(loads.max() / loads.sum() * loads.size)


def current_assignment(snapshot: ClusterSnapshot,
                       arrays: SnapshotArrays | None = None) -> tuple[NodeAssignment, ...]:
    """The placement as it is: each active node with its partitions and load, then any other
    node (booting, draining, or not listed) that still holds partitions."""
    arrays = arrays or SnapshotArrays(snapshot)
    members: dict[str, list[str]] = {n.id: [] for n in arrays.active}
    loads: dict[str, float] = {n.id: 0.0 for n in arrays.active}
    for pid, nid, load in zip(arrays.ids, arrays.current, arrays.load.tolist()):
        members.setdefault(nid, []).append(pid)
        loads[nid] = loads.get(nid, 0.0) + load
    profile = {n.id: n.profile for n in snapshot.nodes}
    return tuple(NodeAssignment(nid, profile.get(nid, "default"), tuple(parts), loads[nid])
                 for nid, parts in members.items())


__all__ = ["SnapshotArrays", "load_ratio", "current_assignment"]
