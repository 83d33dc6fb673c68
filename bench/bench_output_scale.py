"""Output at scale (issue 14): the whole `metctl plan` on 1,000 nodes x 100,000 partitions as JSON
and as a table, and `metctl status` on a journal whose plan carries a 100 MB reason. Each is one
`metctl` process, timed end to end (reading, deciding, rendering, writing to a pipe).

Targets: plan JSON < 2 s, plan table < 2 s, status < 2 s (wall). Prints wall and CPU seconds of
the metctl process (CPU is the figure to compare on a shared machine); never asserts.
Usage: python bench/bench_output_scale.py [--nodes 1000] [--partitions 100000] [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from actuator.fake_plans import write_journal  # noqa: E402
from controller.snapshot_io import write_snapshot  # noqa: E402
from simulator.synthetic import zipf_cluster  # noqa: E402

METCTL = [sys.executable, "-m", "controller.cli"]


def timed(argv: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user + system of the metctl process), exit code, bytes out.

    CPU time is the figure to compare between runs on a shared machine: wall time also counts
    the time other processes held the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(METCTL + argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, len(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--keep", metavar="DIR", default=None,
                    help="write the snapshot and the journal here and keep them (for profiling)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        snap = Path(tmp) / "snap.json"
        write_snapshot(zipf_cluster(args.nodes, args.partitions // args.nodes, cpu=0.9), snap)
        print(f"snapshot {args.nodes} x {args.partitions}: {snap.stat().st_size / 2**20:.1f} MiB", flush=True)
        for fmt in ("json", "table"):
            s, cpu, code, size = timed(["plan", "--snapshot", str(snap), "--format", fmt])
            print(f"metctl plan --format {fmt}: {s:.2f} s wall, {cpu:.2f} s CPU (exit {code}, "
                  f"{size / 2**20:.1f} MiB out)  target < 2 s", flush=True)
        s, cpu, code, size = timed(["plan", "--snapshot", str(snap), "--format", "table", "--all"])
        print(f"metctl plan --format table --all: {s:.2f} s wall, {cpu:.2f} s CPU (exit {code}, "
              f"{size / 2**20:.1f} MiB out)", flush=True)

        journal = Path(tmp) / "j.sqlite"
        journal.unlink(missing_ok=True)
        write_journal(journal, fail_move=True)  # a real executor's journal
        con = sqlite3.connect(journal)
        doc = json.loads(con.execute("SELECT plan_json FROM plans").fetchone()[0])
        doc["reason"] = "r" * (100 * 2**20)
        con.execute("UPDATE plans SET plan_json = ?", (json.dumps(doc),))
        con.commit()
        con.close()
        for fmt in ("table", "json"):
            s, cpu, code, size = timed(["status", "--journal", str(journal), "--format", fmt])
            print(f"metctl status --format {fmt} (100 MB reason): {s:.2f} s wall, {cpu:.2f} s CPU "
                  f"(exit {code}, {size / 2**20:.1f} MiB out)  target < 2 s", flush=True)


if __name__ == "__main__":
    main()
