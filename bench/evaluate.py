"""The evaluation grid (issue 25): every scenario x policy x seed, and static clusters of every
size, judged on cost at the SLO. `make evaluate` runs it and rewrites the table in
docs/evaluation.md; nothing in that table is typed by hand.

    .venv/bin/python bench/evaluate.py                          # the shipped open-loop scenarios
    .venv/bin/python bench/evaluate.py --scenarios business-day --seeds 1 --jobs 2
    .venv/bin/python bench/evaluate.py --policies met --variant mine=my.yaml   # one more policy

Per scenario and seed: the smallest static size whose worst-tenant SLO attainment reaches the
target (default 0.99) and its node-minutes, the oracle's node-minutes (the smallest size that
serves each minute's offered load within the SLO at steady state), the reactive oracle's (the
same per-minute sizes learnt only as each minute starts, its nodes serving a boot + join later:
the fewest spare nodes with which it meets the target, controller/reactive_oracle.py) and the
share of the static-to-oracle savings that leaves to a policy that does not forecast, the most
minutes a policy starting at the scenario's own size can meet (those before a node launched at
once serves, needing more than that size, are lost to every policy), and for
every policy and static size its attainment, node-minutes and the two cost ratios, counted only
where it meets the target (controller/cost.py). Mean (min–max) over seeds.

Runs go `--jobs` at a time (default: every core) in worker processes, with a progress bar and
an estimate of the time left. Every run's figures are cached under --cache by the scenario file,
the policy, its config file, the seed and the size, with the code version it ran: each project
module it imported and the hash of its content. A cached run counts only while every one of
those modules is unchanged, so a re-run computes only what a change can have moved (modules a
simulated run imports but never runs, NOT_RUN, and for static runs the policy modules, are left
out: a change to a policy leaves the static runs cached).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common.errors import BadInput  # noqa: E402
from controller.config import load_config  # noqa: E402
from controller.cost import (  # noqa: E402
    DEFAULT_TARGET, check_target, cost_at_slo, oracle_per_minute, smallest_static, spread, static_over_oracle,
)
from controller.harness import build_run  # noqa: E402
from controller.reactive_oracle import least_headroom, start_ceiling  # noqa: E402
from controller.report import summarize  # noqa: E402
from simulator.cluster import _with_scenario_hardware  # noqa: E402
from simulator.scenario import load_scenario, resolve_scenario_path  # noqa: E402

# The open-loop scenarios of issue 25 (configs/scenarios/), with the static sizes tried on each.
OPEN_LOOP = ("business-day", "flash-crowd", "steady-growth", "oltp-day-scan-night",
             "compressed-week", "tenant-churn")
POLICIES = ("target-tracking", "tiramola", "met-paper", "met")
PRESETS = {"met-paper": "configs/met-paper.yaml", "target-tracking": "configs/target-tracking.yaml"}
# Project modules a simulated run imports but never runs (servers, notification, leadership):
# left out of a run's code version so that work on them does not void the cache.
NOT_RUN = ("controller/api.py", "controller/api_events.py", "controller/api_guard.py",
           "controller/console/", "controller/webhooks.py", "controller/ha/")
# Policy modules a static run imports but never executes.
POLICY_ONLY = ("decision/guarded.py", "decision/target_tracking.py", "decision/tiramola.py",
               "decision/prediction.py", "decision/placement.py", "decision/reconcile.py",
               "decision/actions.py", "decision/sizing.py", "decision/rules/", "decision/met_paper.py")
BEGIN, END = "<!-- evaluate:begin -->", "<!-- evaluate:end -->"


def _sha(rel: str) -> str | None:
    p = ROOT / rel
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def code_of_run(static: bool) -> dict[str, str]:
    """The code version of a run: each project module it imported (this process's modules),
    with the hash of its content, less those it never runs."""
    out = {}
    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if not f:
            continue
        try:
            rel = Path(f).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            continue  # not the project's: a library
        if rel.startswith(("bench/", "tests/")) or rel.startswith(NOT_RUN) or (static and rel.startswith(POLICY_ONLY)):
            continue
        out[rel] = _sha(rel) or ""
    return out


def job_key(job: dict[str, Any]) -> str:
    """What a run is of (the code version is checked beside it: cached_result)."""
    h = hashlib.sha256(resolve_scenario_path(job["scenario"]).read_bytes())
    if job["config"]:
        h.update(Path(job["config"]).read_bytes())
    h.update(json.dumps([job["policy"], job["seed"], job["size"]]).encode())
    return h.hexdigest()[:24]


def cached_result(path: Path) -> dict[str, Any] | None:
    """A cached run's figures, if the code it ran is still the code here (every module it
    imported unchanged)."""
    if not path.exists():
        return None
    entry = json.loads(path.read_text())
    if any(_sha(rel) != sha for rel, sha in entry.get("code", {"?": "?"}).items()):
        return None
    return entry["result"]


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """One simulated run (size 0: the scenario's own): its figures as the table needs them, and
    the code it ran."""
    logging.getLogger("metctl").setLevel(logging.ERROR)
    result = _simulate(job)
    return {"result": result, "code": code_of_run(job["policy"] == "static")}


def _simulate(job: dict[str, Any]) -> dict[str, Any]:
    sc = load_scenario(job["scenario"])
    sc = sc.model_copy(update={"seed": job["seed"], **({"initial_nodes": job["size"]} if job["size"] else {})})
    cfg = load_config(job["config"])
    if job["policy"] == "oracle":  # the scenario's and seed's alone: computed once, not per run
        if any(getattr(w, "rate", None) is None for w in sc.workloads):
            return {"oracle_node_minutes": None, "oracle_peak_nodes": None,  # closed: what a run served
                    "oracle_per_minute": None}
        hardware = _with_scenario_hardware(cfg.simulator, sc)
        per = oracle_per_minute(sc, hardware)
        return {"oracle_node_minutes": None if None in per else float(sum(per)),
                "oracle_peak_nodes": None if None in per else max(per), "oracle_per_minute": per,
                "lead_minutes": math.ceil((hardware.actions.vm_boot_s + hardware.actions.rs_join_s) / 60 - 1e-9),
                "initial_nodes": sc.initial_nodes}
    name = cfg.policy.name if job["config"] else job["policy"]
    run = build_run(cfg, sc, policy=name)
    run.run()
    s = summarize(run, name, seed=job["seed"], oracle=False)
    actions = s.get("actions", {})
    keep = ("node_minutes", "slo_attainment", "slo_attainment_by_workload", "total_ops", "ops_offered",
            "ops_failed", "max_nodes", "wall_time_s")
    return {**{k: s.get(k) for k in keep}, "moves": int(actions.get("move", 0)),
            "launches": int(actions.get("launch", 0))}


def jobs_for(scenarios, policies, configs, seeds, sizes_of) -> list[dict[str, Any]]:
    jobs = []
    for sc in scenarios:
        for seed in seeds:
            for n in sizes_of(sc):
                jobs.append({"scenario": sc, "policy": "static", "config": None, "seed": seed, "size": n})
            for p in policies:
                jobs.append({"scenario": sc, "policy": p, "config": configs.get(p), "seed": seed, "size": 0})
    return jobs


class SmallestMeeting:
    """The search for the smallest static size meeting the SLO on one scenario and seed, a run
    at a time: from `start` up (by half again) until a size meets, down until one fails, then
    bisect to a gap of one node. Assumes a bigger static cluster meets whenever a smaller one
    does (the runs say so on these scenarios; a bigger cluster that fails is reported as it is)."""

    def __init__(self, start: int, cap: int = 64):
        self.start, self.cap = max(1, start), cap
        self.met: set[int] = set()
        self.failed: set[int] = set()

    def record(self, size: int, meets: bool) -> None:
        (self.met if meets else self.failed).add(size)

    def next(self) -> int | None:
        lo = max(self.failed, default=0)
        hi = min((n for n in self.met if n > lo), default=None)
        if not self.met and not self.failed:
            return self.start
        if hi is None:  # nothing meets yet: grow
            return None if lo >= self.cap else min(self.cap, lo + max(2, lo // 2))
        if lo == 0:  # nothing fails yet: shrink
            return None if hi <= 1 else max(1, hi - max(2, hi // 3))
        return None if hi - lo <= 1 else (lo + hi) // 2


def run_grid(jobs: list[dict[str, Any]], cache: Path, workers: int, *, quiet: bool = False) -> tuple[list, int]:
    """Figures for every job, from the cache or computed `workers` at a time; returns them in
    job order and how many were computed."""
    cache.mkdir(parents=True, exist_ok=True)
    keys = [job_key(j) for j in jobs]
    results: list[dict[str, Any] | None] = []
    todo = []
    for i, k in enumerate(keys):
        got = cached_result(cache / f"{k}.json")
        if got is not None and jobs[i]["policy"] == "oracle" and "initial_nodes" not in got:
            got = None  # kept before the reactive oracle read the per-minute sizes and initial size
        results.append(got)
        if results[-1] is None:
            todo.append(i)
    # longest first (simulated seconds x nodes as the guess) so the last workers are not idle
    todo.sort(key=lambda i: -_weight(jobs[i]))
    bar = Bar(len(todo), quiet=quiet)
    with ProcessPoolExecutor(max(1, workers)) as pool:
        running = {pool.submit(run_job, jobs[i]): i for i in todo}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                i = running.pop(fut)
                entry = fut.result()
                results[i] = entry["result"]
                (cache / f"{keys[i]}.json").write_text(json.dumps(entry) + "\n")
                bar.advance(_label(jobs[i]), _weight(jobs[i]))
    bar.close()
    return results, len(todo)


def _weight(job: dict[str, Any]) -> float:
    sc = load_scenario(job["scenario"])
    return sc.duration_s * (1 if job["policy"] == "oracle" else job["size"] or sc.initial_nodes)


def _label(job: dict[str, Any]) -> str:
    what = f"static {job['size']}" if job["policy"] == "static" else job["policy"]
    return f"{Path(job['scenario']).stem} / {what} / seed {job['seed']}"


class Bar:
    """A progress bar with the time left (rich on a terminal; one line per run otherwise)."""

    def __init__(self, total: int, quiet: bool = False):
        self.total, self.done, self.quiet, self.t0 = total, 0, quiet, time.monotonic()
        self.progress = None
        if total and not quiet and sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
            self.progress = Progress(TextColumn("evaluate"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("left"), TimeRemainingColumn(), TextColumn("{task.description}"))
            self.progress.start()
            self.task = self.progress.add_task("", total=total)

    def advance(self, label: str, weight: float) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress.update(self.task, advance=1, description=label)
        elif not self.quiet:
            spent = time.monotonic() - self.t0
            left = spent / self.done * (self.total - self.done)
            print(f"evaluate: {self.done}/{self.total} {label} ({spent:.0f} s, ~{left:.0f} s left)",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()


def judge(jobs, results, scenarios, policies, seeds, target) -> dict[str, Any]:
    """Per scenario: the smallest SLO-meeting static and the oracle per seed, and every policy's
    (and static size's) cost at the SLO."""
    by = {(j["scenario"], j["policy"], j["seed"], j["size"]): r for j, r in zip(jobs, results)}
    table: dict[str, Any] = {}
    for sc in scenarios:
        sizes = sorted({j["size"] for j in jobs if j["scenario"] == sc and j["policy"] == "static"})
        static = {str(s): smallest_static([(n, by[(sc, "static", s, n)]["node_minutes"],
                                            by[(sc, "static", s, n)]["slo_attainment"])
                                           for n in sizes if (sc, "static", s, n) in by], target)
                  for s in seeds}
        oracle = {str(s): by[(sc, "oracle", s, 0)]["oracle_node_minutes"] for s in seeds}
        reactive = {str(s): reactive_oracle(by[(sc, "oracle", s, 0)], static[str(s)], target) for s in seeds}
        rows = {}
        for name, key in [(f"static {n}", ("static", n)) for n in sizes] + [(p, (p, 0)) for p in policies]:
            # a static size the search did not need on some seed has fewer runs ([k/n] in the table)
            runs = [{"seed": s, **by[(sc, key[0], s, key[1])]} for s in seeds if (sc, key[0], s, key[1]) in by]
            rows[name] = {"runs": runs, **cost_at_slo(runs, static, oracle, target)}
        table[Path(sc).stem] = {
            "smallest_static_meeting_slo": static, "oracle_node_minutes": oracle,
            "smallest_static_over_oracle": static_over_oracle(static, oracle),
            "static_size": spread([v["size"] if v else None for v in static.values()]),
            "static_node_minutes": spread([v["node_minutes"] if v else None for v in static.values()]),
            "oracle": spread(list(oracle.values())), "reactive_oracle": reactive,
            "reactive_headroom": spread([r["headroom"] if r else None for r in reactive.values()]),
            "reactive_node_minutes": spread([r["node_minutes"] if r else None for r in reactive.values()]),
            "reactive_savings_captured": spread([r["savings_captured"] if r else None
                                                 for r in reactive.values()]),
            "start_ceiling": spread([r["start_ceiling"] if r else None for r in reactive.values()]),
            "rows": rows}
    return table


def reactive_oracle(oracle: dict[str, Any], static: dict[str, Any] | None, target: float) -> dict[str, Any] | None:
    """One seed's reactive oracle from its oracle job: the fewest spare nodes with which it meets
    the target, its node-minutes, and the share of the savings from the smallest SLO static to
    the oracle that it captures (None without a static meeting the SLO or when the oracle
    has no answer for some minute)."""
    per = oracle.get("oracle_per_minute")
    if not per or None in per:
        return None
    got = least_headroom(per, int(oracle["lead_minutes"]), target)
    saved = None
    if static is not None and static["node_minutes"] > oracle["oracle_node_minutes"]:
        saved = ((static["node_minutes"] - got.node_minutes)
                 / (static["node_minutes"] - oracle["oracle_node_minutes"]))
    return {"headroom": got.headroom, "lead_minutes": got.lead_minutes, "node_minutes": got.node_minutes,
            "minutes_met": got.attainment, "savings_captured": saved,
            "start_ceiling": start_ceiling(per, int(oracle["lead_minutes"]), int(oracle["initial_nodes"]))}


def _fmt(sp: dict[str, Any], f: str = "{:.3f}") -> str:
    if sp["mean"] is None:
        return "–"
    s = f.format(sp["mean"])
    if sp["min"] != sp["max"]:
        s += f" ({f.format(sp['min'])}–{f.format(sp['max'])})"
    if sp["counted"] < sp["of"]:
        s += f" [{sp['counted']}/{sp['of']}]"
    return s


def markdown(table: dict[str, Any], target: float, seeds: list[int]) -> str:
    lines = [f"Target: every tenant within its SLO in >= {target:.0%} of windows. Mean (min–max) over "
             f"seeds {', '.join(map(str, seeds))}; a cost ratio counts only for seeds where the run meets the "
             "target ([k/n]: on k of n seeds; – : on none).", "",
             "| scenario | policy | runs | attainment | node-min | cost vs smallest SLO static | cost vs oracle |",
             "|---|---|---|---|---|---|---|"]
    for sc, t in table.items():
        for name, r in t["rows"].items():
            lines.append(f"| {sc} | {name} | {len(r['runs'])} | {_fmt(r['slo_attainment'])} | "
                         f"{_fmt(r['node_minutes'], '{:.0f}')} | {_fmt(r['vs_smallest_static'])} | {_fmt(r['vs_oracle'])} |")
    lines += ["", "| scenario | smallest static meeting the SLO (nodes) | its node-min | oracle node-min | "
              "smallest SLO static / oracle | reactive oracle: spare nodes | its node-min | "
              "savings it captures | most minutes a start at the scenario's size can meet |",
              "|---|---|---|---|---|---|---|---|---|"]
    for sc, t in table.items():
        lines.append(f"| {sc} | {_fmt(t['static_size'], '{:.0f}')} | {_fmt(t['static_node_minutes'], '{:.0f}')} | "
                     f"{_fmt(t['oracle'], '{:.0f}')} | {_fmt(t['smallest_static_over_oracle'])} | "
                     f"{_fmt(t['reactive_headroom'], '{:.0f}')} | {_fmt(t['reactive_node_minutes'], '{:.0f}')} | "
                     f"{_fmt(t['reactive_savings_captured'], '{:.2f}')} | {_fmt(t['start_ceiling'])} |")
    return "\n".join(lines)


def write_docs(path: Path, text: str) -> None:
    """Replace the generated block of a Markdown file (between the evaluate markers)."""
    doc = path.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"evaluate: {path}: no {BEGIN} ... {END} block to rewrite")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}")


def _list(ap, flag: str, text: str, cast=str) -> list:
    try:
        vals = [cast(x.strip()) for x in text.split(",") if x.strip()]
    except ValueError:
        vals = []
    if not vals or (cast is int and min(vals) < 1):
        ap.error(f"{flag}: expected comma-separated {'integers >= 1' if cast is int else 'names'}, got {text!r}")
    return list(dict.fromkeys(vals))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", default=",".join(OPEN_LOOP), help="names in configs/scenarios/ or paths")
    ap.add_argument("--policies", default=",".join(POLICIES), help="besides static at every size")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=CONFIG",
                    help="one more policy: a config file's policy under NAME (repeatable)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--sizes", default="auto", help="static sizes to run, or auto: search each scenario "
                    "and seed for the smallest size meeting the SLO, from the oracle's peak + 3")
    ap.add_argument("--slo-target", default=str(DEFAULT_TARGET))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at a time (default: every core)")
    ap.add_argument("--cache", default="out/evaluate-cache")
    ap.add_argument("--out", default="out/evaluate.json")
    ap.add_argument("--docs", default=None, help="a Markdown file whose evaluate block to rewrite")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    scenarios = _list(ap, "--scenarios", a.scenarios)
    policies = _list(ap, "--policies", a.policies)
    seeds = _list(ap, "--seeds", a.seeds, int)
    sizes = None if a.sizes == "auto" else _list(ap, "--sizes", a.sizes, int)
    try:
        target = check_target(float(a.slo_target))
    except ValueError:
        ap.error(f"--slo-target: expected a fraction in (0, 1], got {a.slo_target!r}")
    if a.jobs < 1:
        ap.error(f"--jobs: expected an integer >= 1, got {a.jobs}")
    configs = {p: str(ROOT / c) for p, c in PRESETS.items()}
    for v in a.variant:
        name, _, path = v.partition("=")
        if not name or not path or not Path(path).is_file():
            ap.error(f"--variant {v!r}: expected NAME=CONFIG with an existing file")
        configs[name] = path
        policies.append(name)
    try:
        for sc in scenarios:
            load_scenario(sc)
    except BadInput as err:
        print(f"evaluate: {err}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    cache = Path(a.cache)
    oracles = [{"scenario": sc, "policy": "oracle", "config": None, "seed": s, "size": 0}
               for sc in scenarios for s in seeds]
    done, computed = run_grid(oracles, cache, a.jobs, quiet=True)
    jobs, results = list(oracles), list(done)
    todo = jobs_for(scenarios, policies, configs, seeds, lambda sc: sizes or [])
    searches = {}
    if not sizes:  # auto: the smallest static meeting the SLO, searched from the oracle's peak up
        for j, r in zip(oracles, done):
            peak = r.get("oracle_peak_nodes") or 8
            searches[(j["scenario"], j["seed"])] = SmallestMeeting(peak + 3)
    while todo or searches:
        todo += [{"scenario": sc, "policy": "static", "config": None, "seed": s, "size": n}
                 for (sc, s), search in searches.items() if (n := search.next()) is not None]
        searches = {k: v for k, v in searches.items() if v.next() is not None}
        if not todo:
            break
        got, n_new = run_grid(todo, cache, a.jobs, quiet=a.quiet)
        computed += n_new
        for j, r in zip(todo, got):
            if j["policy"] == "static" and (j["scenario"], j["seed"]) in searches:
                searches[(j["scenario"], j["seed"])].record(j["size"], r["slo_attainment"] >= target - 1e-12)
        jobs += todo
        results += got
        todo = []
    table = judge(jobs, results, scenarios, policies, seeds, target)
    text = markdown(table, target, seeds)
    took = time.monotonic() - t0
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"slo_target": target, "seeds": seeds, "scenarios": table,
                               "runs": len(jobs), "computed": computed, "wall_s": took}, indent=2) + "\n")
    if a.docs:
        write_docs(Path(a.docs), text)
    print(text)
    print(f"\n{len(jobs)} runs, {computed} computed, {len(jobs) - computed} from the cache, {took:.0f} s; "
          f"figures in {out}" + (f"; table written into {a.docs}" if a.docs else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
