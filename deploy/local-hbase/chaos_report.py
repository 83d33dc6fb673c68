#!/usr/bin/env python3
"""Throughput view of a chaos run (deploy/local-hbase/chaos.py): every YCSB client's status lines
(one a second, in OUT/hbase/ycsb/<W>-run-<start ns>.err) summed into one series on the wall
clock, and for each fault the time until throughput is back:

  baseline  = mean total ops/s over the 30 s before the fault;
  dip       = the first 5-s window within 90 s after the fault whose mean is < 80 % of the
              baseline (no dip: recovery 0);
  recovered = the first 5-s window from the dip on whose mean is >= 80 % of the baseline,
              counted from the fault.

Tenants change every segment, so a baseline is approximate; a fault with a baseline under
50 ops/s is not rated. Updates OUT/report.json (`recovery_by_throughput_s`) and redraws
OUT/throughput.png with the faults marked.

    python deploy/local-hbase/chaos_report.py OUT [HARNESS_LOG]
HARNESS_LOG (chaos.py's stdout) gives the faults' wall-clock times when report.json has none.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

STATUS = re.compile(r"(\d+) sec: (\d+) operations; ([0-9.]+) current ops/sec")
FAULT_LINE = re.compile(r"^\[chaos (\d\d:\d\d:\d\d)\] fault: (\w+)")


def series(ycsb_dir: Path) -> dict[int, float]:
    """wall-clock second -> total ops/s of every YCSB run client."""
    total: dict[int, float] = {}
    for err in ycsb_dir.glob("*-run-*.err"):
        start = int(err.stem.rsplit("-", 1)[1]) / 1e9
        for m in STATUS.finditer(err.read_text(errors="replace")):
            t = int(start + float(m.group(1)))
            total[t] = total.get(t, 0.0) + float(m.group(3))
    return total


def faults_from_log(log: Path, day: dt.date) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        if m := FAULT_LINE.match(line):
            t = dt.datetime.combine(day, dt.time.fromisoformat(m.group(1)), tzinfo=dt.timezone.utc)
            out.append({"kind": m.group(2), "wall": t.timestamp()})
    return out


def recovery(total: dict[int, float], wall: float) -> float | None:
    w = int(wall)
    before = [total.get(t, 0.0) for t in range(w - 30, w)]
    base = statistics.mean(before) if before else 0.0
    if base < 50:
        return None
    last = max(total) if total else w

    def window(t: int) -> float:
        return statistics.mean(total.get(s, 0.0) for s in range(t, t + 5))

    # the dip: the first 5-s window under 80 % within 90 s of the fault (none: no visible dip)
    dip = next((t for t in range(w, min(w + 90, last - 4)) if window(t) < 0.8 * base), None)
    if dip is None:
        return 0.0
    for t in range(dip, last - 4):
        if window(t) >= 0.8 * base:
            return float(t - w)
    return None


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    report_path = out / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    total = series(out / "hbase" / "ycsb")
    faults = [f for f in report.get("faults", []) if "wall" in f]
    if not faults and len(argv) > 1:
        day = dt.datetime.fromtimestamp(min(total) if total else 0, dt.timezone.utc).date()
        faults = faults_from_log(Path(argv[1]), day)
    by_kind: dict[str, list[float]] = {}
    unrated: dict[str, int] = {}
    for f in faults:
        r = recovery(total, f["wall"])
        f["throughput_back_after_s"] = r
        if r is None:
            unrated[f["kind"]] = unrated.get(f["kind"], 0) + 1
        else:
            by_kind.setdefault(f["kind"], []).append(r)
    report["recovery_by_throughput_s"] = {
        k: {"n": len(v), "mean": round(statistics.mean(v), 1), "max": max(v)} for k, v in by_kind.items()}
    report["recovery_by_throughput_unrated"] = unrated
    report["faults_wall"] = faults
    report_path.write_text(json.dumps(report, indent=2))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if total:
        t0 = min(total)
        xs = sorted(total)
        fig, ax = plt.subplots(figsize=(12, 4))
        ax.plot([(x - t0) / 60 for x in xs], [total[x] for x in xs], lw=0.7, label="YCSB ops/s, all tenants")
        colors = {"kill_rs": "red", "kill_daemon": "purple", "stop_zk": "orange", "stall_rs": "brown",
                  "restart_master": "green"}
        seen: set[str] = set()
        for f in faults:
            ax.axvline((f["wall"] - t0) / 60, color=colors.get(f["kind"], "k"), ls="--", lw=1,
                       label=f["kind"] if f["kind"] not in seen else None)
            seen.add(f["kind"])
        ax.set_xlabel("minutes")
        ax.set_ylabel("ops/s")
        ax.legend(loc="upper right", fontsize=8)
        ax.set_title("metctl chaos on local HBase (3 RegionServers): throughput, faults marked")
        fig.tight_layout()
        fig.savefig(out / "throughput.png", dpi=110)
    print(json.dumps({"recovery_by_throughput_s": report["recovery_by_throughput_s"],
                      "unrated": unrated}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
