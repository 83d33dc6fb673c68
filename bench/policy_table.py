"""Judge policies the way issue 16 is judged: every scenario x seed, each policy against the
fixed-size frontier (static clusters of every size on the same seed) and tiramola.

    .venv/bin/python bench/policy_table.py --seeds 1,2,3 --out out/policy-table.json
    .venv/bin/python bench/policy_table.py --scenarios path/to/unseen.yaml --seeds 4,5,6
    .venv/bin/python bench/policy_table.py --variant mine=my-policy.yaml   # one more policy
    .venv/bin/python bench/policy_table.py --policies met --frontier-from out/policy-table.json

Policies: `met` (the default, guarded), `met-paper` (configs/met-paper.yaml: MET as the paper
writes it), `tiramola`, `static` (the scenario's initial size). Figures per run: operations,
node-minutes, the frontier ratio (operations over the static frontier's upper concave hull at the
policy's node-minutes, controller/evaluation.py; 1.0 = as good as the best fixed size of that
cost), tenant SLO windows (2-s windows in which one workload's mean response time exceeds the
SLO, summed over workloads), moves and restarts carried out, machines at most, and how long
plans took (seconds from submission to their end: all plans, and scale-out plans alone). Prints a
Markdown table of means (min–max over seeds) and writes every run's figures as JSON.
Runs in worker processes, `--jobs` at a time (default 2: CI's machines have 2 cores).
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.evaluation import frontier_ratio, upper_hull  # noqa: E402

SHIPPED = ("met-elasticity", "incremental-elasticity", "sudden-spike", "diurnal-shift",
           "staircase", "scan-burst", "hot-table", "hot-region", "daily-peaks")


def run_one(job: tuple[str, str, int, int, str | None]) -> tuple[tuple[str, str, int, int], dict]:
    """One simulated run: (scenario, policy, seed, size, config); size 0 = the scenario's own,
    config None = the built-in defaults."""
    import logging

    from controller.config import load_config
    from controller.harness import build_run
    from controller.report import summarize
    from simulator.scenario import load_scenario

    logging.getLogger("metctl").setLevel(logging.ERROR)
    scenario, policy, seed, size, config = job
    sc = load_scenario(scenario)
    sc = sc.model_copy(update={"seed": seed, **({"initial_nodes": size} if size else {})})
    cfg = load_config(config)
    name = cfg.policy.name if config else policy
    run = build_run(cfg, sc, policy=name)
    run.run()
    s = summarize(run, name, seed=seed)
    done = s.get("actions", {})
    return job[:4], {"ops": s["total_ops"], "node_minutes": s["node_minutes"], "max_nodes": s["max_nodes"],
                 "tenant_windows": s["slo_violation_tenant_windows"],
                 "moves": _count(done, "move"), "restarts": _count(done, "restart"),
                 "wall_s": s["wall_time_s"], **_plan_seconds(run)}


def _plan_seconds(run) -> dict[str, float]:
    """Mean seconds from a plan's submission to its end, over all plans and over scale-out plans
    (those whose decision launches nodes); 0 when there were none."""
    start: dict[str, float] = {}
    took: dict[str, float] = {}
    for t, event, plan_id in run.recorder.plan_events:
        if plan_id is None:
            continue
        if event == "submitted":
            start[plan_id] = t
        elif plan_id in start:
            took[plan_id] = t - start.pop(plan_id)
    out = {d.plan_id for d in run.recorder.decisions if d.plan_id and d.delta > 0}
    mean = lambda v: sum(v) / len(v) if v else 0.0  # noqa: E731
    return {"plan_s": mean(list(took.values())),
            "scale_out_plan_s": mean([v for k, v in took.items() if k in out])}


def _count(actions: dict, op: str) -> int:
    v = actions.get(op, 0)
    return int(v.get("done", 0) if isinstance(v, dict) else v)


def markdown_table(table: dict, scenarios: list[str], policies: list[str],
                   keys: list[tuple[str, str, float, str]]) -> str:
    """Rows of scenario x policy; each cell the mean over seeds with (min–max)."""
    lines = ["| scenario | policy | " + " | ".join(k[1] for k in keys) + " |",
             "|---|---|" + "---|" * len(keys)]
    for sc in scenarios:
        for p in policies:
            cells = []
            for key, _, div, fmt in keys:
                v = [row[key] / div for row in table[sc][p]]
                cells.append(f"{fmt.format(sum(v) / len(v))} ({fmt.format(min(v))}–{fmt.format(max(v))})")
            lines.append(f"| {Path(sc).stem} | {p} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", default=",".join(SHIPPED), help="names in configs/scenarios/ or paths")
    ap.add_argument("--policies", default="met,met-paper,tiramola,static")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=CONFIG",
                    help="one more policy to judge: a config file's policy under NAME (repeatable)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sizes", default="2,3,4,6,8,10,12,16,24", help="static sizes of the frontier")
    ap.add_argument("--frontier-from", metavar="JSON", default=None,
                    help="reuse the static frontier of an earlier --out file (same simulator, "
                         "scenarios, seeds and sizes): only the policies run")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="out/policy-table.json")
    a = ap.parse_args()
    scenarios, policies = a.scenarios.split(","), a.policies.split(",")
    seeds, sizes = [int(s) for s in a.seeds.split(",")], [int(n) for n in a.sizes.split(",")]
    configs = {"met-paper": str(ROOT / "configs" / "met-paper.yaml")}
    for v in a.variant:
        name, _, path = v.partition("=")
        if not name or not path:
            ap.error(f"--variant {v!r}: expected NAME=CONFIG")
        configs[name] = path
        policies.append(name)
    jobs = [(sc, p, s, 0, configs.get(p)) for sc in scenarios for p in policies for s in seeds]
    earlier: dict = {}
    if a.frontier_from:
        # static runs do not depend on the policy under test: a policy change need not redo them
        for sc, by in json.loads(Path(a.frontier_from).read_text()).items():
            for seed, rows in by.get("frontier", {}).items():
                for row in rows:
                    earlier[(sc, "static", int(seed), row["size"])] = {
                        k: v for k, v in row.items() if k != "size"}
    jobs += [(sc, "static", s, n, None) for sc in scenarios for s in seeds for n in sizes
             if (sc, "static", s, n) not in earlier]
    with ProcessPoolExecutor(a.jobs) as pool:
        results = {**earlier, **dict(pool.map(run_one, jobs))}
    table: dict = {}
    for sc in scenarios:
        for s in seeds:
            hull = upper_hull([(results[(sc, "static", s, n)]["node_minutes"], results[(sc, "static", s, n)]["ops"])
                               for n in sizes])
            for p in policies:
                r = results[(sc, p, s, 0)]
                r["frontier_ratio"] = frontier_ratio(hull, r["node_minutes"], r["ops"])
                table.setdefault(sc, {}).setdefault(p, []).append(dict(seed=s, **r))
            table[sc].setdefault("frontier", {})[str(s)] = [dict(size=n, **results[(sc, "static", s, n)])
                                                             for n in sizes]
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(table, indent=2) + "\n")
    keys = [("frontier_ratio", "frontier ratio", 1, "{:.3f}"), ("ops", "M ops", 1e6, "{:.2f}"),
            ("node_minutes", "node-min", 1, "{:.0f}"), ("max_nodes", "machines", 1, "{:.0f}"),
            ("tenant_windows", "tenant SLO windows", 1, "{:.0f}"), ("moves", "moves", 1, "{:.0f}"),
            ("restarts", "restarts", 1, "{:.0f}"), ("plan_s", "plan s", 1, "{:.0f}"),
            ("scale_out_plan_s", "scale-out plan s", 1, "{:.0f}")]
    print(f"seeds {a.seeds}; mean (min–max)\n")
    print(markdown_table(table, scenarios, policies, keys))
    ratios = {p: [row["frontier_ratio"] for sc in scenarios for row in table[sc][p]] for p in policies}
    print("\nfrontier ratio over all scenarios and seeds: " + ", ".join(
        f"{p} mean {sum(v) / len(v):.3f} min {min(v):.3f}" for p, v in ratios.items()))
    print(f"figures in {out}")


if __name__ == "__main__":
    main()
