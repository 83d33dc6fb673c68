"""Speed of the open-loop simulator (prints; asserts nothing).

A 90-minute open-loop scenario on 40 default nodes with 2,000 regions (five tenants of 400
regions, YCSB mixes A, B, C, E, F; each a daily sine compressed to 90 minutes with 5 % noise,
phases spread so the peaks do not coincide), run through the harness (collector, executor and
control loop included) under a policy. Target (issue 25): under 60 s on 2 cores.

    .venv/bin/python bench/bench_open_loop.py [--policy met|static|...] [--minutes 90]
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.config import MetctlConfig  # noqa: E402
from controller.harness import build_run  # noqa: E402
from simulator.scenario import scenario_from_dict  # noqa: E402

CONFIG = MetctlConfig.model_validate({"loop": {"memory_path": None},
                                      "telemetry": {"prometheus_enabled": False}})


def scenario(minutes: float, nodes: int = 40, regions_per_tenant: int = 400) -> dict:
    period = minutes * 60.0
    tenants = []
    for i, ycsb in enumerate("ACEBF"):
        mean = {"A": 36000, "C": 70000, "E": 3500, "B": 20000, "F": 32000}[ycsb]
        tenants.append({"name": f"tenant-{ycsb.lower()}", "ycsb": ycsb, "records": 4_000_000,
                        "regions": regions_per_tenant,
                        "rate": {"shape": "daily", "mean_ops_per_s": mean, "amplitude": 0.5,
                                 "period_s": period, "phase_s": -i * period / 10, "noise": 0.05}})
    return {"name": "bench-open-loop", "duration_s": period, "initial_nodes": nodes, "seed": 1,
            "slo_latency_ms": 50, "workloads": tenants}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policy", default="met")
    ap.add_argument("--minutes", type=float, default=90.0)
    args = ap.parse_args()
    sc = scenario_from_dict(scenario(args.minutes), "<bench-open-loop>")
    run = build_run(CONFIG, sc, policy=args.policy)
    wall, cpu = time.perf_counter(), time.process_time()
    run.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rec = run.cluster.recording()
    offered, served, failed = rec.offered.sum(), rec.ops.sum(), rec.failed.sum()
    p99 = np.nanmax(np.nan_to_num(rec.p99_wl_ms, nan=0.0), axis=1)
    print(f"[open loop] {args.minutes:g} min, {len(run.cluster.nodes)} nodes at the end "
          f"({sc.initial_nodes} at the start), {len(run.cluster.region_ids)} regions, "
          f"{len(sc.workloads)} open tenants, policy {args.policy}: wall {wall:.1f} s, "
          f"cpu {cpu:.1f} s ({cpu / len(rec.t) * 1000:.2f} ms per simulated second), "
          f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"[open loop] offered {offered / 1e6:.1f} M, served {served / 1e6:.1f} M, failed "
          f"{failed / 1e3:.1f} k; worst tenant's p99 per step: median {np.median(p99):.1f} ms, "
          f"max {p99.max():.1f} ms; machines max {rec.vms.max():.0f}")


if __name__ == "__main__":
    main()
