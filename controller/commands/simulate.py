"""`metctl simulate` — run a policy on the simulated cluster and write its report.

    metctl simulate --scenario configs/scenarios/met-elasticity.yaml --policy met --out out/met
    metctl simulate --scenario met-elasticity --compare met,tiramola,static --out out/compare

    metctl simulate --scenario met-elasticity --compare met,tiramola,static --seeds 1,2,3 \
        --frontier 4,6,8,12,16,24 --out out/compare

Writes summary.json, timeseries.csv (one row per simulated second) and PNG plots to --out;
--compare runs every policy on the same scenario and seed, writes each run under
OUT/<policy>/, a compare.png and compare.json, and prints a side-by-side table.
--seeds runs each seed (OUT/[<policy>/]seed-N/), prints the mean and min–max of every figure and
writes `per_seed` into summary.json / compare.json. --frontier runs the static policy at each
cluster size (the scenario's initial_nodes replaced; OUT/frontier/size-N/), writes frontier.json
and frontier.png and, with --compare, each policy's frontier ratio (controller/evaluation.py).
Runs go two at a time in separate processes when there are several.
"""
from __future__ import annotations

import json
import logging
import multiprocessing
from types import SimpleNamespace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from controller.config_files import FILE_OR_NAME, load_given_config
from controller.options import SEED
from controller.errors import BadInput
from controller.cost import DEFAULT_TARGET, check_target, cost_at_slo, smallest_static, static_over_oracle, spread
from controller.evaluation import aggregate, frontier_ratio, upper_hull
from controller.harness import build_run
from controller.report import _clean, plot_compare, plot_frontier, write_report
from decision.policies import POLICY_NAMES
from simulator.scenario import load_scenario

POLICIES = POLICY_NAMES  # the names --policy and --compare take (decision/policies.py)


def run_one(config, scenario, policy: str, out: Path, *, seed: int | None, transfer: str | None,
            console: Console, plots: bool = True, label: str | None = None) -> tuple[dict[str, Any], Any]:
    if seed is not None:
        scenario = scenario.model_copy(update={"seed": seed})
    run = build_run(config, scenario, policy=policy, data_transfer=transfer)
    duration = scenario.duration_s
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                  TextColumn("{task.fields[sim]} simulated · {task.fields[nodes]} machines"),
                  TimeElapsedColumn(), console=console, disable=not console.is_terminal,
                  transient=False) as progress:
        task = progress.add_task(label or policy, total=duration, sim="0 min", nodes="-")

        def tick(now: float) -> None:
            progress.update(task, completed=min(now, duration), sim=f"{now / 60:.0f} min",
                            nodes=run.cluster.billed_vms())

        run.run(progress=tick)
        progress.update(task, completed=duration)
    summary = write_report(run, out, policy, seed=scenario.seed, plots=plots)
    if not console.is_terminal:
        console.print(f"simulate: {label or policy}: {summary['total_ops']:.0f} ops, "
                      f"{summary['node_minutes']:.0f} node-minutes, max {summary['max_nodes']} machines, "
                      f"wall {summary['wall_time_s']:.1f} s -> {out}")
    return summary, run


def compare_table(summaries: dict[str, dict[str, Any]]) -> Table:
    names = list(summaries)
    t = Table(title="policies on the same scenario and seed")
    t.add_column("")
    for n in names:
        t.add_column(n, justify="right")
    first_phase = {n: s["phases"][0] for n, s in summaries.items()}
    # the scenario's own window (they all ran the same scenario); 2 s is the scenario default
    window = float(next(iter(summaries.values())).get("slo_interval_s", 2.0))
    def mm(s, key, fmt):
        r = s.get("min_max", {}).get(key)
        return f" ({fmt(r[0])}–{fmt(r[1])})" if r and r[0] != r[1] else ""

    rows = [
        ("SLO attainment (worst tenant)", lambda s, n: f"{s['slo_attainment']:.3f}"
         + mm(s, "slo_attainment", lambda v: f"{v:.3f}")),
        (f"tenant windows with mean latency over the SLO ({window:g}-s windows, all workloads)", lambda s, n: f"{s['slo_violation_tenant_windows']:.0f}"
         + mm(s, "slo_violation_tenant_windows", lambda v: f"{v:.0f}")),
        ("total operations", lambda s, n: f"{s['total_ops'] / 1e6:.2f} M"
         + mm(s, "total_ops", lambda v: f"{v / 1e6:.2f}")),
        ("frontier ratio", lambda s, n: f"{s['frontier_ratio']:.3f}" + mm(s, "frontier_ratio", lambda v: f"{v:.3f}")
         if s.get("frontier_ratio") is not None else "-"),
        ("mean throughput (ops/s)", lambda s, n: f"{s['mean_throughput']:,.0f}"),
        (f"ops in phase 1 (0–{first_phase[names[0]]['to_s'] / 60:.0f} min)",
         lambda s, n: f"{first_phase[n]['ops'] / 1e6:.2f} M"),
        ("node-minutes", lambda s, n: f"{s['node_minutes']:,.0f}" + mm(s, "node_minutes", lambda v: f"{v:,.0f}")),
        ("max machines", lambda s, n: f"{s['max_nodes']:g}" + mm(s, "max_nodes", lambda v: f"{v:g}")),
        ("final machines", lambda s, n: f"{s['final_nodes']:g}"),
        ("SLO violations, all tenants averaged", lambda s, n: f"{s['slo_violation_intervals']:g}"),
        ("SLO violation magnitude (ms)", lambda s, n: f"{s['slo_violation_magnitude']:,.0f}"),
        ("… during actions", lambda s, n: f"{s['slo_violation_intervals_during_actions']:g}"),
        ("mean latency (ms)", lambda s, n: f"{s['mean_latency_ms']:.1f}"),
        ("plans (done/submitted)", lambda s, n: f"{s['plans']['done']}/{s['plans']['submitted']}"
         + (" (first seed)" if s.get("per_seed") else "")),
        ("actions", lambda s, n: ", ".join(f"{k} {v}" for k, v in s["actions"].items()) or "-"),
        ("wall time (s)", lambda s, n: f"{s['wall_time_s']:.1f}"),
    ]
    for label, fn in rows:
        t.add_row(label, *[fn(summaries[n], n) for n in names])
    return t


def check_out_dir(out: Path) -> None:
    """Refuse an output directory that cannot be written before simulating, not after."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".metctl-write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise BadInput(str(out), "--out", f"a directory metctl can create and write "
                       f"({err.strerror or type(err).__name__})") from None


@click.command(name="simulate")
@click.option("--scenario", "scenario_path", default=None,
              help="Scenario YAML (a path, or a name in configs/scenarios/). Default: the config's "
              "simulator.scenario. A workload is closed loop (threads, target_ops) or open loop: "
              "rate: [[t_s, ops_per_s], ...] or {shape: constant|ramp|steps|daily|spike, ..., "
              "noise}, requests failing after timeout_ms (default 1000); docs/simulator.md, "
              "'Scenario files'.")
@click.option("--policy", type=click.Choice(POLICIES), default=None,
              help="Policy to run (default: the config's policy.name).")
@click.option("--compare", default=None,
              help="Comma-separated policies to run on the same seed, e.g. met,tiramola,static.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output directory (default: out/<scenario>-<policy or compare>).")
@click.option("--seed", type=SEED, default=None, help="Random seed (default: the scenario's).")
@click.option("--config", "config_path", metavar="FILE", default=None, type=FILE_OR_NAME,
              help="metctl config YAML (default: the embedded one).")
@click.option("--transfer", type=click.Choice(("none", "incremental", "parallel")), default=None,
              help="Override how moves transfer data (see simulator.data_transfer).")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots.")
@click.option("--seeds", default=None, help="Comma-separated seeds: run each, report mean and min–max (e.g. 1,2,3).")
@click.option("--frontier", default=None,
              help="Comma-separated cluster sizes: run the static policy at each (the fixed-size frontier), e.g. 4,6,8,12,16,24.")
@click.option("--slo-target", default=str(DEFAULT_TARGET), show_default=True,
              help="With --frontier: the worst-tenant SLO attainment a run must reach to count "
                   "(smallest static size meeting it, cost ratios), a fraction in (0, 1].")
def command(scenario_path, policy, compare, out_dir, seed, config_path, transfer, no_plots, seeds, frontier,
            slo_target):
    """Run a policy on the simulated cluster; write summary.json, a per-second CSV and plots."""
    target = _target(slo_target)
    config = load_given_config(config_path)
    scenario = load_scenario(scenario_path or config.simulator.scenario)
    logging.getLogger("metctl").setLevel(logging.WARNING)
    console = Console(stderr=True)
    out_console = Console()
    seed_list = _int_list("--seeds", seeds) if seeds is not None else None
    if seed_list and seed is not None:
        raise BadInput("--seed", "", "either --seed or --seeds, not both")
    sizes = _int_list("--frontier", frontier) if frontier is not None else None
    if compare is not None:  # `--compare ""` is a mistake, not "no comparison"
        names = [p.strip() for p in compare.split(",") if p.strip()]
        bad = [p for p in names if p not in POLICIES]
        if bad or not names:
            raise BadInput("--compare", "", f"comma-separated policies from {', '.join(POLICIES)} (got {compare!r})")
        if len(set(names)) != len(names):  # two runs would write into one directory
            raise BadInput("--compare", "", f"each policy once (got {compare!r})")
    else:
        names = [policy or config.policy.name]
    label = "compare" if compare else names[0]
    out = Path(out_dir or f"out/{scenario.name}-{label}")
    check_out_dir(out)
    if not seed_list and not sizes:  # one run per policy, in this process (live progress bars)
        summaries, runs = {}, {}
        for p in names:
            summaries[p], runs[p] = run_one(config, scenario, p, out / p if compare else out, seed=seed,
                                            transfer=transfer, console=console, plots=not no_plots)
        if compare:
            if not no_plots:
                plot_compare(runs, out)
            (out / "compare.json").write_text(json.dumps(_clean(summaries), indent=2) + "\n")
        out_console.print(compare_table(summaries))
        out_console.print(f"reports in {out}/" if compare else f"report in {out}/")
        return
    run_seeds = seed_list or [seed if seed is not None else scenario.seed]
    jobs = []
    for p in names:
        for sd in run_seeds:
            where = (out / p if compare else out) / f"seed-{sd}" if seed_list else (out / p if compare else out)
            jobs.append((("policy", p, sd), config, scenario, p, where, sd, transfer, not no_plots))
    for n in sizes or []:
        for sd in run_seeds:
            sc = scenario.model_copy(update={"initial_nodes": n})
            jobs.append((("size", n, sd), config, sc, "static", out / "frontier" / f"size-{n}" / f"seed-{sd}",
                         sd, transfer, False))
    results = _run_jobs(jobs)
    summaries = {p: [results[("policy", p, sd)][0] for sd in run_seeds] for p in names}
    front: dict[str, Any] | None = None
    if sizes:
        front = _frontier(results, sizes, run_seeds)
        for p in names:
            for sd, summ in zip(run_seeds, summaries[p]):
                summ["frontier_ratio"] = frontier_ratio(front["hull_by_seed"][str(sd)], summ["node_minutes"],
                                                        summ["total_ops"])
        out.mkdir(parents=True, exist_ok=True)
        front["policies"] = {p: {"per_seed": [{"seed": sd, "node_minutes": s["node_minutes"], "ops": s["total_ops"],
                                               "frontier_ratio": s["frontier_ratio"],
                                               "slo_attainment": s["slo_attainment"]}
                                              for sd, s in zip(run_seeds, summaries[p])]} for p in names}
        front.update(_cost_at_slo(front, summaries, results, sizes, run_seeds, target))
        (out / "frontier.json").write_text(json.dumps(_clean(front), indent=2) + "\n")
        if not no_plots:
            plot_frontier(front, out / "frontier.png", scenario.name)
    final = {p: aggregate(v) if seed_list else v[0] for p, v in summaries.items()}
    out.mkdir(parents=True, exist_ok=True)
    if compare:
        if not no_plots:
            first = run_seeds[0]
            plot_compare({p: results[("policy", p, first)][1] for p in names}, out)
        (out / "compare.json").write_text(json.dumps(_clean(final), indent=2) + "\n")
    elif seed_list:
        (out / "summary.json").write_text(json.dumps(_clean(final[names[0]]), indent=2) + "\n")
    elif sizes:  # one run, its summary.json already written; add the frontier ratio
        (out / "summary.json").write_text(json.dumps(_clean(final[names[0]]), indent=2) + "\n")
    table = compare_table(final)
    if seed_list:
        table.title = f"mean over seeds {', '.join(map(str, run_seeds))} (min–max)"
    out_console.print(table)
    if front:
        out_console.print("fixed-size frontier (static): " + ", ".join(
            f"{r['size']} nodes {r['ops'] / 1e6:.2f} M ops / {r['node_minutes']:.0f} node-min, "
            f"attainment {r['slo_attainment']:.3f}" for r in front["sizes"]))
        out_console.print(cost_table(front))
    out_console.print(f"reports in {out}/")


def _target(text: str) -> float:
    try:
        return check_target(float(text))
    except ValueError:
        raise BadInput("--slo-target", "", f"a fraction in (0, 1], e.g. 0.99 (got {text!r})") from None


def _cost_at_slo(front, summaries, results, sizes, seeds, target) -> dict[str, Any]:
    """frontier.json's cost at the SLO: the smallest static size meeting the target per seed,
    the oracle, and each policy's node-minutes and ratios (controller/cost.py)."""
    static = {str(sd): smallest_static([(n, results[("size", n, sd)][0]["node_minutes"],
                                          results[("size", n, sd)][0]["slo_attainment"]) for n in sizes], target)
              for sd in seeds}
    oracle = {str(sd): _oracle_of(results, sizes, sd, summaries) for sd in seeds}
    return {
        "slo_target": target,
        "smallest_static_meeting_slo": {"per_seed": static,
                                        "size": spread([v["size"] if v else None for v in static.values()]),
                                        "node_minutes": spread([v["node_minutes"] if v else None
                                                                for v in static.values()])},
        "oracle_node_minutes": {"per_seed": oracle, **spread(list(oracle.values()))},
        "smallest_static_over_oracle": static_over_oracle(static, oracle),
        "cost_at_slo": {p: cost_at_slo([{"seed": sd, **s} for sd, s in zip(seeds, summaries[p])], static, oracle,
                                       target) for p in summaries},
    }


def _oracle_of(results, sizes, sd, summaries) -> float | None:
    """The oracle depends on the scenario and seed only: any run of that seed carries it."""
    for n in sizes:
        v = results[("size", n, sd)][0].get("oracle_node_minutes")
        if v is not None:
            return float(v)
    return None


def cost_table(front: dict[str, Any]) -> Table:
    """Each policy's node-minutes and attainment beside the smallest SLO-meeting static and the
    oracle: the ratios count only where the policy meets the target."""
    target = front["slo_target"]
    st, oracle = front["smallest_static_meeting_slo"], front["oracle_node_minutes"]
    t = Table(title=f"cost at the SLO (every tenant in >= {target:.1%} of windows; mean, min–max over seeds)")
    for c in ("", "attainment", "node-min", "seeds meeting", "/ smallest SLO static", "/ oracle"):
        t.add_column(c, justify="right" if c else "left")

    def fmt(sp, f="{:.3f}") -> str:
        if sp["mean"] is None:
            return "-"
        rng = f" ({f.format(sp['min'])}–{f.format(sp['max'])})" if sp["min"] != sp["max"] else ""
        return f.format(sp["mean"]) + rng + (f" [{sp['counted']}/{sp['of']}]" if sp["counted"] < sp["of"] else "")

    size = st["size"]
    label = "smallest SLO static" + (f" ({size['mean']:g} nodes)" if size["mean"] is not None
                                      and size["min"] == size["max"] else "")
    t.add_row(label, "", fmt(st["node_minutes"], "{:.0f}"), "", "1.000" if st["node_minutes"]["mean"] else "-",
              fmt(front["smallest_static_over_oracle"]))
    t.add_row("oracle", "", fmt(oracle, "{:.0f}"), "", "", "1.000" if oracle["mean"] else "-")
    for p, c in front["cost_at_slo"].items():
        t.add_row(p, fmt(c["slo_attainment"]), fmt(c["node_minutes"], "{:.0f}"), f"{c['meets_slo']}/{len(c['per_seed'])}",
                  fmt(c["vs_smallest_static"]), fmt(c["vs_oracle"]))
    return t


def _int_list(flag: str, text: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        vals = []
    if not vals or (flag == "--frontier" and min(vals) < 1):
        raise BadInput(flag, "", f"comma-separated {'cluster sizes >= 1' if flag == '--frontier' else 'integers'} (got {text!r})")
    return list(dict.fromkeys(vals))


class _PlotRun:
    """Enough of a run for plot_compare, rebuilt from what a worker process sends back."""

    def __init__(self, scenario, recording, busy):
        self.scenario = scenario
        self.cluster = SimpleNamespace(recording=lambda: recording)
        self.recorder = SimpleNamespace(busy_intervals=busy)


def _job(job):
    key, config, scenario, policy, out, sd, transfer, plots = job
    console = Console(stderr=True, force_terminal=False)
    summary, run = run_one(config, scenario, policy, out, seed=sd, transfer=transfer, console=console,
                           plots=plots, label=f"{policy} seed {sd}" + (f" {scenario.initial_nodes} nodes" if key[0] == "size" else ""))
    return key, summary, scenario.model_copy(update={"seed": sd}), run.cluster.recording(), list(run.recorder.busy_intervals)


def _run_jobs(jobs) -> dict:
    """Each run in its own process, two at a time (the runs are CPU-bound and independent)."""
    results = {}
    if len(jobs) == 1:
        outs = [_job(jobs[0])]
    else:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(min(2, len(jobs))) as pool:
            outs = pool.map(_job, jobs, chunksize=1)
    for key, summary, sc, rec, busy in outs:
        results[key] = (summary, _PlotRun(sc, rec, busy))
    return results


def _frontier(results, sizes, seeds) -> dict[str, Any]:
    rows = []
    hulls = {}
    for sd in seeds:
        pts = []
        for n in sizes:
            s = results[("size", n, sd)][0]
            pts.append((s["node_minutes"], s["total_ops"]))
        hulls[str(sd)] = upper_hull(pts)
    for n in sizes:
        per = [results[("size", n, sd)][0] for sd in seeds]
        rows.append({"size": n, "ops": float(sum(s["total_ops"] for s in per) / len(per)),
                     "node_minutes": float(sum(s["node_minutes"] for s in per) / len(per)),
                     "slo_attainment": float(sum(s["slo_attainment"] for s in per) / len(per)),
                     "slo_violation_tenant_windows": float(sum(s["slo_violation_tenant_windows"] for s in per) / len(per)),
                     "per_seed": [{"seed": sd, "ops": s["total_ops"], "node_minutes": s["node_minutes"],
                                   "slo_attainment": s["slo_attainment"],
                                   "slo_attainment_by_workload": s["slo_attainment_by_workload"],
                                   "slo_violation_tenant_windows": s["slo_violation_tenant_windows"],
                                   "slo_violation_windows_by_workload": s["slo_violation_windows_by_workload"]}
                                  for sd, s in zip(seeds, per)]})
    return {"sizes": rows, "hull_by_seed": hulls,
            "hull": upper_hull([(r["node_minutes"], r["ops"]) for r in rows]),
            "method": "frontier ratio = ops / upper concave hull of the static (node_minutes, ops) points of "
                      "the same seed, interpolated linearly at the policy's node-minutes (controller/evaluation.py)"}
