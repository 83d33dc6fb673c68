"""Several controller processes contending through a real ZooKeeper, and the invariant check.

`ControllerGroup` launches N processes (failover_driver.py beside this file: metctl's election
and fencing around a journaled plan) sharing one SQLite file, kills/stops them by PID, and
checks the invariant: every action applied exactly once, journaled done exactly once, and no
two acting intervals overlapping in time. Used by tests/integration/test_failover.py (through
tests/fixtures/controllers.py) and bench/bench_failover.py. Everything it starts it stops by PID.
"""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from common.waiting import poll  # noqa: E402

DRIVER = Path(__file__).resolve().parent / "failover_driver.py"


@dataclass
class InvariantReport:
    actions: int
    intervals: int
    leaders: list[str]
    problems: list[str] = field(default_factory=list)

    def check(self) -> None:
        assert not self.problems, "invariant broken:\n" + "\n".join(self.problems)


class ControllerGroup:
    def __init__(self, zk_hosts: str, workdir: Path, n: int, *, actions: int = 12,
                 action_s: float = 0.3, session_timeout_s: float = 2.0, pause_after: int = -1):
        self.zk_hosts, self.workdir, self.n = zk_hosts, workdir, n
        self.actions, self.action_s = actions, action_s
        self.session_timeout_s, self.pause_after = session_timeout_s, pause_after
        self.root = f"/metctl-test-{uuid.uuid4().hex[:8]}"  # tests share the server, not znodes
        self.db = workdir / "shared.sqlite"
        self.procs: dict[str, subprocess.Popen] = {}
        self.deaths: dict[str, float] = {}  # identity -> wall time it was killed

    # ---- processes -------------------------------------------------------------------------
    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        for i in range(self.n):
            self.spawn(f"c{i}")

    def spawn(self, identity: str) -> None:
        log = open(self.workdir / f"{identity}.log", "ab")
        self.procs[identity] = subprocess.Popen(
            [sys.executable, str(DRIVER), "--zk", self.zk_hosts, "--root", self.root,
             "--identity", identity, "--db", str(self.db), "--actions", str(self.actions),
             "--action-s", str(self.action_s), "--session-timeout-s", str(self.session_timeout_s),
             "--pause-after", str(self.pause_after)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        log.close()

    def alive(self, identity: str) -> bool:
        return self.procs[identity].poll() is None

    def signal(self, identity: str, sig: int) -> float:
        """Send `sig` to one controller by PID; returns the wall time it was sent."""
        at = time.time()
        os.kill(self.procs[identity].pid, sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            self.deaths.setdefault(identity, at)
        return at

    def stopped(self, identity: str) -> bool:
        """True when the process is in the stopped state (after SIGSTOP)."""
        stat = Path(f"/proc/{self.procs[identity].pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] == "T"

    def stop_all(self) -> None:
        for identity, proc in self.procs.items():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                os.kill(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    # ---- what the shared file says ---------------------------------------------------------
    def _rows(self, sql: str, *args) -> list[tuple]:
        if not self.db.exists():
            return []
        conn = sqlite3.connect(self.db, timeout=30)
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError:  # tables not created yet
            return []
        finally:
            conn.close()

    def done_count(self) -> int:
        return len(self._rows("select distinct action from journal where state='done'"))

    def leader(self) -> str | None:
        """The live identity whose latest leadership event says it leads."""
        last: dict[str, str] = {}
        for by, kind in self._rows(
                "select by, kind from events where kind in ('leader','follower') order by wall"):
            last[by] = kind
        leaders = [i for i, k in last.items() if k == "leader" and self.alive(i)
                   and i not in self.deaths]
        return leaders[0] if len(leaders) == 1 else None

    def became_leader_after(self, wall: float, other_than: str) -> float | None:
        rows = self._rows("select min(wall) from events where kind='leader' and wall>? and by<>?",
                          wall, other_than)
        return rows[0][0] if rows and rows[0][0] is not None else None

    def first_action_after(self, wall: float, other_than: str) -> float | None:
        rows = self._rows("select min(start_wall) from intervals where start_wall>? and by<>?",
                          wall, other_than)
        return rows[0][0] if rows and rows[0][0] is not None else None

    def intervals(self) -> list[tuple[str, float, float | None]]:
        return self._rows("select by, start_wall, end_wall from intervals order by start_wall")

    def events(self, identity: str) -> list[tuple[str, float]]:
        return self._rows("select kind, wall from events where by=? order by wall", identity)

    def wait_done(self, timeout_s: float) -> None:
        poll(lambda: self.done_count() >= self.actions, timeout_s, "the plan to finish",
             every_s=0.1)

    def invariant(self) -> InvariantReport:
        problems: list[str] = []
        effects = dict(self._rows("select action, count(*) from effects group by action"))
        dones = dict(self._rows(
            "select action, count(*) from journal where state='done' group by action"))
        for a in range(self.actions):
            if effects.get(a, 0) != 1:
                problems.append(f"action {a} applied {effects.get(a, 0)} times")
            if dones.get(a, 0) != 1:
                problems.append(f"action {a} journaled done {dones.get(a, 0)} times")
        spans = []
        for by, start, end in self.intervals():
            if end is None:  # killed mid-action: it acted until it died
                end = self.deaths.get(by)
                if end is None:
                    problems.append(f"{by} has an open acting interval from {start} but lives")
                    continue
            spans.append((start, end, by))
        spans.sort()
        latest_end, latest_by = float("-inf"), None
        for start, end, by in spans:
            if start < latest_end:
                problems.append(f"{by} started acting at {start:.3f} while {latest_by} "
                                f"acted until {latest_end:.3f}")
            if end > latest_end:
                latest_end, latest_by = end, by
        leaders = sorted({by for _, _, by in spans})
        return InvariantReport(self.actions, len(spans), leaders, problems)
