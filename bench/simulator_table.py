"""Before/after table of the simulator: every shipped scenario x met/tiramola/static over seeds,
with the fixed-size frontier, measured on any checkout of metctl (so the same scoring can be
applied to the model before and after a change).

    .venv/bin/python bench/simulator_table.py --tree /tmp/metctl-before --seeds 1,2,3 --out before.json
    .venv/bin/python bench/simulator_table.py --tree . --seeds 1,2,3 --out after.json

Each run is a subprocess with PYTHONPATH=TREE (two at a time: the machine has 2 cores). Scores
are computed here from the recorded per-step series, the same definitions as
controller/report.py: a tenant SLO window is a 2-s window in which one workload's own mean
response time exceeds the SLO (summed over workloads); the frontier ratio is a policy's
operations over the upper concave hull of the static points (node-minutes, ops) interpolated at
its node-minutes. Prints a Markdown table; writes every figure as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.policy_table import markdown_table  # noqa: E402
from controller.evaluation import hull_at, upper_hull  # noqa: E402

RUN_ONE = r"""
import json, sys
import numpy as np
try:
    from controller.harness import build_run
except ImportError:  # a checkout from before the harness moved (c2440f1)
    from simulator.harness import build_run
from controller.config import load_config
from simulator.scenario import load_scenario
scenario, policy, seed, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
sc = load_scenario(scenario)
upd = {"seed": seed}
if size > 0:
    upd["initial_nodes"] = size
sc = sc.model_copy(update=upd)
run = build_run(load_config(None), sc, policy=policy)
run.run()
c = run.cluster
ops = np.asarray(c.rec_ops, dtype=float)
lat = np.asarray(c.rec_latency_wl_ms, dtype=float)
per = max(1, int(round(sc.slo_interval_s / c.settings.tick_s)))
n = ops.shape[0] // per
o = ops[: n * per].reshape(n, per, -1)
l = lat[: n * per].reshape(n, per, -1)
w = o.sum(axis=1)
mean = np.where(w > 0, (o * l).sum(axis=1) / np.maximum(w, 1e-12), 0.0)
by_wl = {name: int(((mean[:, i] > sc.slo_latency_ms) & (w[:, i] > 0)).sum()) for i, name in enumerate(c.wl_names)}
tot = ops.sum(axis=1)
agg = np.asarray(c.rec_latency_ms, dtype=float)[: n * per].reshape(n, per)
tw = tot[: n * per].reshape(n, per)
amean = np.where(tw.sum(1) > 0, (tw * agg).sum(1) / np.maximum(tw.sum(1), 1e-12), 0.0)
vms = np.asarray(c.rec_vms, dtype=float)
print(json.dumps({"ops": float(ops.sum()), "node_minutes": float(vms.sum() * c.settings.tick_s / 60),
                  "max_nodes": int(vms.max()), "tenant_windows": int(sum(by_wl.values())),
                  "by_workload": by_wl, "aggregate_windows": int((amean > sc.slo_latency_ms).sum()),
                  "wall_s": run.wall_s}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=".")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sizes", default="4,6,8,12,16,24")
    ap.add_argument("--scenarios", default="met-elasticity,incremental-elasticity,sudden-spike")
    ap.add_argument("--policies", default="met,tiramola,static")
    ap.add_argument("--out", default="simulator-table.json")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    tree = str(Path(a.tree).resolve())
    seeds = [int(s) for s in a.seeds.split(",")]
    sizes = [int(s) for s in a.sizes.split(",")]
    scenarios = a.scenarios.split(",")
    policies = a.policies.split(",")
    jobs = [(sc, p, s, 0) for sc in scenarios for p in policies for s in seeds]
    jobs += [(sc, "static", s, n) for sc in scenarios for s in seeds for n in sizes]
    env = dict(os.environ, PYTHONPATH=tree)

    def run(job):
        sc, p, s, n = job
        r = subprocess.run([sys.executable, "-c", RUN_ONE, sc, p, str(s), str(n)], cwd=tree, env=env,
                           capture_output=True, text=True, timeout=900)
        if r.returncode:
            print(f"{job}: {r.stderr[-500:]}", file=sys.stderr)
            return job, None
        return job, json.loads(r.stdout.strip().splitlines()[-1])

    with ThreadPoolExecutor(a.jobs) as pool:
        results = dict(pool.map(run, jobs))
    table: dict = {}
    for sc in scenarios:
        for p in policies:
            rows = []
            for s in seeds:
                r = results[(sc, p, s, 0)]
                pts = [(results[(sc, "static", s, n)]["node_minutes"], results[(sc, "static", s, n)]["ops"])
                       for n in sizes if results.get((sc, "static", s, n))]
                r = dict(r, frontier_ratio=r["ops"] / hull_at(upper_hull(pts), r["node_minutes"]))
                rows.append(r)
            table.setdefault(sc, {})[p] = rows
        table[sc]["frontier"] = {str(s): [dict(size=n, **results[(sc, "static", s, n)]) for n in sizes]
                                 for s in seeds}
    Path(a.out).write_text(json.dumps(table, indent=2) + "\n")
    keys = [("ops", "M ops", 1e6, "{:.2f}"), ("node_minutes", "node-min", 1, "{:.0f}"),
            ("max_nodes", "max machines", 1, "{:.1f}"), ("tenant_windows", "tenant SLO windows", 1, "{:.0f}"),
            ("frontier_ratio", "frontier ratio", 1, "{:.3f}")]
    print(markdown_table(table, scenarios, policies, keys))

if __name__ == "__main__":
    main()
