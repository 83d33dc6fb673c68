#!/usr/bin/env python3
"""The policies one after another on the same real schedule (make compare-hbase): the real
counterpart of the simulator's comparison (bench/policy_table.py).

Each run starts a fresh local HBase 2.6 cluster (cluster.py: ZooKeeper, master, 3
RegionServers, one JVM each), loads the same YCSB tables, starts `metctl run` as a daemon with
its file journal and the local infrastructure driver (it may launch up to 2 more local
RegionServers) under one policy, and plays the same seeded tenant schedule, without faults:
quiet segments (one tenant, a low target rate) and bursts (several tenants, unthrottled), so
that both scaling out and scaling in have a reason. The daemon, its config and the journal
reading are chaos.py's (imported, not copied).

Policies (as bench/policy_table.py runs them): `met-paper` (configs/met-paper.yaml), `met`
(the default, guarded), `tiramola`, `static` (never acts). Every policy gets min_nodes 3 and
max_nodes 5 here, and its CPU thresholds are scaled by --cores-per-node / the machine's cores:
each RegionServer's CPU is its JVM's ProcessCpuLoad, a share of *all* the machine's cores, so
on a 2-core machine a RegionServer using one whole core reads 0.5; scaled, each RegionServer is
judged as a one-core node (docs/evaluation.md, "On real HBase", says what this does and does
not mean).

    python deploy/local_hbase/compare.py --minutes 6 --repetitions 2 [--out out/compare-hbase]

Per run: YCSB operations (and failed ones), node-minutes (RegionServers the master lists live,
sampled every 5 s, launched ones included), max RegionServers, plans done, moves, launches;
per policy the mean and min-max over repetitions and operations per node-minute. Writes
OUT/report.json and OUT/table.md.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
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
from deploy.local_hbase import ycsb  # noqa: E402
from deploy.localproc.cgroups import add_quota_arguments, quota_options  # noqa: E402

POLICIES = ("met-paper", "met", "tiramola", "static")
# CPU thresholds that are fractions of a node's CPU (scaled to one RegionServer's share)
CPU_FIELDS = ("cpu_high", "cpu_low", "tiramola_cpu_high", "tiramola_cpu_low")
MIN_NODES, MAX_NODES = 3, 5  # 3 RegionServers to start; the local driver may launch 2 more


def log(msg: str) -> None:
    print(f"[compare {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class BadInput(Exception):
    """One line for the operator: the option, what it expects and what it got."""


# ------------------------------------------------------------------------------------ schedule

def schedule(minutes: float, segment_s: float, seed: int, workloads: list[str], *,
             burst_tenants: int, burst_threads: int, quiet_target: float) -> list[dict[str, Any]]:
    """The tenant schedule every run plays: segments quiet, burst, burst, quiet, quiet, burst,
    burst, ... (two quiet segments in a row give scaling in a reason after a burst); which
    tenants run in each is drawn by a seeded RNG, so every policy sees the same load."""
    rng = random.Random(seed)
    out, at, i = [], 0.0, 0
    while at < minutes * 60 - 1:
        length = min(segment_s, minutes * 60 - at)
        if i % 4 in (1, 2):
            chosen = sorted(rng.sample(workloads, min(burst_tenants, len(workloads))))
            tenants = [{"workload": w, "threads": burst_threads, "target": None} for w in chosen]
            level = "burst"
        else:
            tenants = [{"workload": rng.choice(workloads), "threads": 1, "target": quiet_target}]
            level = "quiet"
        out.append({"start_s": at, "seconds": length, "level": level, "tenants": tenants})
        at += length
        i += 1
    return out


# -------------------------------------------------------------------------------------- policy

def policy_section(policy: str, cpu_scale: float) -> dict[str, Any]:
    """The policy section bench/policy_table.py uses for `policy` (met-paper: its config file;
    the others: their built-in defaults), with this run's node bounds and scaled CPU limits."""
    from controller.config import load_config

    if policy == "met-paper":
        base = load_config(str(ROOT / "configs" / "met-paper.yaml")).policy
    else:
        from decision.policy import PolicyConfig

        base = PolicyConfig(name=policy)
    section = {**base.model_dump(mode="json", exclude_defaults=True), "name": base.name,
               "min_nodes": MIN_NODES, "max_nodes": MAX_NODES}
    for f in CPU_FIELDS:
        section[f] = round(getattr(base, f) * cpu_scale, 4)
    return section


def journal_figures(journal: Path) -> dict[str, int]:
    """Plans by state and the steps carried out, from the daemon's journal."""
    counts = chaos.plan_counts(journal)
    out = {"plans_done": counts.get("done", 0), "plans_failed": counts.get("failed", 0),
           "plans_rolled_back": counts.get("abandoned", 0),
           "plans_in_flight_at_end": counts.get("running", 0) + counts.get("abandoning", 0)}
    if journal.exists():
        with sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5) as db:
            done = dict(db.execute("SELECT op, count(*) FROM steps WHERE state='done' GROUP BY op").fetchall())
    else:
        done = {}
    out.update(moves=done.get("move", 0), launches=done.get("launch", 0),
               terminations=done.get("terminate", 0), drains=done.get("drain", 0),
               reconfigurations=done.get("reconfigure", 0) + done.get("restart", 0),
               compactions=done.get("compact", 0), splits=done.get("split", 0))
    return out


# ----------------------------------------------------------------------------------------- run

def run_one(policy: str, rep: int, plan: list[dict[str, Any]], a: argparse.Namespace) -> dict[str, Any]:
    """One policy on a fresh cluster with the same tables and data; returns the run's figures."""
    work = Path(a.out).resolve() / f"{policy}-rep{rep}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    cluster = cluster_mod.LocalHBase(work / "hbase", rs_heap_mb=a.rs_heap_mb, session_timeout_ms=40_000,
                                     **quota_options(a))
    rec: dict[str, Any] = {"policy": policy, "repetition": rep, "load_before": os.getloadavg()[0]}
    gw = daemon = None
    running: list[tuple[dict[str, Any], Any, float]] = []
    try:
        log(f"{policy} rep {rep}: starting HBase (3 RegionServers)")
        t_setup = time.monotonic()
        cluster.start(rs=3, timeout_s=300)
        gw = chaos.HBaseGateway(chaos.default_client_jars_dir(), cluster.client_settings(),
                                log_file=str(work / "harness-gateway.log"))
        gw.open()
        ycsb.load(cluster, gw, a.records, a.workloads, threads=2)
        rec["setup_s"] = round(time.monotonic() - t_setup, 1)
        section = policy_section(policy, a.cpu_scale)
        rec["policy_section"] = section
        daemon = chaos.Daemon(chaos.write_config(cluster, work, a, policy=section), work)
        daemon.start()
        log(f"{policy} rep {rep}: running the schedule for {a.minutes} min")
        t0 = time.monotonic()
        end = t0 + a.minutes * 60
        segments = list(plan)
        tenants: list[dict[str, Any]] = []
        node_s, max_nodes, last_sample, live = 0.0, 0, t0, 3
        nodes_timeline: list[tuple[float, int]] = []
        loads: list[float] = []
        next_sample = t0
        while (now := time.monotonic()) < end:
            if segments and now - t0 >= segments[0]["start_s"]:
                seg = segments.pop(0)
                tenants += [_collect(t, p, s, t0) for t, p, s in running]
                running = []
                for t in seg["tenants"]:
                    p, started = ycsb.start(cluster, t["workload"], "run",
                                            records=ycsb.loaded_records(t["workload"], a.records),
                                            threads=t["threads"], target_ops=t["target"],
                                            seconds=seg["seconds"] + 30)
                    running.append(({**t, "level": seg["level"], "segment_s": seg["start_s"]}, p, started))
            if now >= next_sample:
                try:
                    live = len(cluster.live_server_ids())
                except Exception:  # noqa: BLE001 - the master busy: keep the last count
                    pass
                node_s += live * (now - last_sample)
                last_sample = now
                max_nodes = max(max_nodes, live)
                nodes_timeline.append((round(now - t0, 1), live))
                loads.append(os.getloadavg()[0])
                daemon.supervise()
                next_sample = now + 5
            time.sleep(0.5)
        node_s += live * (time.monotonic() - last_sample)
        tenants += [_collect(t, p, s, t0) for t, p, s in running]
        running = []
        ops = sum(t["ops"] for t in tenants)
        ok = sum(t["ok"] for t in tenants)
        node_minutes = node_s / 60
        rec.update(minutes=a.minutes, ycsb_ops=ops, ycsb_failed=ops - ok,
                   node_minutes=round(node_minutes, 2), max_nodes=max_nodes,
                   ops_per_node_minute=round(ops / node_minutes, 1) if node_minutes else None,
                   controller_restarts=daemon.restarts,
                   machine_load_1min={"mean": round(sum(loads) / len(loads), 2) if loads else None,
                                      "max": round(max(loads), 2) if loads else None},
                   ops_by_level={lv: sum(t["ops"] for t in tenants if t["level"] == lv)
                                 for lv in ("quiet", "burst")},
                   nodes_timeline=nodes_timeline, tenants=tenants)
        daemon.stop()
        rec.update(journal_figures(work / "journal.sqlite"))
    except Exception as e:  # noqa: BLE001 - one failed run is reported; the others still run
        log(f"{policy} rep {rep} failed: {e}")
        rec["error"] = f"{type(e).__name__}: {e}"[:2000]
    finally:
        for _, p, _ in running:
            if p.poll() is None:
                p.kill()
        if daemon is not None:
            daemon.stop()
        if gw is not None:
            gw.close()
        cluster.stop()  # launched RegionServers are recorded in the same cluster.json
    log(f"{policy} rep {rep}: " + json.dumps({k: rec.get(k) for k in (
        "ycsb_ops", "ycsb_failed", "node_minutes", "max_nodes", "plans_done", "moves", "launches", "error")}))
    return rec


def _collect(tenant: dict[str, Any], proc: Any, started: float, t0: float) -> dict[str, Any]:
    r = ycsb.stop(proc, started, tenant["workload"])
    return {**tenant, "start_s": round(started - t0, 1), "ops": r.ops, "ok": r.ok}


# -------------------------------------------------------------------------------------- report

SUMMARY_KEYS = (("ycsb_ops", "YCSB ops", "{:,.0f}"), ("ycsb_failed", "failed", "{:,.0f}"),
                ("node_minutes", "node-min", "{:.1f}"), ("ops_per_node_minute", "ops / node-min", "{:,.0f}"),
                ("max_nodes", "max RS", "{:g}"), ("plans_done", "plans done", "{:g}"),
                ("moves", "moves", "{:g}"), ("launches", "launches", "{:g}"))


def summarize(runs: list[dict[str, Any]], policies: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in policies:
        ok = [r for r in runs if r["policy"] == p and "error" not in r]
        out[p] = {"runs": len(ok), "failed_runs": sum(1 for r in runs if r["policy"] == p and "error" in r)}
        for key, _, _ in SUMMARY_KEYS:
            v = [r[key] for r in ok if r.get(key) is not None]
            if v:
                out[p][key] = {"mean": round(sum(v) / len(v), 2), "min": min(v), "max": max(v)}
    return out


def markdown(summary: dict[str, Any], runs: list[dict[str, Any]]) -> str:
    head = "| policy | runs | " + " | ".join(k[1] for k in SUMMARY_KEYS) + " |"
    lines = ["Mean (min–max) over repetitions.", "", head, "|---|---|" + "---|" * len(SUMMARY_KEYS)]
    for p, s in summary.items():
        cells = []
        for key, _, fmt in SUMMARY_KEYS:
            m = s.get(key)
            cells.append(f"{fmt.format(m['mean'])} ({fmt.format(m['min'])}–{fmt.format(m['max'])})" if m else "–")
        lines.append(f"| {p} | {s['runs']} | " + " | ".join(cells) + " |")
    lines += ["", "Every run:", "",
              "| policy | rep | " + " | ".join(k[1] for k in SUMMARY_KEYS) + " | load avg (mean, max) |",
              "|---|---|" + "---|" * (len(SUMMARY_KEYS) + 1)]
    for r in runs:
        if "error" in r:
            lines.append(f"| {r['policy']} | {r['repetition']} | failed: {r['error'][:120]} |")
            continue
        cells = [fmt.format(r[key]) if r.get(key) is not None else "–" for key, _, fmt in SUMMARY_KEYS]
        ld = r["machine_load_1min"]
        lines.append(f"| {r['policy']} | {r['repetition']} | " + " | ".join(cells) + f" | {ld['mean']}, {ld['max']} |")
    return "\n".join(lines) + "\n"


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--policies", default=",".join(POLICIES), help=f"comma-separated, from {', '.join(POLICIES)}")
    ap.add_argument("--repetitions", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=6, help="schedule length of each run")
    ap.add_argument("--segment-s", type=float, default=60)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--records", type=int, default=1000, help="rows per YCSB table")
    ap.add_argument("--workloads", default="ACDE", help="YCSB workloads (tenants), e.g. ACDE")
    ap.add_argument("--burst-tenants", type=int, default=3)
    ap.add_argument("--burst-threads", type=int, default=2)
    ap.add_argument("--quiet-target", type=float, default=20, help="ops/s of the quiet segment's tenant")
    ap.add_argument("--cores-per-node", type=float, default=1.0,
                    help="CPU thresholds judge each RegionServer as a node with this many cores")
    ap.add_argument("--rs-heap-mb", type=int, default=384)
    add_quota_arguments(ap)
    ap.add_argument("--out", default=str(ROOT / "out" / "compare-hbase"))
    a = ap.parse_args(argv)
    a.policy_list = [p.strip() for p in a.policies.split(",") if p.strip()]
    bad = [p for p in a.policy_list if p not in POLICIES]
    if bad or not a.policy_list:
        raise BadInput(f"--policies: expected names from {', '.join(POLICIES)}, got {a.policies!r}")
    a.workloads = [w for w in a.workloads.upper() if w.strip()]
    if not a.workloads or any(w not in ycsb.WORKLOADS for w in a.workloads):
        raise BadInput(f"--workloads: expected letters from {''.join(ycsb.WORKLOADS)}, got {''.join(a.workloads)!r}")
    for name in ("repetitions", "minutes", "segment_s", "records", "burst_tenants", "burst_threads",
                 "quiet_target", "cores_per_node"):
        if getattr(a, name) <= 0:
            raise BadInput(f"--{name.replace('_', '-')}: expected a number above 0, got {getattr(a, name)}")
    a.cpu_scale = min(1.0, a.cores_per_node / (os.cpu_count() or 1))
    a.policy_overrides = ""
    return a


def main(argv: list[str] | None = None) -> int:
    try:
        a = parse(argv)
    except BadInput as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return 2
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    plan = schedule(a.minutes, a.segment_s, a.seed, a.workloads, burst_tenants=a.burst_tenants,
                    burst_threads=a.burst_threads, quiet_target=a.quiet_target)
    runs: list[dict[str, Any]] = []
    started = time.time()
    report: dict[str, Any] = {}
    # repetition-major (every policy once, then again): a cut-short comparison still has each
    for rep in range(1, a.repetitions + 1):
        for p in a.policy_list:
            runs.append(run_one(p, rep, plan, a))
            report = {"minutes": a.minutes, "repetitions": a.repetitions, "seed": a.seed,
                      "records": a.records, "workloads": "".join(a.workloads),
                      "cpus": os.cpu_count(), "cpu_threshold_scale": a.cpu_scale,
                      "schedule": plan, "wall_minutes": round((time.time() - started) / 60, 1),
                      "summary": summarize(runs, a.policy_list), "runs": runs}
            (out / "report.json").write_text(json.dumps(report, indent=1))
            (out / "table.md").write_text(markdown(report["summary"], runs))
    print(markdown(report["summary"], runs))
    print(f"figures in {out / 'report.json'}")
    return 0 if all("error" not in r for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
