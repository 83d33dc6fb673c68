"""Keep the snapshots metctl takes: one JSON file per snapshot in a directory, oldest removed
beyond a bound, so a week of an observed cluster can be replayed as a scenario
(`metctl scenario from-snapshots DIR`) and every policy priced on it before metctl acts.

Files are `snapshot-<UTC time>.json` (the ClusterSnapshot contract, what `metctl plan
--snapshot` reads), written to a temporary name and renamed, so a reader never sees half a file.
"""
from __future__ import annotations

from pathlib import Path

from common.files import write_atomic
from controller.loop import LoopObserver
from controller.snapshot_io import dump_snapshot
from decision.model import ClusterSnapshot, Plan

DEFAULT_KEEP = 2016  # a week of one snapshot every 5 minutes
PREFIX, SUFFIX = "snapshot-", ".json"


class SnapshotArchive:
    """A bounded directory of snapshots, oldest first by name."""

    def __init__(self, directory: str | Path, keep: int = DEFAULT_KEEP):
        if keep < 1:
            raise ValueError(f"keep: expected at least 1 snapshot, got {keep}")
        self.directory = Path(directory)
        self.keep = keep
        self.directory.mkdir(parents=True, exist_ok=True)

    def files(self) -> list[Path]:
        return sorted(p for p in self.directory.iterdir()
                      if p.name.startswith(PREFIX) and p.name.endswith(SUFFIX))

    def add(self, snapshot: ClusterSnapshot) -> Path:
        stamp = snapshot.taken_at.strftime("%Y%m%dT%H%M%S.%f") + "Z"
        path = self.directory / f"{PREFIX}{stamp}{SUFFIX}"
        write_atomic(path, dump_snapshot(snapshot, "json"))
        for old in self.files()[:-self.keep]:
            old.unlink(missing_ok=True)
        return path


class ArchiveObserver(LoopObserver):
    """Keeps the snapshot of every decision round (the daemon's `--observe`)."""

    def __init__(self, archive: SnapshotArchive):
        self.archive = archive

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:
        self.archive.add(snapshot)
