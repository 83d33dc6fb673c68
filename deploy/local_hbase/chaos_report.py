#!/usr/bin/env python3
"""Throughput view of a chaos run (deploy/local_hbase/chaos.py): every YCSB client's status lines
(one a second, in OUT/hbase/ycsb/<W>-run-<start ns>.err) summed into one series on the wall
clock, and for each fault the time until throughput is back:

  baseline  = mean total ops/s over the 30 s before the fault;
  dip       = the first 5-s window within 90 s after the fault whose mean is < 80 % of the
              baseline (no dip: recovery 0);
  recovered = the first 5-s window from the dip on whose mean is >= 80 % of the baseline,
              counted from the fault.

Tenants change every segment, so a baseline is approximate; a fault with a baseline under
50 ops/s is not rated.

Failed operations, from the same status lines (YCSB measures a failed operation as
<OP>-<STATUS>, e.g. READ-NOT_FOUND, or <OP>-FAILED in older runs): by workload, operation and
status, and by fault: those in the seconds from a fault until the next one (at most 120 s),
with the longest operation in that window (how long a client waited); the rest are "no fault".

Updates OUT/report.json (`recovery_by_throughput_s`, `failures`) and redraws
OUT/throughput.png with the faults marked.

    python deploy/local_hbase/chaos_report.py OUT [HARNESS_LOG]
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


FAULT_WINDOW_S = 120


def failures(ycsb_dir: Path, faults: list[dict[str, Any]]) -> dict[str, Any]:
    """Failed YCSB operations by workload/operation/status, and by fault window."""
    from deploy.local_hbase import ycsb as y
    by_status: dict[str, int] = {}
    per_second: dict[int, int] = {}
    wait: dict[int, int] = {}
    total_ops = 0
    for err in ycsb_dir.glob("*-run-*.err"):
        workload = err.name.split("-", 1)[0]
        start = int(err.stem.rsplit("-", 1)[1]) / 1e9
        r = y.parse_output(workload, "run", "", err.read_text(errors="replace"), 0.0)
        total_ops += r.ops
        for op, statuses in r.per_op.items():
            for status, n in statuses.items():
                if status != "OK" and n:
                    key = f"{workload} {op} {status}"
                    by_status[key] = by_status.get(key, 0) + n
        for s, n in r.failures:
            per_second[int(start + s)] = per_second.get(int(start + s), 0) + n
        for s, us in r.max_wait_us:
            wait[int(start + s)] = max(wait.get(int(start + s), 0), us)
    walls = sorted(int(f["wall"]) for f in faults)
    windows = []
    for f in faults:
        w = int(f["wall"])
        nxt = min([x for x in walls if x > w] + [w + FAULT_WINDOW_S])
        n = sum(per_second.get(t, 0) for t in range(w, nxt))
        longest = max((wait.get(t, 0) for t in range(w, nxt)), default=0)
        windows.append({"kind": f["kind"], "at_s": f.get("at_s"), "failed_ops": n,
                        "longest_op_s": round(longest / 1e6, 2)})
        f["failed_ops"], f["longest_op_s"] = n, round(longest / 1e6, 2)
    in_windows = {t for f in faults for t in range(int(f["wall"]), min(
        [x for x in walls if x > int(f["wall"])] + [int(f["wall"]) + FAULT_WINDOW_S]))}
    by_kind: dict[str, dict[str, Any]] = {}
    for wdw in windows:
        k = by_kind.setdefault(wdw["kind"], {"n": 0, "failed_ops": 0, "longest_op_s": 0.0})
        k["n"] += 1
        k["failed_ops"] += wdw["failed_ops"]
        k["longest_op_s"] = max(k["longest_op_s"], wdw["longest_op_s"])
    quiet = [t for t in wait if t not in in_windows]
    return {"total_failed": sum(by_status.values()), "ops": total_ops,
            "by_workload_op_status": dict(sorted(by_status.items(), key=lambda kv: -kv[1])),
            "by_fault_kind": by_kind,
            "no_fault": {"failed_ops": sum(n for t, n in per_second.items() if t not in in_windows),
                         "longest_op_s": round(max((wait[t] for t in quiet), default=0) / 1e6, 2)}}


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
    report["failures"] = failures(out / "hbase" / "ycsb", faults)
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
                      "unrated": unrated, "failures": report["failures"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
