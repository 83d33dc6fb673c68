#!/usr/bin/env python3
"""`make compare-hbase`: the policies and the static frontier on quota'd local HBase nodes
(each RegionServer a fixed slice of the machine, deploy/localproc/cgroups.py), under the same
time-varying, roughly open-loop YCSB demand: the real counterpart of the simulator's
comparison (bench/evaluate.py, docs/evaluation.md).

Demand: phases low -> peak -> low (`--phases`: minutes x multiple of one RegionServer's
measured capacity, from out/scale-hbase/report.json or `--rs-capacity`), split over tenants
(`--tenants`: YCSB workloads, one table each, keys uniform); in each phase every tenant is a
YCSB client with a `-target` rate and many threads (rate x 0.1 s + 8), so requests keep coming
when the cluster falls behind (up to the threads), and latency is measured from each
operation's intended start (`measurement.interval=both`). SLO: per tenant and window (a
`--slo-window-s` status interval), the intended-time p99 within `--slo-p99-ms` and no failed
operation; a run meets the SLO when its worst tenant does so in `--slo-target` of its windows.

Configurations: the policies (`met` = the default, `met-paper`, `tiramola`, `target-tracking`,
and on request `static`, the daemon watching and never acting, which says what watching alone
costs: their configs/<preset>.yaml told the run's objective (`slo.latency_ms` = `--slo-p99-ms`, as
the simulator's runs are), min/max nodes from `--min-nodes`/`--max-nodes`, starting at
`--start-nodes`; `metctl run` as a daemon with the local infrastructure driver, which launches
quota'd RegionServers), any `--variant NAME=CONFIG` (a config file's policy section, run
the same way under NAME: e.g. sizing from demand) and static clusters of `--static-sizes` (no
daemon). Each run: a fresh cluster, the same tables and rows. Runs are repetition-major and
each writes OUT/<config>-rep<k>/run.json as it ends; a run whose run.json exists is not run again (a cut bench resumes);
`--aggregate` only rebuilds OUT/report.json and OUT/table.md from them; every report scores
every run from the windows it kept against `--slo-p99-ms`, so another objective needs no rerun. `--lock FILE` takes
that flock around each run only.

    python deploy/local_hbase/compare.py [--minutes 20] [--repetitions 3] [--lock /work/hbase.lock]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(ROOT))
from deploy.local_hbase import chaos  # noqa: E402
from deploy.local_hbase import cluster as cluster_mod  # noqa: E402
from deploy.local_hbase import compare_report as rep_mod  # noqa: E402
from deploy.local_hbase import ycsb  # noqa: E402
from deploy.localproc.cgroups import add_quota_arguments, quota_options  # noqa: E402
from deploy.localproc.state import held  # noqa: E402
from decision.policies import POLICIES as REGISTRY  # noqa: E402

# `static`: the daemon watching at --start-nodes and never acting (configs/static.yaml), beside
# static-N, which runs no daemon: what watching alone costs the tenants
POLICIES = ("met", "met-paper", "tiramola", "target-tracking", "static")
# low -> peak -> low, in multiples of one quota'd RegionServer's saturated throughput (the
# scale bench's one-RegionServer median; larger clusters serve less per node: 2.3-3.3x at 4,
# docs/local-hbase.md, "Capacity that scales"). By that rate the low phases keep 2
# RegionServers ~35 % busy, but at that light load a RegionServer spends more CPU per operation
# than saturated: 0.12-0.13 of its 0.15 core at 0.7 on 2 (docs/evaluation.md). The peak needs 5.
DEFAULT_PHASES = "4x0.7,3x1.5,6x2.6,3x1.5,4x0.7"
# The daemon samples every --sample-interval-s (default: the daemon's own default, 30 s) and
# each policy decides at its own pace (loop.decision_interval_samples null: MET's marks,
# met-paper and tiramola every 6 samples, target-tracking every sample). Sampled every 5 s,
# the monitor's four /jmx queries per RegionServer took 17.6 ms/s of a 0.15-core slice (12 %,
# the servlet's threads, measured per thread) and watching alone, with no action, cut the
# windows within a 100-ms p99 from 0.48 to 0.13 at 2 RegionServers (docs/evaluation.md).


# The local cluster sets HBase's balancer period to an hour (metctl places regions). A policy
# that adds nodes and leaves their data to HBase's balancer (tiramola, target-tracking: not
# `places_partitions` in decision/policies.py) runs with HBase's default period instead, as the
# simulator's `balancer_period_s`: at an hour, its new RegionServers served nothing in a 20-min
# run (tiramola's first run here: 4 launches, 0 regions moved).
HBASE_BALANCER_PERIOD_MS = 300_000


def balanced_by_hbase(config: str, variants: dict[str, dict[str, Any]] | None = None) -> bool:
    """Whether this configuration's new nodes get their regions from HBase's own balancer (a
    variant, by its policy section: as its preset's do)."""
    if variants and config in variants:
        config = str(variants[config].get("preset", "met"))
    return config in REGISTRY and config != "static" and not REGISTRY[config].places_partitions


def variant_policy(path: Path) -> dict[str, Any] | None:
    """The `policy:` section of a variant's config file; None when it has none."""
    import yaml

    doc = yaml.safe_load(path.read_text())
    section = doc.get("policy") if isinstance(doc, dict) else None
    return section if isinstance(section, dict) else None


def log(msg: str) -> None:
    print(f"[compare {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class BadInput(Exception):
    """One line for the operator: the option, what it expects and what it got."""


# ------------------------------------------------------------------------------------ schedule

def phases(spec: str, minutes: float | None, capacity: float, tenants: list[str]) -> list[dict[str, Any]]:
    """"4x0.8,6x3.2,…" (minutes x multiple of one RegionServer's capacity) -> phases with each
    tenant's target rate (an equal share); `minutes` rescales the whole schedule to that length."""
    parts = []
    for item in spec.split(","):
        m, _, mult = item.strip().partition("x")
        try:
            parts.append((float(m), float(mult)))
        except ValueError:
            raise BadInput(f"--phases: expected MINUTESxMULTIPLE[,…] (e.g. {DEFAULT_PHASES}), got {spec!r}") from None
        if not (parts[-1][0] > 0 and parts[-1][1] > 0):
            raise BadInput(f"--phases: minutes and multiples must be above 0, got {item!r}")
    scale = minutes / sum(m for m, _ in parts) if minutes else 1.0
    out, at = [], 0.0
    for i, (m, mult) in enumerate(parts):
        secs = m * 60 * scale
        rate = mult * capacity
        out.append({"name": f"p{i + 1}", "start_s": round(at, 1), "seconds": round(secs, 1), "multiple": mult,
                    "demand_ops_s": round(rate, 1),
                    "tenants": [{"workload": w, "target": max(1, round(rate / len(tenants))),
                                 "threads": 8 + math.ceil(rate / len(tenants) * 0.1)} for w in tenants]})
        at += secs
    return out


def rs_capacity(a: argparse.Namespace) -> float:
    """ops/s of one saturated quota'd RegionServer: --rs-capacity, else the scale bench's
    median for one RegionServer."""
    if a.rs_capacity:
        return a.rs_capacity
    report = Path(a.scale_report)
    try:
        one = json.loads(report.read_text())["sizes"]["1"]["ops_per_s"]
        return float(statistics.median(one))
    except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError):
        raise BadInput(f"--rs-capacity: not given and {report} has no sizes.1.ops_per_s "
                       "(run make scale-hbase first, or give the figure)") from None


# -------------------------------------------------------------------------------------- policy

def policy_sections(policy: str, a: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """The policy section of configs/<policy>.yaml (a variant's: of its file) with this bench's
    bounds, and loop overrides.
    The policy is told the tenants' objective (`slo.latency_ms` = --slo-p99-ms) when its config
    sets none, as an operator would and as the simulator's runs do (controller.harness,
    simulated_config); policies that read no objective ignore it."""
    import yaml

    own = getattr(a, "variants", {}).get(policy)
    if own is None:
        own = yaml.safe_load((ROOT / "configs" / f"{policy}.yaml").read_text())["policy"]
    section = {**own, "min_nodes": a.min_nodes, "max_nodes": a.max_nodes}
    slo = dict(section.get("slo") or {})
    slo.setdefault("latency_ms", a.slo_p99_ms)
    section["slo"] = slo
    return section, {"sample_interval_s": a.sample_interval_s, "decision_interval_samples": None}


# ----------------------------------------------------------------------------------------- run

def cluster_for(config: str, work: Path, a: argparse.Namespace) -> cluster_mod.LocalHBase:
    """The fresh quota'd cluster a configuration runs on (not started)."""
    balancer = ({"hbase.balancer.period": HBASE_BALANCER_PERIOD_MS}
                if balanced_by_hbase(config, getattr(a, "variants", None)) else {})
    return cluster_mod.LocalHBase(work / "hbase", rs_heap_mb=a.rs_heap_mb, session_timeout_ms=40_000,
                                  extra_site=balancer, **quota_options(a))


def run_one(config: str, rep: int, plan: list[dict[str, Any]], a: argparse.Namespace) -> dict[str, Any]:
    """One configuration on a fresh quota'd cluster with the same tables and rows."""
    work = Path(a.out).resolve() / f"{config}-rep{rep}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    static = config.startswith("static-")
    size = int(config.split("-")[1]) if static else a.start_nodes
    cluster = cluster_for(config, work, a)
    rec: dict[str, Any] = {"config": config, "repetition": rep, "size": size if static else None,
                           "start_nodes": size,
                           "hbase_balancer_period_ms": cluster.balancer_period_ms,
                           "slices": {k: v.to_dict() for k, v in cluster.slices().items()}}
    gw = daemon = None
    running: list[tuple[dict[str, Any], Any, float]] = []
    ending: list[tuple[dict[str, Any], Any, float]] = []
    tenant_windows: dict[str, list[dict[str, Any]]] = {t: [] for t in a.tenants}
    try:
        t_setup = time.monotonic()
        cluster.start(rs=size, timeout_s=600)
        gw = chaos.HBaseGateway(chaos.default_client_jars_dir(), cluster.client_settings(),
                                log_file=str(work / "harness-gateway.log"))
        gw.open()
        regions = {w: a.regions for w in a.tenants}
        ycsb.load(cluster, gw, a.records, a.tenants, threads=4, regions=regions)
        rec["setup_s"] = round(time.monotonic() - t_setup, 1)
        if not static:
            section, loop = policy_sections(config, a)
            rec["policy_section"] = section
            rec["jmx_question_gap_ms"] = a.jmx_question_gap_ms
            rec["hbase_call_time"] = a.hbase_call_time
            daemon = chaos.Daemon(chaos.write_config(cluster, work, a, policy=section, loop=loop,
                                                     launchable=a.max_nodes - size), work)
            daemon.start()
        log(f"{config} rep {rep}: {len(plan)} phases, {sum(p['seconds'] for p in plan) / 60:.1f} min")
        t0 = time.monotonic()
        end = t0 + sum(p["seconds"] for p in plan)
        todo = list(plan)
        node_s, max_nodes, last, live = 0.0, size, t0, size
        timeline: list[tuple[float, int]] = []
        loads: list[float] = []
        next_sample = t0
        while (now := time.monotonic()) < end:
            # a phase's clients end on their own (maxexecutiontime) a few seconds after the next
            # phase's started: collected once done, never cut
            ending = [r for r in ending if not _collect_if_done(r, tenant_windows, t0, a.slo_window_s, now)]
            if todo and now - t0 >= todo[0]["start_s"]:
                phase = todo.pop(0)
                ending += running
                running = []
                for t in phase["tenants"]:
                    p, started = ycsb.start(cluster, t["workload"], "run", records=a.records, threads=t["threads"],
                                            target_ops=t["target"], seconds=phase["seconds"],
                                            status_interval_s=int(a.slo_window_s),
                                            extra={"requestdistribution": "uniform", "measurement.interval": "both"})
                    running.append(({**t, "phase": phase["name"], "seconds": phase["seconds"]}, p, started))
            if now >= next_sample:
                try:
                    live = len(cluster.live_server_ids())
                except Exception:  # noqa: BLE001 - the master busy: keep the last count
                    pass
                node_s += live * (now - last)
                last = now
                max_nodes = max(max_nodes, live)
                timeline.append((round(now - t0, 1), live))
                loads.append(os.getloadavg()[0])
                if daemon is not None:
                    daemon.supervise()
                next_sample = now + 5
            time.sleep(0.5)
        node_s += live * (time.monotonic() - last)
        for r in ending + running:
            _collect_if_done(r, tenant_windows, t0, a.slo_window_s, time.monotonic() + 60)
        ending = running = []
        every = [w for ws in tenant_windows.values() for w in ws]
        rec.update(minutes=round(sum(p["seconds"] for p in plan) / 60, 2),
                   ycsb_ops=sum(w["ops"] for w in every), ycsb_failed=sum(w["failed"] for w in every),
                   node_minutes=round(node_s / 60, 2), max_nodes=max_nodes,
                   failures=rep_mod.failures_explained(tenant_windows, plan),
                   machine_load_1min={"mean": round(statistics.mean(loads), 2) if loads else None,
                                      "max": round(max(loads), 2) if loads else None},
                   nodes_timeline=timeline, windows=tenant_windows, windows_version=rep_mod.WINDOWS_VERSION)
        rec.update(rep_mod.rescored(rec, a.slo_p99_ms, a.slo_target))  # slo, attainment, p99 figures
        master_log = cluster.workdir / "logs" / "master.log"
        rec.update(rep_mod.move_figures(master_log.read_text(errors="replace") if master_log.exists() else ""))
        if daemon is not None:
            daemon.stop()
            rec["controller_restarts"] = daemon.restarts
            rec.update(compare_journal(work / "journal.sqlite"))
        else:
            rec.update(plans_done=0, moves=0, launches=0, terminations=0)
    except Exception as e:  # noqa: BLE001 - one failed run is reported; the others still run
        log(f"{config} rep {rep} failed: {e}")
        rec["error"] = f"{type(e).__name__}: {e}"[:2000]
    finally:
        for _, p, _ in running + ending:
            if p.poll() is None:
                p.kill()
        if daemon is not None:
            daemon.stop()
        if gw is not None:
            gw.close()
        cluster.stop()  # launched RegionServers are recorded in the same cluster.json
    log(f"{config} rep {rep}: " + json.dumps({k: rec.get(k) for k in (
        "ycsb_ops", "ycsb_failed", "attainment", "p99_ms_max", "node_minutes", "max_nodes", "launches", "error")}))
    return rec


def compare_journal(journal: Path) -> dict[str, int]:
    counts = chaos.plan_counts(journal)
    steps: dict[str, int] = {}
    if journal.exists():
        import sqlite3

        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5) as db:
            steps = dict(db.execute("SELECT op, count(*) FROM steps WHERE state='done' GROUP BY op").fetchall())
    return {"plans_done": counts.get("done", 0), "plans_failed": counts.get("failed", 0),
            "moves": steps.get("move", 0), "launches": steps.get("launch", 0),
            "terminations": steps.get("terminate", 0), "splits": steps.get("split", 0),
            "reconfigurations": steps.get("reconfigure", 0) + steps.get("restart", 0)}


def _collect_if_done(client: tuple[dict[str, Any], Any, float], into: dict[str, list[dict[str, Any]]],
                     t0: float, window_s: float, now: float) -> bool:
    """Add a finished client's SLO windows to its tenant's; one still running 30 s after its
    phase should have ended is stopped (SIGTERM: its status lines are kept). False while it runs."""
    t, p, started = client
    if p.poll() is None and now < started + t["seconds"] + 30:
        return False
    ycsb.stop(p, started, t["workload"])
    err = Path(f"{p.ycsb_stem}.err").read_text(errors="replace")
    into[t["workload"]] += rep_mod.windows(err, started - t0 - window_s, phase=t["phase"], interval_s=window_s)
    return True


# -------------------------------------------------------------------------------------- report

def write_report(out: Path, a: argparse.Namespace, plan: list[dict[str, Any]], capacity: float,
                 held_s: float) -> dict[str, Any]:
    runs = [rep_mod.rescored(json.loads(f.read_text()), a.slo_p99_ms, a.slo_target) for f in rep_mod.run_files(out)]
    slo = f"p99 <= {a.slo_p99_ms:g} ms and no failed operation per {a.slo_window_s:g}-s window, " \
          f"in >= {a.slo_target:g} of windows, worst tenant"
    report = {"tenants": a.tenants, "records": a.records, "regions": a.regions, "rs_capacity_ops_s": capacity,
              "phases": plan, "slo": slo, "slo_window_s": a.slo_window_s, "slo_target": a.slo_target,
              "cores": os.cpu_count(),
              "lock_held_s": round(held_s), "summary": rep_mod.summarize(runs, a.slo_target),
              "runs": [{k: v for k, v in r.items() if k != "windows"} for r in runs]}
    (out / "report.json").write_text(json.dumps(report, indent=1))
    (out / "table.md").write_text(rep_mod.markdown(report["summary"], runs, slo))
    return report


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", default=",".join(p for p in POLICIES if p != "static"), help=f"comma-separated, from {', '.join(POLICIES)}")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=CONFIG",
                    help="one more configuration: a metctl config file's policy section, run "
                    "under NAME like the policies (repeatable)")
    ap.add_argument("--static-sizes", default="2,3,4,5,6", help="static clusters to run ('' for none)")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--first-repetition", type=int, default=1)
    ap.add_argument("--phases", default=DEFAULT_PHASES)
    ap.add_argument("--minutes", type=float, default=None, help="rescale the phases to this length")
    ap.add_argument("--rs-capacity", type=float, default=None, help="ops/s of one saturated quota'd RegionServer")
    ap.add_argument("--scale-report", default=str(ROOT / "out" / "scale-hbase" / "report.json"))
    ap.add_argument("--tenants", default="AC", help="YCSB workloads, one table each, e.g. AC")
    ap.add_argument("--records", type=int, default=12_000, help="rows per tenant table")
    ap.add_argument("--regions", type=int, default=12, help="regions per tenant table")
    ap.add_argument("--start-nodes", type=int, default=2)
    ap.add_argument("--min-nodes", type=int, default=2)
    ap.add_argument("--max-nodes", type=int, default=6)
    ap.add_argument("--slo-p99-ms", type=float, default=100.0)
    ap.add_argument("--slo-window-s", type=float, default=10.0)
    ap.add_argument("--sample-interval-s", type=float, default=30.0,
                    help="the daemon's sample interval (loop.sample_interval_s; its default 30 s)")
    ap.add_argument("--slo-target", type=float, default=0.99)
    ap.add_argument("--rs-heap-mb", type=int, default=384)
    ap.add_argument("--jmx-question-gap-ms", type=float, default=chaos.JMX_QUESTION_GAP_MS,
                    help="the daemon's monitor.hbase_jmx_question_gap_ms (0: questions at once)")
    ap.add_argument("--hbase-call-time", choices=("mean", "p99"), default="mean",
                    help="the daemon's monitor.hbase_call_time: the servers' call time the "
                    "objective is held against")
    ap.add_argument("--lock", help="take this flock around each run (e.g. /work/hbase.lock)")
    ap.add_argument("--aggregate", action="store_true", help="only rebuild the report from OUT/*/run.json (scored at --slo-p99-ms)")
    add_quota_arguments(ap)
    ap.add_argument("--out", default=str(ROOT / "out" / "compare-hbase"))
    a = ap.parse_args(argv)
    a.policy_list = [p.strip() for p in a.policies.split(",") if p.strip()]
    bad = [p for p in a.policy_list if p not in POLICIES]
    if bad:
        raise BadInput(f"--policies: expected names from {', '.join(POLICIES)}, got {a.policies!r}")
    import yaml

    a.variants = {}
    for spec in a.variant:
        name, _, file = spec.partition("=")
        name, path = name.strip(), Path(file.strip())
        if not name or not file.strip() or name in POLICIES or name.startswith("static") \
                or name in a.variants:
            raise BadInput(f"--variant: expected NAME=CONFIG with a new name (not a policy's, not "
                           f"static…), got {spec!r}")
        try:
            section = variant_policy(path)
        except (OSError, yaml.YAMLError) as e:
            raise BadInput(f"--variant {name}: {path}: cannot read it ({e})") from None
        if section is None:
            raise BadInput(f"--variant {name}: {path}: expected a `policy:` section, found none")
        a.variants[name] = section  # read once: every run of it runs the same policy
        a.policy_list.append(name)
    try:
        a.sizes = [int(x) for x in a.static_sizes.split(",") if x.strip()]
    except ValueError:
        raise BadInput(f"--static-sizes: expected whole numbers separated by commas, got {a.static_sizes!r}") from None
    if not a.policy_list and not a.sizes:
        raise BadInput("--policies / --static-sizes: nothing to run")
    if not 0 <= a.jmx_question_gap_ms <= 1000:
        raise BadInput(f"--jmx-question-gap-ms: expected 0 to 1000, got {a.jmx_question_gap_ms:g}")
    a.tenants = [w for w in a.tenants.upper() if w.strip()]
    if not a.tenants or any(w not in ycsb.WORKLOADS for w in a.tenants):
        raise BadInput(f"--tenants: expected letters from {''.join(ycsb.WORKLOADS)}, got {''.join(a.tenants)!r}")
    for name in ("repetitions", "first_repetition", "records", "regions", "start_nodes", "min_nodes",
                 "max_nodes", "slo_p99_ms", "slo_window_s", "sample_interval_s"):
        if getattr(a, name) <= 0:
            raise BadInput(f"--{name.replace('_', '-')}: expected a number above 0, got {getattr(a, name)}")
    if not a.min_nodes <= a.start_nodes <= a.max_nodes or any(s < 1 for s in a.sizes):
        raise BadInput(f"--start-nodes: expected min <= start <= max nodes, got {a.min_nodes} <= "
                       f"{a.start_nodes} <= {a.max_nodes}")
    if not 0 < a.slo_target <= 1:
        raise BadInput(f"--slo-target: expected a fraction in (0, 1], got {a.slo_target}")
    a.policy_overrides = ""
    return a


def main(argv: list[str] | None = None) -> int:
    try:
        a = parse(argv)
        capacity = rs_capacity(a)
        plan = phases(a.phases, a.minutes, capacity, a.tenants)
    except BadInput as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    configs = a.policy_list + [f"static-{n}" for n in a.sizes]
    held_s: list[float] = []
    failed = 0
    if not a.aggregate:
        for rep in range(a.first_repetition, a.first_repetition + a.repetitions):
            for c in configs:
                if (out / f"{c}-rep{rep}" / "run.json").exists():
                    continue  # done by an earlier, cut-short invocation
                with held(a.lock, held_s):
                    rec = run_one(c, rep, plan, a)
                failed += "error" in rec
                (out / f"{c}-rep{rep}" / "run.json").write_text(json.dumps(rec, indent=1))
                write_report(out, a, plan, capacity, sum(held_s))
    report = write_report(out, a, plan, capacity, sum(held_s))
    print((out / "table.md").read_text())
    print(f"figures in {out / 'report.json'} (this invocation held the lock {report['lock_held_s']} s)")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
