"""`metctl simulate` — run a policy on the simulated cluster and write its report.

    metctl simulate --scenario configs/scenarios/met-elasticity.yaml --policy met --out out/met
    metctl simulate --scenario met-elasticity --compare met,tiramola,static --out out/compare

Writes summary.json, timeseries.csv (one row per simulated second) and PNG plots to --out;
--compare runs every policy on the same scenario and seed, writes each run under
OUT/<policy>/, a compare.png and compare.json, and prints a side-by-side table.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from controller.config import load_config
from controller.options import SEED
from controller.errors import BadInput
from controller.report import _clean, plot_compare, write_report
from simulator.harness import build_run
from simulator.scenario import load_scenario

POLICIES = ("met", "tiramola", "static")


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
            vms = run.cluster.rec_vms[-1] if run.cluster.rec_vms else scenario.initial_nodes
            progress.update(task, completed=min(now, duration), sim=f"{now / 60:.0f} min", nodes=vms)

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
    rows = [
        ("total operations", lambda s, n: f"{s['total_ops'] / 1e6:.2f} M"),
        ("mean throughput (ops/s)", lambda s, n: f"{s['mean_throughput']:,.0f}"),
        (f"ops in phase 1 (0–{first_phase[names[0]]['to_s'] / 60:.0f} min)",
         lambda s, n: f"{first_phase[n]['ops'] / 1e6:.2f} M"),
        ("node-minutes", lambda s, n: f"{s['node_minutes']:,.0f}"),
        ("max machines", lambda s, n: str(s["max_nodes"])),
        ("final machines", lambda s, n: str(s["final_nodes"])),
        ("SLO violations (2 s windows)", lambda s, n: str(s["slo_violation_intervals"])),
        ("SLO violation magnitude (ms)", lambda s, n: f"{s['slo_violation_magnitude']:,.0f}"),
        ("… during actions", lambda s, n: str(s["slo_violation_intervals_during_actions"])),
        ("mean latency (ms)", lambda s, n: f"{s['mean_latency_ms']:.1f}"),
        ("plans (done/submitted)", lambda s, n: f"{s['plans']['done']}/{s['plans']['submitted']}"),
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
              help="Scenario YAML (a path, or a name in configs/scenarios/). Default: the config's simulator.scenario.")
@click.option("--policy", type=click.Choice(POLICIES), default=None,
              help="Policy to run (default: the config's policy.name).")
@click.option("--compare", default=None,
              help="Comma-separated policies to run on the same seed, e.g. met,tiramola,static.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output directory (default: out/<scenario>-<policy or compare>).")
@click.option("--seed", type=SEED, default=None, help="Random seed (default: the scenario's).")
@click.option("--config", "config_path", metavar="FILE", default=None,
              help="metctl config YAML (default: the embedded one).")
@click.option("--transfer", type=click.Choice(("none", "incremental", "parallel")), default=None,
              help="Override how moves transfer data (see simulator.data_transfer).")
@click.option("--no-plots", is_flag=True, help="Skip the PNG plots.")
def command(scenario_path, policy, compare, out_dir, seed, config_path, transfer, no_plots):
    """Run a policy on the simulated cluster; write summary.json, a per-second CSV and plots."""
    config = load_config(config_path)
    scenario = load_scenario(scenario_path or config.simulator.scenario)
    logging.getLogger("metctl").setLevel(logging.WARNING)
    console = Console(stderr=True)
    out_console = Console()
    if compare is not None:  # `--compare ""` is a mistake, not "no comparison"
        names = [p.strip() for p in compare.split(",") if p.strip()]
        bad = [p for p in names if p not in POLICIES]
        if bad or not names:
            raise BadInput("--compare", "", f"comma-separated policies from {', '.join(POLICIES)} (got {compare!r})")
        if len(set(names)) != len(names):  # two runs would write into one directory
            raise BadInput("--compare", "", f"each policy once (got {compare!r})")
        out = Path(out_dir or f"out/{scenario.name}-compare")
        check_out_dir(out)
        summaries, runs = {}, {}
        for p in names:
            summaries[p], runs[p] = run_one(config, scenario, p, out / p, seed=seed, transfer=transfer,
                                            console=console, plots=not no_plots)
        if not no_plots:
            plot_compare(runs, out)
        (out / "compare.json").write_text(json.dumps(_clean(summaries), indent=2) + "\n")
        out_console.print(compare_table(summaries))
        out_console.print(f"reports in {out}/")
        return
    name = policy or config.policy.name
    out = Path(out_dir or f"out/{scenario.name}-{name}")
    check_out_dir(out)
    summary, _ = run_one(config, scenario, name, out, seed=seed, transfer=transfer, console=console,
                         plots=not no_plots)
    out_console.print(compare_table({name: summary}))
    out_console.print(f"report in {out}/")
