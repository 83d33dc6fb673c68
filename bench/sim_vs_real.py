#!/usr/bin/env python3
"""The simulator against real quota'd HBase: with its node capacity calibrated once to one
quota'd RegionServer (`make calibrate-hbase`: out/calibrate-hbase/report.json, "quota_node"),
the simulator predicts every static size of `make scale-hbase` and every run of
`make compare-hbase`, and this bench reports the error of each prediction.

How a real run becomes a scenario: the same tables (records, regions, uniform keys: the
scenario's hot fractions 1.0), the same mix (YCSB A: read 0.5 / update 0.5; C: read 1.0), the
same clients (threads and -target rates, one client machine of one core, as the real clients'
control group), the same sizes; static runs use --policy static at that size, policy runs the
same configs/<preset>.yaml with the same bounds, started at the same size.

What is compared: throughput (operations per second over the measured window, or all the
operations of a compare run) and latency. The simulator's latency is a mean (its solver is
mean-value analysis) and its percentiles come from the wait's shape at each node, with the
stops of the RegionServers' CPU quota (simulator hardware.cpu_quota_period_ms, the local
cluster's 100-ms period unless --quota-period-ms says otherwise); the table gives the
predicted and measured mean and p99, and the error on the mean.

    .venv/bin/python bench/sim_vs_real.py [--scale out/scale-hbase/report.json]
        [--compare out/compare-hbase/report.json] [--calibration out/calibrate-hbase/report.json]
        [--per-node-at N] [--cost-growth-from REPORT [--cost-growth-experiment NAME]]
        [--quota-period-ms MS]

`--cost-growth-from REPORT`: a RegionServer of the local cluster spends more CPU per request
the more RegionServers share the machine; a scale report that read each RegionServer's CPU
(bench/scale_hbase.py) gives how much (simulator hardware.shared_machine_cost_growth), and the
simulator's servers pay it. Without it the simulator scales nearly linearly and the real
cluster does not, so calibrated on one RegionServer it overstates every larger cluster.

`--per-node-at N`: the node's server costs scaled so that the simulator serves, at N nodes,
what the scale bench measured at N RegionServers (its median), then everything predicted
again: a node calibrated to another day's machine (N = 1), or, without the cost growth, to
the size a comparison runs at.

Writes out/sim-vs-real/report.json and table.md.
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.config import load_config  # noqa: E402
from controller.harness import build_run  # noqa: E402
from bench.calibrate_hbase import quota_stops  # noqa: E402
from controller.report import summarize  # noqa: E402
from deploy.localproc.cgroups import PERIOD_US  # noqa: E402
from simulator.capacity import SERVER_CPU_COSTS  # noqa: E402
from simulator.scenario import Scenario  # noqa: E402

MIXES = {"A": {"read": 0.5, "update": 0.5}, "C": {"read": 1.0}}
RECORD_KB = 0.4  # the local YCSB tables: 4 fields of 100 bytes (deploy/local_hbase/ycsb.py)


def settings_for(calibration: dict[str, Any], period_ms: float | None = None) -> dict[str, Any]:
    """The simulator section a quota'd RegionServer calls for (calibrate_hbase.py's quota_node),
    with its quota's period: `period_ms` if given, else the report's, else the local cluster's
    (a report written before calibrate_hbase.py recorded it ran under that one); its CPU at
    light load and its periods' dispersion likewise the report's, else the local cluster's
    (calibrate_hbase.quota_stops)."""
    node = calibration["quota_node"]
    sim = dict(node["simulator"])
    quota = ({"cpu_quota_period_ms": PERIOD_US / 1000.0, "cpu_quota_run_share": min(node["cpu_cores"], 1.0),
              **quota_stops(node["cpu_cores"])}
             if node.get("cpu_cores") else {})
    hardware = {**quota, **sim.get("hardware", {})}
    if period_ms is not None:
        hardware["cpu_quota_period_ms"] = period_ms
    return {**sim, "hardware": hardware}


def simulate(config_doc: dict[str, Any], scenario: Scenario, policy: str | None) -> dict[str, Any]:
    """One simulated run; `policy` None: the config's own (a preset's file)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump(config_doc, f)
        path = f.name
    try:
        cfg = load_config(path)
    finally:
        Path(path).unlink()
    logging.getLogger("metctl").setLevel(logging.ERROR)
    run = build_run(cfg, scenario, policy=policy)
    run.run()
    return {"summary": summarize(run, policy or cfg.policy.name), "run": run}


def cost_growth(report: dict[str, Any], experiment: str) -> tuple[float, dict[int, float]]:
    """HardwareSettings.shared_machine_cost_growth measured by a scale report whose runs read
    each process's CPU (`cpu_cores`: rs1, rs2, ...): the RegionServers' CPU ms per operation at
    each size (median over the repetitions), and g such that the cost at the largest size is
    the smallest size's times (1 + g ln n_large) / (1 + g ln n_small). A report of several
    experiments (`experiments: {name: {runs}}`) is read at `experiment`."""
    if "experiments" in report:
        if experiment not in report["experiments"]:
            raise ValueError(f"has no experiment {experiment!r} (it has {', '.join(report['experiments'])})")
        report = report["experiments"][experiment]
    per_size: dict[int, list[float]] = {}
    for r in report.get("runs", []):
        rs = [v for k, v in (r.get("cpu_cores") or {}).items() if k.startswith("rs")]
        if rs and r.get("ops_per_s"):
            per_size.setdefault(int(r["size"]), []).append(sum(rs) / r["ops_per_s"] * 1000.0)
    if len(per_size) < 2:
        raise ValueError("needs runs at two sizes or more with each RegionServer's CPU (cpu_cores)")
    ms = {n: statistics.median(v) for n, v in sorted(per_size.items())}
    small, large = min(ms), max(ms)
    ratio = ms[large] / ms[small]
    span = math.log(large) - ratio * math.log(small)
    if span <= 0:  # only when the smallest size is above one server
        raise ValueError(f"its cost per operation grows {ratio:.2f}x from {small} to {large} servers, "
                         "faster than 1 + g ln n can follow (measure the curve from one server)")
    g = (ratio - 1.0) / span
    return max(g, 0.0), {n: round(v, 4) for n, v in ms.items()}


def cost_growth_from(path: str, experiment: str) -> dict[str, Any]:
    """The cost growth the scale report at `path` measured (cost_growth), as reports keep it:
    g, the CPU per operation by size and the file. ValueError says what is wrong with it."""
    try:
        g, per_op = cost_growth(json.loads(Path(path).read_text()), experiment)
    except OSError as err:
        raise ValueError(f"cannot be read ({err.strerror or err})") from err
    except (KeyError, TypeError) as err:
        raise ValueError(f"is not a scale report ({type(err).__name__}: {err})") from err
    return {"g": round(g, 3), "server_cpu_ms_per_op": per_op, "source": path}


def per_node_at(sim: dict[str, Any], scale_rows: list[dict[str, Any]], size: int) -> tuple[dict[str, Any], float]:
    """`sim` with each server cost times (predicted / measured ops/s at `size` nodes): a node of
    the capacity one RegionServer had in the measured cluster of that size. The factor too."""
    row = next((r for r in scale_rows if r["size"] == size), None)
    if row is None:
        raise ValueError(f"--per-node-at {size}: the scale report has no run at {size} RegionServers "
                         f"(it has {', '.join(str(r['size']) for r in scale_rows) or 'none'})")
    factor = row["predicted_ops_per_s"] / row["measured_ops_per_s"]
    costs = dict(sim.get("costs", {}))
    for key in SERVER_CPU_COSTS:
        if key in costs:
            costs[key] = round(costs[key] * factor, 5)
    return {**sim, "costs": costs}, factor


def workload(name: str, tenant: str, *, threads: int, target: float | None, records: int, regions: int,
             start_s: float = 0.0, stop_s: float | None = None) -> dict[str, Any]:
    return {"name": name, "mix": MIXES[tenant], "threads": threads, "target_ops": target, "records": records,
            "regions": regions, "hot_data_fraction": 1.0, "hot_ops_fraction": 1.0, "client_host": "client-1",
            "start_s": start_s, **({"stop_s": stop_s} if stop_s else {})}


SCALE_WARM_S = 30.0  # the scale bench's warm-up before the measured run


def static_run(scale: dict[str, Any], sim: dict[str, Any], n: int, threads: int,
               target: float | None) -> tuple[float, float, float]:
    """A scale bench run simulated: YCSB A from `threads` clients (held to `target` ops/s, or
    not) at a static cluster of n nodes; ops/s, mean and median p99 (ms) over the measured time."""
    sc = Scenario.model_validate({
        "name": f"scale-{n}", "duration_s": SCALE_WARM_S + float(scale.get("measure_s", 60)), "initial_nodes": n,
        "initial_placement": "balanced",
        "workloads": [workload("A", "A", threads=threads, target=target, records=scale["records"],
                               regions=scale["regions"])]})
    rec = simulate({"simulator": sim, "policy": {"preset": "static"}}, sc, "static")["run"].cluster.recording()
    keep = rec.t >= SCALE_WARM_S
    return (float(rec.ops[keep].sum() / (keep.sum() * rec.tick_s)), float(rec.latency_ms[keep].mean()),
            float(np.nanmedian(rec.p99_wl_ms[keep])))


def predict_scale(scale: dict[str, Any], sim: dict[str, Any]) -> list[dict[str, Any]]:
    """Each static size of the scale bench: predicted vs measured ops/s and latency."""
    rows = []
    for size, figures in scale["sizes"].items():
        runs = [r for r in scale["runs"] if str(r["size"]) == size and "error" not in r]
        if not runs:
            continue
        n = int(size)
        ops, lat, p99 = static_run(scale, sim, n, runs[0]["threads"], None)
        real_ops = statistics.median(figures["ops_per_s"])
        real_mean = statistics.median(_mean_latency(r) for r in runs)
        rows.append({"size": n, "predicted_ops_per_s": round(ops, 1), "measured_ops_per_s": real_ops,
                     "measured_ops_spread": [min(figures["ops_per_s"]), max(figures["ops_per_s"])],
                     "ops_error": round(ops / real_ops - 1, 3),
                     "predicted_mean_ms": round(lat, 2), "measured_mean_ms": round(real_mean, 2),
                     "mean_latency_error": round(lat / real_mean - 1, 3) if real_mean else None,
                     "measured_p99_ms": statistics.median(figures["p99_ms"]),
                     "predicted_p99_ms": round(p99, 1),
                     "p99_error": round(p99 / statistics.median(figures["p99_ms"]) - 1, 3)})
    return rows


def predict_load(scale: dict[str, Any], sim: dict[str, Any]) -> list[dict[str, Any]]:
    """Each point of the scale bench's load curve (--load-shares): the same clients held to the
    same rate at the same size, predicted against measured throughput and p99 (medians over
    the repetitions; the rate asked is each repetition's share of its own saturated rate)."""
    points: dict[tuple[int, float], list[dict[str, Any]]] = {}
    threads: dict[int, int] = {}
    for r in scale.get("runs", []):
        if "error" in r:
            continue
        threads[r["size"]] = r["threads"]
        for p in r.get("load_curve", []):
            points.setdefault((r["size"], p["share"]), []).append(p)
    rows = []
    for (n, share), pts in sorted(points.items()):
        target = statistics.median(p["target_ops_s"] for p in pts)
        ops, _, p99 = static_run(scale, sim, n, threads[n], target)
        real_p99 = statistics.median(p["p99_ms"] for p in pts)
        throttled = [statistics.mean(v for v in p["throttled_share"].values() if v is not None)
                     for p in pts if any(v is not None for v in (p.get("throttled_share") or {}).values())]
        rows.append({"size": n, "share": share, "target_ops_s": target,
                     "measured_ops_per_s": statistics.median(p["ops_per_s"] for p in pts),
                     "predicted_ops_per_s": round(ops, 1),
                     "measured_p99_ms": real_p99, "measured_p99_spread": [min(p["p99_ms"] for p in pts),
                                                                          max(p["p99_ms"] for p in pts)],
                     "predicted_p99_ms": round(p99, 1), "p99_error": round(p99 / real_p99 - 1, 3),
                     "measured_throttled_share": round(statistics.median(throttled), 3) if throttled else None})
    return rows


def _mean_latency(run: dict[str, Any]) -> float:
    """Operation-weighted mean of YCSB's per-operation averages (READ and UPDATE split evenly in A)."""
    avgs = [v["avg"] for op, v in run["latency_ms"].items() if "avg" in v and op in ("READ", "UPDATE")]
    return statistics.mean(avgs) if avgs else float("nan")


def worst_tenant(summary: dict[str, Any]) -> float | None:
    """The simulated run's SLO attainment of its worst tenant: each phase of a tenant is a
    workload of its own ("A-p3"), so a tenant's windows are those of all its phases."""
    met: dict[str, float] = {}
    seen: dict[str, float] = {}
    for name, windows in summary.get("slo_windows_by_workload", {}).items():
        tenant = name.split("-", 1)[0]
        share = summary["slo_attainment_by_workload"].get(name)
        if share is None or not windows:
            continue
        met[tenant] = met.get(tenant, 0.0) + share * windows
        seen[tenant] = seen.get(tenant, 0.0) + windows
    return round(min(met[t] / seen[t] for t in seen), 3) if seen else None


def tenant_p99_median(recording: Any) -> dict[str, float]:
    """Each tenant's median p99 over the run (each phase of a tenant is a workload of its own,
    "A-p3", one active at a time): the simulator's p99 barely moves within a window, so this
    is what the compare bench's median 10-s window p99 (`p99_ms_median`) is set against."""
    by_tenant: dict[str, list[int]] = {}
    for i, name in enumerate(recording.workloads):
        by_tenant.setdefault(name.split("-", 1)[0], []).append(i)
    out = {}
    for tenant, cols in by_tenant.items():
        p99 = recording.p99_wl_ms[:, cols]
        live = ~np.all(np.isnan(p99), axis=1)
        if live.any():
            out[tenant] = round(float(np.median(np.nanmax(p99[live], axis=1))), 1)
    return out


def predict_compare(compare: dict[str, Any], sim: dict[str, Any]) -> list[dict[str, Any]]:
    """Each configuration of the compare bench: predicted vs measured operations and node-minutes."""
    phases = compare["phases"]
    duration = sum(p["seconds"] for p in phases)
    rows = []
    for r in compare["runs"]:
        if "error" in r:
            continue
        static = r["config"].startswith("static-")
        wls = []
        for p in phases:
            for t in p["tenants"]:
                wls.append(workload(f"{t['workload']}-{p['name']}", t["workload"], threads=t["threads"],
                                    target=t["target"], records=compare["records"], regions=compare["regions"],
                                    start_s=p["start_s"], stop_s=p["start_s"] + p["seconds"]))
        # runs recorded before start_nodes was: the policy started at its min_nodes (both 2)
        start = r.get("start_nodes") or (r["size"] if static else
                                         r.get("policy_section", {}).get("min_nodes", 2))
        sc = Scenario.model_validate({"name": f"compare-{r['config']}", "duration_s": duration,
                                      "initial_nodes": start, "initial_placement": "balanced", "workloads": wls,
                                      "slo_latency_ms": r.get("slo_p99_ms", 100.0),
                                      # the bench's windows: 10 s unless the report says, no failed operation
                                      "slo_interval_s": compare.get("slo_window_s", 10.0),
                                      "slo_max_failed": 0.0})
        policy = "static" if static else None
        doc: dict[str, Any] = {"simulator": sim}
        if static:
            doc["policy"] = {"preset": "static"}
        else:
            doc["policy"] = r["policy_section"]
        out = simulate(doc, sc, policy)
        s = out["summary"]
        predicted_p99 = tenant_p99_median(out["run"].cluster.recording())
        measured_p99 = {t: v["p99_ms_median"] for t, v in (r.get("slo") or {}).get("by_tenant", {}).items()
                        if v.get("p99_ms_median") is not None}
        rows.append({"config": r["config"], "repetition": r["repetition"],
                     "predicted_ops": round(s["total_ops"]), "measured_ops": r["ycsb_ops"],
                     "ops_error": round(s["total_ops"] / r["ycsb_ops"] - 1, 3) if r["ycsb_ops"] else None,
                     "predicted_node_minutes": round(s["node_minutes"], 1), "measured_node_minutes": r["node_minutes"],
                     "node_minutes_error": round(s["node_minutes"] / r["node_minutes"] - 1, 3),
                     "predicted_max_nodes": s["max_nodes"], "measured_max_nodes": r["max_nodes"],
                     "predicted_mean_ms": round(s["mean_latency_ms"], 1), "measured_p99_max_ms": r.get("p99_ms_max"),
                     "predicted_attainment": worst_tenant(s), "measured_attainment": r.get("attainment"),
                     # the slowest tenant's median window p99, each side's own slowest
                     "measured_p99_median_ms": max(measured_p99.values(), default=None),
                     "predicted_p99_median_ms": max(predicted_p99.values(), default=None)})
    return rows


def markdown_load(rows: list[dict[str, Any]]) -> str:
    lines = ["| RS | share of saturation | ops/s asked | measured ops/s | predicted | measured p99 ms (min–max) | "
             "predicted p99 ms | error | periods the quota ran out in (measured) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["measured_p99_spread"]
        thr = "–" if r["measured_throttled_share"] is None else f"{r['measured_throttled_share']:.0%}"
        lines.append(f"| {r['size']} | {r['share']:.0%} | {r['target_ops_s']:,.0f} | {r['measured_ops_per_s']:,.0f} | "
                     f"{r['predicted_ops_per_s']:,.0f} | {r['measured_p99_ms']:.0f} ({lo:.0f}–{hi:.0f}) | "
                     f"{r['predicted_p99_ms']:.0f} | {r['p99_error']:+.0%} | {thr} |")
    return "\n".join(lines) + "\n"


def markdown(scale_rows: list[dict[str, Any]], compare_rows: list[dict[str, Any]]) -> str:
    lines = ["| RS | measured ops/s (min–max) | predicted | error | measured mean ms | predicted mean ms | "
             "error | measured p99 ms | predicted p99 ms | error |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in scale_rows:
        lines.append(f"| {r['size']} | {r['measured_ops_per_s']:,.0f} ({r['measured_ops_spread'][0]:,.0f}–"
                     f"{r['measured_ops_spread'][1]:,.0f}) | {r['predicted_ops_per_s']:,.0f} | {r['ops_error']:+.0%} | "
                     f"{r['measured_mean_ms']:.1f} | {r['predicted_mean_ms']:.1f} | "
                     f"{r['mean_latency_error']:+.0%} | {r['measured_p99_ms']:.0f} | "
                     f"{r.get('predicted_p99_ms', float('nan')):.0f} | {r.get('p99_error', float('nan')):+.0%} |")
    if compare_rows:
        lines += ["", "| config | rep | measured ops | predicted | error | measured node-min | predicted | error | "
                  "max RS measured / predicted | SLO windows (worst tenant) measured / predicted | "
                  "median window p99 ms (slowest tenant) measured / predicted |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in compare_rows:
            windows = " / ".join("–" if x is None else f"{x:.3f}"
                                 for x in (r.get("measured_attainment"), r.get("predicted_attainment")))
            p99 = " / ".join("–" if x is None else f"{x:.0f}"
                             for x in (r.get("measured_p99_median_ms"), r.get("predicted_p99_median_ms")))
            lines.append(f"| {r['config']} | {r['repetition']} | {r['measured_ops']:,} | {r['predicted_ops']:,} | "
                         f"{r['ops_error']:+.0%} | {r['measured_node_minutes']:.1f} | {r['predicted_node_minutes']:.1f} | "
                         f"{r['node_minutes_error']:+.0%} | {r['measured_max_nodes']} / {r['predicted_max_nodes']} | "
                         f"{windows} | {p99} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default=str(ROOT / "out" / "scale-hbase" / "report.json"))
    ap.add_argument("--compare", default=str(ROOT / "out" / "compare-hbase" / "report.json"))
    ap.add_argument("--calibration", default=str(ROOT / "out" / "calibrate-hbase" / "report.json"))
    ap.add_argument("--out", default=str(ROOT / "out" / "sim-vs-real"))
    ap.add_argument("--per-node-at", type=int, default=None, metavar="N",
                    help="scale the node's server costs to one RegionServer of the measured N-node cluster")
    ap.add_argument("--cost-growth-from", default=None, metavar="REPORT",
                    help="a scale report with each RegionServer's CPU (bench/scale_hbase.py): the servers' "
                         "cost per request grows with their number as measured there "
                         "(simulator hardware.shared_machine_cost_growth)")
    ap.add_argument("--quota-period-ms", type=float, default=None, metavar="MS",
                    help="the period of the RegionServers' CPU quota in the runs compared (simulator "
                         "hardware.cpu_quota_period_ms; default: the calibration's, else the local "
                         "cluster's 100 ms; 0: the simulator without the quota's stops)")
    ap.add_argument("--cost-growth-experiment", default="alone", metavar="NAME",
                    help="which experiment of a report of several (default: alone)")
    a = ap.parse_args(argv)
    docs = {}
    for name in ("scale", "calibration", "compare"):
        path = Path(getattr(a, name))
        if not path.exists():
            if name == "compare":
                continue
            print(f"sim_vs_real: --{name}: no {path} (run make {name}-hbase first)", file=sys.stderr)
            return 2
        docs[name] = json.loads(path.read_text())
    if "quota_node" not in docs["calibration"]:
        print(f"sim_vs_real: --calibration: {a.calibration} has no quota_node (make calibrate-hbase on quota'd nodes)",
              file=sys.stderr)
        return 2
    if a.quota_period_ms is not None and not (math.isfinite(a.quota_period_ms) and a.quota_period_ms >= 0):
        print(f"sim_vs_real: --quota-period-ms: a period in ms, 0 or more, got {a.quota_period_ms:g}", file=sys.stderr)
        return 2
    sim = settings_for(docs["calibration"], a.quota_period_ms)
    growth = None
    if a.cost_growth_from:
        try:
            growth = cost_growth_from(a.cost_growth_from, a.cost_growth_experiment)
        except ValueError as err:
            print(f"sim_vs_real: --cost-growth-from {a.cost_growth_from}: {err}", file=sys.stderr)
            return 2
        sim = {**sim, "hardware": {**sim.get("hardware", {}), "shared_machine_cost_growth": growth["g"]}}
    scale_rows = predict_scale(docs["scale"], sim)
    factor = None
    if a.per_node_at is not None:
        try:
            sim, factor = per_node_at(sim, scale_rows, a.per_node_at)
        except ValueError as err:
            print(f"sim_vs_real: {err}", file=sys.stderr)
            return 2
        scale_rows = predict_scale(docs["scale"], sim)
    compare_rows = predict_compare(docs["compare"], sim) if "compare" in docs else []
    load_rows = predict_load(docs["scale"], sim)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {"simulator_settings": sim, "per_node_at": a.per_node_at, "cost_factor": factor,
              "cost_growth": growth,
              "scale": scale_rows, "load": load_rows, "compare": compare_rows}
    (out / "report.json").write_text(json.dumps(report, indent=1))
    table = markdown(scale_rows, compare_rows)
    if load_rows:
        table += "\nBelow saturation (the scale bench's --load-shares):\n\n" + markdown_load(load_rows)
    if factor is not None:
        table = (f"Server costs x {factor:.3f}: one node serves what one RegionServer did in the measured "
                 f"{a.per_node_at}-RegionServer cluster.\n\n") + table
    if growth is not None:
        table = (f"Server costs x (1 + {growth['g']} ln servers), measured in {growth['source']} "
                 f"(RegionServer CPU ms per operation by size: {growth['server_cpu_ms_per_op']}).\n\n") + table
    (out / "table.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
