"""A controller process for the failover tests and bench/bench_failover.py (failover.py's
ControllerGroup launches it): metctl's election and fencing around a journaled sequence of
actions, recording everything the invariant needs in a shared SQLite file.

Run as `python failover_driver.py --zk HOSTS --db FILE --identity NAME …`. Every instance works
through the same plan (actions 0..N-1) and the same journal: an action is journaled `started`,
applied to the "cluster" (the `effects` table) unless the effect is already there (actions are
idempotent: a new leader finishing an interrupted action checks before it redoes), then
journaled `done`. Each action runs inside `Leadership.acting()` and is recorded as an acting
interval (identity, wall start/end) so the test can check that no two instances acted at once.
`--pause-after K` makes whoever applies action K stop itself (SIGSTOP) right after it, the way
a partitioned or frozen leader would.
"""
from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from controller.ha import HASettings, Leadership, NotLeader, install_sigterm  # noqa: E402

SCHEMA = """
create table if not exists journal (action integer, state text, by text, wall real);
create table if not exists effects (action integer, by text, wall real);
create table if not exists intervals (id integer primary key, by text, start_wall real, end_wall real);
create table if not exists events (by text, kind text, wall real);
"""


def connect(db: str) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=30, isolation_level=None)
    # Switching to WAL needs an exclusive lock and SQLite's busy timeout does not cover it: two
    # controllers starting at once made one die with "database is locked" (seen in CI).
    deadline = time.monotonic() + 30
    while True:
        try:
            conn.execute("pragma journal_mode=wal")
            conn.executescript(SCHEMA)
            return conn
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def next_action(conn: sqlite3.Connection, n: int) -> int | None:
    done = {r[0] for r in conn.execute("select action from journal where state='done'")}
    return next((a for a in range(n) if a not in done), None)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--zk", required=True)
    p.add_argument("--root", default="/metctl-test")
    p.add_argument("--cluster", default="sim")
    p.add_argument("--identity", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--actions", type=int, default=10)
    p.add_argument("--action-s", type=float, default=0.3)
    p.add_argument("--session-timeout-s", type=float, default=2.0)
    p.add_argument("--pause-after", type=int, default=-1)
    a = p.parse_args()

    conn = connect(a.db)
    me = a.identity

    def event(kind: str) -> None:
        connect(a.db).execute("insert into events values (?,?,?)", (me, kind, time.time()))

    stop = threading.Event()
    lead = Leadership(
        HASettings(zookeeper_hosts=a.zk, root_znode=a.root, identity=me,
                   session_timeout_s=a.session_timeout_s),
        a.cluster,
    )
    lead.add_listener(lambda leader, why: event("leader" if leader else "follower"))
    install_sigterm(lead, then=lambda signum: stop.set())
    lead.start()
    event("started")

    while not stop.is_set():
        if not lead.may_act():
            stop.wait(0.01)
            continue
        action = next_action(conn, a.actions)
        if action is None:
            stop.wait(0.05)
            continue
        try:
            with lead.acting():
                cur = conn.execute(
                    "insert into intervals (by, start_wall) values (?,?)", (me, time.time()))
                interval = cur.lastrowid
                states = {r[0] for r in conn.execute(
                    "select state from journal where action=?", (action,))}
                if "started" not in states:
                    conn.execute("insert into journal values (?,?,?,?)",
                                 (action, "started", me, time.time()))
                time.sleep(a.action_s / 2)  # the action's work, before and after its effect
                applied = conn.execute(
                    "select count(*) from effects where action=?", (action,)).fetchone()[0]
                if not applied:
                    conn.execute("insert into effects values (?,?,?)", (action, me, time.time()))
                time.sleep(a.action_s / 2)
                # One transaction: a reader that sees the action done also sees its interval
                # closed (two autocommits let the invariant check read an open interval, CI).
                conn.execute("begin immediate")
                conn.execute("insert into journal values (?,?,?,?)",
                             (action, "done", me, time.time()))
                conn.execute("update intervals set end_wall=? where id=?", (time.time(), interval))
                conn.execute("commit")
        except NotLeader:
            continue
        if action == a.pause_after:
            event("pausing")
            os.kill(os.getpid(), signal.SIGSTOP)
            event("resumed")
    event("stopping")
    lead.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
