"""Failover times of metctl's leader election on a real ZooKeeper, over repeated runs.

Starts Debian's ZooKeeper on loopback (tickTime=500, deploy/local_zookeeper/zookeeper.py), then
for each kind of failure (SIGKILL, SIGTERM) and each repetition: three controller processes
(deploy/local_zookeeper/failover.py, as the failover tests run them) share one journaled plan,
the leader is hit mid-plan, and we measure from the signal to (a) the successor's leadership and (b) its
first action. Every run's invariant (each action applied once, no overlapping acting) is
checked and counted. Prints a table; exit 1 if any invariant failed.

    .venv/bin/python bench/bench_failover.py [--runs 5] [--session-timeout-s 2] [--controllers 3]
"""
from __future__ import annotations

import argparse
import signal
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common.waiting import poll  # noqa: E402
from deploy.local_zookeeper.failover import ControllerGroup  # noqa: E402
from deploy.local_zookeeper.zookeeper import ZooKeeperServer, free_port  # noqa: E402


def one_run(zk: ZooKeeperServer, workdir: Path, sig: int, n: int, session_s: float):
    group = ControllerGroup(zk.hosts, workdir, n, actions=10, action_s=0.2,
                            session_timeout_s=session_s)
    group.start()
    try:
        poll(lambda: group.done_count() >= 2, 60, "two actions done")
        leader = poll(group.leader, 10, "a leader")
        at = group.signal(leader, sig)
        led = poll(lambda: group.became_leader_after(at, leader), 60, "a successor")
        acted = poll(lambda: group.first_action_after(at, leader), 60, "the successor acting")
        group.wait_done(120)
        report = group.invariant()
        return led - at, acted - at, report
    finally:
        group.stop_all()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--session-timeout-s", type=float, default=2.0)
    p.add_argument("--controllers", type=int, default=3)
    a = p.parse_args()
    checked = failed = 0
    with tempfile.TemporaryDirectory(prefix="bench-failover-") as tmp:
        zk = ZooKeeperServer(Path(tmp) / "zk", free_port())
        zk.start()
        try:
            print(f"{a.controllers} controllers, session timeout {a.session_timeout_s:g} s, "
                  f"lease {a.session_timeout_s * 0.5:g} s, {a.runs} runs per signal")
            print(f"{'signal':8} {'new leader after (s)':>36} {'first action after (s)':>36}")
            for sig in (signal.SIGKILL, signal.SIGTERM):
                leads, acts = [], []
                for i in range(a.runs):
                    led, acted, report = one_run(zk, Path(tmp) / f"{sig.name}-{i}", sig,
                                                 a.controllers, a.session_timeout_s)
                    leads.append(led)
                    acts.append(acted)
                    checked += 1
                    if report.problems:
                        failed += 1
                        print(f"  run {i}: INVARIANT BROKEN: {report.problems}")

                def fmt(xs: list[float]) -> str:
                    return (f"median {statistics.median(xs):.3f} min {min(xs):.3f} "
                            f"max {max(xs):.3f}")

                print(f"{sig.name:8} {fmt(leads):>36} {fmt(acts):>36}")
        finally:
            zk.stop()
    print(f"invariant checked in {checked} runs, broken in {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
