"""`LocalCluster`: one local test cluster living in a work directory, the base of LocalHBase
and LocalCassandra. It records every process it starts (name, PID, conf dir, log) in its state
file, recognises them only while their command line still names their conf dir, and stops only
those: `stop` on a stopped cluster does nothing, a recycled PID is never signalled."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from deploy.localproc.process import ClusterError, pid_alive, pid_owned, rss_mb
from deploy.localproc.state import StateFile

__all__ = ["ClusterError", "LocalCluster"]


class LocalCluster:
    """Subclasses name where their process records live in the state (`records_key`) and
    what an empty state holds (`empty_state`)."""

    records_key = "procs"

    def __init__(self, workdir: str | Path, version: str):
        self.workdir = Path(workdir).resolve()
        self.version = version
        self.state_file = self.workdir / "cluster.json"
        self.state = StateFile(self.state_file, self.empty_state)

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

    def spawn_process(self, name: str, cmd: Sequence[str], conf_dir: str, log: str) -> int:
        """Start `cmd` in its own session, its output appended to `log`, and record its PID.
        Returns once the PID's command line names `conf_dir` (until the exec it is still
        Python's), so that a stop right after a start finds and stops it."""
        rec = self._read()[self.records_key].get(name, {})
        if rec.get("pid") and pid_owned(rec["pid"], conf_dir):
            return int(rec["pid"])
        Path(log).parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.workdir)
        self._record_pid(name, proc.pid)
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

    def kill_process(self, name: str, pid: int | None, conf_dir: str) -> None:
        """SIGKILL (a crash, for failure tests); only our own PID."""
        if self.signal_process(pid, conf_dir, signal.SIGKILL):
            assert pid is not None
            while pid_alive(pid):
                time.sleep(0.05)
        self._record_pid(name, None)

    def rss_mb(self) -> dict[str, float]:
        """Resident memory of each running process, MB."""
        out = {}
        for name, pid, _ in self._owned():
            mb = rss_mb(pid)
            if mb is not None:
                out[name] = mb
        return out
