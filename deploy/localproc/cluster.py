"""`LocalCluster`: one local test cluster living in a work directory, the base of LocalHBase
and LocalCassandra. It records every process it starts (name, PID, conf dir, log) in its state
file, recognises them only while their command line still names their conf dir, and stops only
those: `stop` on a stopped cluster does nothing, a recycled PID is never signalled.

Each process runs in a control group of its own with its kind's slice of the machine
(deploy/localproc/cgroups.py): the slices are chosen at `start` (the class's defaults, a file,
or none with --no-quota), recorded in the state file, and used by every later command on the
same work directory (add a node, restart one, exec-rs)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from deploy.localproc.cgroups import ControlGroups, Slice, iter_slices
from deploy.localproc.process import ClusterError, cpu_s, pid_alive, pid_owned, rss_mb
from deploy.localproc.state import StateFile

__all__ = ["ClusterError", "LocalCluster"]


class LocalCluster:
    """Subclasses name where their process records live in the state (`records_key`), what
    an empty state holds (`empty_state`) and each process kind's default slice
    (`default_slices`; the key "cluster" weighs the cluster as a whole)."""

    records_key = "procs"
    default_slices: Mapping[str, Slice] = {}

    def __init__(self, workdir: str | Path, version: str, *, quota: bool | None = None,
                 slices: Mapping[str, Slice] | None = None):
        """quota False: no control groups (today's shared-cores mode); `slices`: these instead
        of the defaults; neither given: as recorded by the `start` that made the cluster."""
        self.workdir = Path(workdir).resolve()
        self.version = version
        self.state_file = self.workdir / "cluster.json"
        self.state = StateFile(self.state_file, self.empty_state)
        self._quota, self._slices = quota, slices
        self.groups = ControlGroups(self.workdir)

    # -- slices -------------------------------------------------------------------------------

    def slices(self) -> dict[str, Slice]:
        """Each process kind's slice; {} when the cluster runs without control groups."""
        if self._quota is False:
            return {}
        if self._slices is not None:
            return dict(self._slices)
        st = self._read()
        if "slices" in st:
            return dict(iter_slices(st["slices"] or {}, str(self.state_file)))
        return dict(self.default_slices)

    @property
    def quota_on(self) -> bool:
        return bool(self.slices())

    def slice_for(self, kind: str, profile: str | None = None) -> Slice | None:
        """`kind`'s slice, or "<kind>.<profile>"'s when the config names one for the node's
        metctl profile (a RegionServer restarted into `scan` may get a bigger slice)."""
        slices = self.slices()
        return slices.get(f"{kind}.{profile}") or slices.get(kind)

    def prepare_groups(self) -> list[str]:
        """Before `start` runs anything: record the slices, make the cluster's groups (one
        line with the fix when they cannot be made) and remove stale ones. Returns the stale
        groups removed."""
        slices = self.slices()
        if slices:
            cluster = slices.get("cluster")
            self.groups.ensure(cluster.cpu_shares if cluster else None)  # first: fails cleanly
        with self._locked() as st:
            st["slices"] = {k: v.to_dict() for k, v in slices.items()} or None
        return self.groups.remove_stale(keep={name for name, _, _ in self._owned()}) if slices else []

    def place(self, name: str, kind: str, pid: int, profile: str | None = None) -> None:
        """Put `pid` into group `name` with `kind`'s slice (nothing without quotas)."""
        s = self.slice_for(kind, profile) if self.quota_on else None
        if s is not None:
            self.groups.apply(name, s)
            self.groups.join(name, pid)

    def release(self, name: str, wait_s: float = 5.0) -> None:
        """Remove group `name` once its process is gone. The group may still list an exiting
        process's last threads for a moment after its PID stopped answering (CI: rs2's group
        outlived its stop), so this waits up to `wait_s` for it to empty."""
        if not self.quota_on:
            return
        deadline = time.monotonic() + wait_s
        while not self.groups.remove(name) and time.monotonic() < deadline:
            time.sleep(0.1)

    def release_all(self) -> list[str]:
        return self.groups.remove_all() if self.quota_on else []

    def empty_state(self) -> dict[str, Any]:
        return {"version": self.version, self.records_key: {}}

    # -- state --------------------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        return self.state.read()

    def _locked(self) -> Any:
        return self.state.locked()

    def _record(self, name: str, record: dict[str, Any]) -> None:
        with self._locked() as st:
            st[self.records_key][name] = record

    def _record_pid(self, name: str, pid: int | None) -> None:
        with self._locked() as st:
            st[self.records_key][name]["pid"] = pid

    def _owned(self) -> Iterator[tuple[str, int, str]]:
        """(name, pid, conf dir) of every recorded process still running as ours."""
        for name, rec in self._read()[self.records_key].items():
            pid = rec.get("pid")
            if pid and pid_owned(pid, rec["conf_dir"]):
                yield name, pid, rec["conf_dir"]

    # -- processes ----------------------------------------------------------------------------

    def spawn_process(self, name: str, cmd: Sequence[str], conf_dir: str, log: str,
                      kind: str | None = None, profile: str | None = None) -> int:
        """Start `cmd` in its own session, in group `name` with `kind`'s slice, its output
        appended to `log`, and record its PID. Returns once the PID's command line names
        `conf_dir` (until the exec it is still Python's), so that a stop right after a start
        finds and stops it."""
        rec = self._read()[self.records_key].get(name, {})
        if rec.get("pid") and pid_owned(rec["pid"], conf_dir):
            return int(rec["pid"])
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        s = self.slice_for(kind, profile) if kind and self.quota_on else None
        if s is not None:
            self.groups.apply(name, s)  # before the process: a failure starts nothing
        with open(log, "ab") as out:
            proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.workdir)
        self._record_pid(name, proc.pid)
        if s is not None:
            # the JVM's first milliseconds run outside the group; its threads and any child
            # it starts later follow the process into it
            try:
                self.groups.join(name, proc.pid)
            except ClusterError:
                self.kill_process(name, proc.pid, conf_dir)
                raise
        deadline = time.monotonic() + 10
        while not pid_owned(proc.pid, conf_dir) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return proc.pid

    def signal_process(self, pid: int | None, conf_dir: str, sig: int = signal.SIGTERM) -> bool:
        """Send `sig` to `pid` only while it is ours; True when it was sent."""
        if not pid or not pid_owned(pid, conf_dir):
            return False
        os.kill(pid, sig)
        return True

    def stop_process(self, name: str, pid: int | None, conf_dir: str, timeout_s: float) -> None:
        """SIGTERM (a graceful stop), then SIGKILL after `timeout_s`; only our own,
        still-matching PID. The record's PID is cleared either way."""
        if self.signal_process(pid, conf_dir):
            assert pid is not None
            deadline = time.monotonic() + timeout_s
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if self.signal_process(pid, conf_dir, signal.SIGKILL):
                while pid_alive(pid):
                    time.sleep(0.05)
        self._record_pid(name, None)
        self.release(name)

    def kill_process(self, name: str, pid: int | None, conf_dir: str) -> None:
        """SIGKILL (a crash, for failure tests); only our own PID."""
        if self.signal_process(pid, conf_dir, signal.SIGKILL):
            assert pid is not None
            while pid_alive(pid):
                time.sleep(0.05)
        self._record_pid(name, None)
        self.release(name)

    def cpu_s(self) -> dict[str, float]:
        """CPU seconds each running process has used so far (two readings: the cores it used
        between them)."""
        return {name: cpu_s(pid) for name, pid, _ in self._owned()}

    def rss_mb(self) -> dict[str, float]:
        """Resident memory of each running process, MB."""
        out = {}
        for name, pid, _ in self._owned():
            mb = rss_mb(pid)
            if mb is not None:
                out[name] = mb
        return out
