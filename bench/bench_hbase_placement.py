"""Throughput of HBase's own balancer (default homogeneous configuration) vs metctl's placement
and profiles, on one real local HBase cluster under MET §3.1's six YCSB tenants, each measured
after it settled. Prints per-workload ops/s, the total ratio, timings and peak memory.

Runs deploy/local_hbase/demo.py with three RegionServers from the start (its max_nodes, so
metctl can only place and configure, not add servers; it starts and stops the cluster itself,
~8–10 minutes on 2 cores): after an unmeasured warm-up, "before" is one run of HBase's
balancer with every server on the default configuration, "after" follows metctl's decision. Figures go to out/bench-hbase/report.json.

    .venv/bin/python bench/bench_hbase_placement.py [--records 2000] [--mix-seconds 40] [--rounds 2]
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.local_hbase import demo  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    out = ROOT / "out" / "bench-hbase"
    args = list(argv if argv is not None else sys.argv[1:])
    # three RegionServers from the start (= max_nodes): metctl cannot add capacity, so the
    # comparison is placement + profiles against HBase's balancer on the same servers
    rc = demo.main(["--out", str(out), "--workdir", str(ROOT / "out" / "bench-hbase-cluster"), "--rs", "3",
                    "--rounds", "1", *args])
    report = json.loads((out / "report.json").read_text())
    print("\nworkload  balancer ops/s  metctl ops/s  ratio")
    for w in sorted(report["before"]):
        b, a = report["before"][w]["throughput"], report["after"][w]["throughput"]
        print(f"{w:8}  {b:14.1f}  {a:12.1f}  {a / b if b else float('nan'):5.2f}")
    print(f"total     {report['total_before']:14.1f}  {report['total_after']:12.1f}  {report['ratio']:5.2f}")
    avail = report.get("availability_during", {})
    print(f"availability while metctl acted: {100 * (avail.get('success_fraction') or 0):.3f} % of "
          f"{avail.get('ops', 0)} operations")
    print(f"cluster ready {report['start_to_ready_s']} s, balancer {report.get('balancer_s')} s, "
          f"metctl {report['metctl_s']} s, peak RSS {report['peak_rss_mb']:.0f} MB, whole run {report['demo_s']} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
