"""How a quota'd RegionServer's CPU follows its load: YCSB C (cached gets) on one RegionServer
(the default slice, deploy/localproc/cgroups.py) at rates from a tenth of its saturated rate up
to saturation; per step the gets/s served, the RegionServer's CPU (cores, and the share of its
slice) and CPU per get against the saturated figure.

Why: the simulator's node spends CPU in proportion to the requests it serves (costs.get_cpu_ms,
calibrated at saturation by bench/calibrate_hbase.py), and every policy that reads CPU (MET's
marks, target-tracking, tiramola) sizes from it. calibrate_hbase's one-thread run already saw a
quota'd RegionServer use its whole slice at about half its saturated rate; this measures the
whole curve (docs/simulator.md, "A quota'd RegionServer's CPU at light load").

    .venv/bin/python bench/cpu_curve_hbase.py [--fractions 0.1,0.25,0.5,0.75] [--seconds 30]

~5 minutes on 2 cores (cluster start, load, warm-up, a saturated run, one run per fraction).
Figures go to out/cpu-curve-hbase/report.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.calibrate_hbase import measure  # noqa: E402
from deploy.local_hbase import cluster as CLUSTER  # noqa: E402
from deploy.local_hbase import ycsb as YCSB  # noqa: E402
from deploy.localproc.cgroups import add_quota_arguments, quota_options  # noqa: E402


def curve_rows(saturated: dict[str, Any], steps: list[dict[str, Any]],
               slice_cores: float | None) -> list[dict[str, Any]]:
    """One row per measured run (the saturated one last): its rate as a fraction of the
    saturated rate, the RegionServer's CPU in cores and as a share of its slice, CPU ms per
    get, and that over the saturated run's (1.0: CPU in proportion to the gets served)."""
    base = saturated["server_cpu_ms_per_op"]
    rows = []
    for run in [*steps, saturated]:
        window = run["window_s"] or 1e-9
        cores = run["server_cpu_s"] / window
        per_op = run["server_cpu_ms_per_op"]
        rows.append({"target_ops_s": run.get("target_ops_s"), "ops_s": run["ops_s"],
                     "fraction_of_saturated": round(run["ops_s"] / saturated["ops_s"], 3),
                     "server_cores": round(cores, 4),
                     "share_of_slice": round(cores / slice_cores, 3) if slice_cores else None,
                     "cpu_ms_per_get": round(per_op, 4) if per_op is not None else None,
                     "per_get_vs_saturated": round(per_op / base, 2) if per_op and base else None,
                     "mean_latency_ms": round(run["mean_latency_us"] / 1000, 2)
                     if run.get("mean_latency_us") else None})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fractions", default="0.1,0.25,0.5,0.75",
                    help="rates to run, as fractions of the saturated rate")
    ap.add_argument("--seconds", type=float, default=30, help="length of each measured run")
    ap.add_argument("--threads", type=int, default=8, help="YCSB threads of every run")
    ap.add_argument("--records", type=int, default=20_000, help="records (fit the block cache)")
    ap.add_argument("--workdir", default=str(ROOT / "out" / "cpu-curve-hbase-cluster"))
    ap.add_argument("--out", default=str(ROOT / "out" / "cpu-curve-hbase" / "report.json"))
    add_quota_arguments(ap)
    a = ap.parse_args(argv)
    try:
        fractions = [float(x) for x in a.fractions.split(",") if x.strip()]
    except ValueError:
        fractions = []
    if not fractions or not all(0 < f <= 1 for f in fractions):
        print(f"cpu_curve_hbase: --fractions: expected numbers in (0, 1], got {a.fractions!r}",
              file=sys.stderr)
        return 2

    from actuator.hbase_gateway import HBaseGateway

    started = time.monotonic()
    YCSB.build()
    cluster = CLUSTER.LocalHBase(a.workdir, **quota_options(a))
    rs_slice = cluster.slice_for("rs") if cluster.quota_on else None
    slice_cores = rs_slice.cpu_cores if rs_slice is not None else None
    kw = {"records": a.records, "threads": a.threads, "scan_length": 1}
    try:
        cluster.start(rs=1)
        rs = cluster.region_servers()[0]
        with HBaseGateway(CLUSTER.home_for(cluster.version) / "lib", cluster.client_settings()) as gw:
            YCSB.load(cluster, gw, a.records, ["C"], threads=4)
        pids = [cluster.proc(rs.name).pid]
        measure(cluster, pids, "C", seconds=15, skip_s=5, **kw)  # warm-up (JIT, cache), not kept
        saturated = measure(cluster, pids, "C", seconds=a.seconds, skip_s=6, **kw)
        print(f"saturated: {saturated['ops_s']:.0f} gets/s", flush=True)
        steps = []
        for f in fractions:
            target = max(1.0, f * saturated["ops_s"])
            run = measure(cluster, pids, "C", seconds=a.seconds, skip_s=6, target_ops=target, **kw)
            run["target_ops_s"] = round(target, 1)
            steps.append(run)
            print(f"{f:.2f} of it: {run['ops_s']:.0f} gets/s, {run['server_cpu_s'] / run['window_s']:.3f} "
                  f"cores", flush=True)
    finally:
        cluster.stop()
    rows = curve_rows(saturated, steps, slice_cores)
    report = {"records": a.records, "threads": a.threads, "seconds": a.seconds, "slice_cores": slice_cores,
              "hbase": cluster.version, "cores": os.cpu_count(), "load_avg_1_5_15": os.getloadavg(),
              "rows": rows, "runs": {"saturated": saturated, "steps": steps},
              "whole_run_s": round(time.monotonic() - started, 1)}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"\n{'of saturated':>12} {'gets/s':>8} {'cores':>7} {'of slice':>9} {'ms/get':>7} {'x saturated':>11}")
    for r in rows:
        print(f"{r['fraction_of_saturated']:12.2f} {r['ops_s']:8.0f} {r['server_cores']:7.3f} "
              f"{r['share_of_slice'] if r['share_of_slice'] is not None else '':>9} "
              f"{r['cpu_ms_per_get']:7.3f} {r['per_get_vs_saturated']:11.2f}")
    print(f"\nwhole run {report['whole_run_s']} s; figures in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
