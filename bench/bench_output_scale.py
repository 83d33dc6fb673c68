"""Output at scale (issue 14): the whole `metctl plan` on 1,000 nodes x 100,000 partitions as JSON
and as a table, and `metctl status` on a journal whose plan carries a 100 MB reason. Each is one
`metctl` process, timed end to end (starting Python, reading, deciding, rendering, writing to a
pipe).

Targets: plan JSON < 2 s, plan table < 2 s, status < 2 s (wall, on an idle machine). Prints, for
each command, the best of --repeat runs: wall seconds and CPU seconds (user + system) of the
metctl process. CPU is the figure to compare on a shared machine: wall also counts the time other
processes held the cores (`load` is printed for that reason). Never asserts.

The project's modules are byte-compiled first, as an installed metctl is (pip compiles them); a
process started with PYTHONDONTWRITEBYTECODE=1 would otherwise compile ~30 modules from source
on every run (~0.1 s).

Usage: python bench/bench_output_scale.py [--nodes 1000] [--partitions 100000] [--repeat 3]
                                          [--keep DIR]
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.plans import write_journal  # noqa: E402
from controller.snapshot_io import write_snapshot  # noqa: E402
from simulator.synthetic import zipf_cluster  # noqa: E402

METCTL = [sys.executable, "-m", "controller.cli"]
PACKAGES = ("common", "decision", "profiles", "monitor", "actuator", "simulator", "controller")


def timed(argv: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user + system of the metctl process), exit code, bytes out."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(METCTL + argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, len(proc.stdout)


def report(label: str, argv: list[str], repeat: int, target: bool = True) -> None:
    runs = [timed(argv) for _ in range(repeat)]
    wall = min(r[0] for r in runs)
    cpu = min(r[1] for r in runs)
    codes = sorted({r[2] for r in runs})
    size = runs[-1][3]
    print(f"{label}: {wall:.2f} s wall, {cpu:.2f} s CPU (best of {repeat}; exit "
          f"{','.join(map(str, codes))}, {size / 2**20:.1f} MiB out)"
          + ("  target < 2 s" if target else ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per command; the best is shown")
    ap.add_argument("--keep", metavar="DIR", default=None,
                    help="write the snapshot and the journal here and keep them (for profiling)")
    args = ap.parse_args()
    for pkg in PACKAGES:
        compileall.compile_dir(ROOT / pkg, quiet=1)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(args.keep or scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        snap = tmp / "snap.json"
        write_snapshot(zipf_cluster(args.nodes, args.partitions // args.nodes, cpu=0.9), snap)
        print(f"snapshot {args.nodes} x {args.partitions}: {snap.stat().st_size / 2**20:.1f} MiB",
              flush=True)
        for fmt in ("json", "table"):
            report(f"metctl plan --format {fmt}", ["plan", "--snapshot", str(snap), "--format", fmt],
                   args.repeat)
        report("metctl plan --format table --all",
               ["plan", "--snapshot", str(snap), "--format", "table", "--all"], args.repeat,
               target=False)

        journal = tmp / "j.sqlite"
        journal.unlink(missing_ok=True)
        write_journal(journal, fail_move=True)  # a real executor's journal
        con = sqlite3.connect(journal)
        doc = json.loads(con.execute("SELECT plan_json FROM plans").fetchone()[0])
        doc["reason"] = "r" * (100 * 2**20)
        con.execute("UPDATE plans SET plan_json = ?", (json.dumps(doc),))
        con.commit()
        con.close()
        for fmt in ("table", "json"):
            report(f"metctl status --format {fmt} (100 MB reason)",
                   ["status", "--journal", str(journal), "--format", fmt], args.repeat)
        print(f"load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
