#!/usr/bin/env python3
"""`make scale-hbase`: does a quota'd local RegionServer add capacity? YCSB at saturation against
static local HBase clusters of 1, 2, 3, 4 and 6 RegionServers, each RegionServer a fixed slice
of the machine (deploy/localproc/cgroups.py; a quarter of a core by default), the same records
and mix for every size, several repetitions each.

One run: a fresh quota'd cluster of n RegionServers; one YCSB table of --records rows in
--regions regions (24: an equal share on 1, 2, 3, 4 and 6 servers), spread round-robin so every
server holds the same number; a warm-up run (JIT, block cache), then a measured closed-loop run
with enough threads to keep every server busy (--threads-per-rs per server, plus a base).
Throughput is YCSB's operations per second in the measured window (its first seconds, the
client JVM's start, skipped); p99 is the larger of YCSB's per-operation 99th percentiles (READ,
UPDATE) over the measured run. Also kept per run: each process's CPU in the window (the
RegionServers', the master's, ZooKeeper's, the client's; and each kind of RegionServer thread's,
summed over the servers: RPC handlers, GC, JIT, flushes), how often the RegionServers' quota
throttled them, what their /jmx ProcessCpuLoad read (what the monitor sees), the machine's
load average. Sizes are interleaved within a repetition (1, 2, 3, 4, 6, then again), so a busy
spell on this shared machine does not fall on one size only.

    .venv/bin/python bench/scale_hbase.py [--sizes 1,2,3,4,6] [--repetitions 3] [--records 24000]
        [--measure-s 60] [--idle-s 0] [--busy-beside 0 [--busy-beside-cores C]] [--slices FILE] [--out out/scale-hbase] [--lock FILE] [--resume]
        [--load-shares 0.3,0.5,0.7,0.9]

--load-shares: after each saturated run, the same clients held (YCSB -target) to each share of
the rate it served, measured the same way, with the share of CFS periods in which each
RegionServer's quota ran out: the p99 below saturation, by load (sizes[n]["load_curve"]).

Writes OUT/report.json: {"sizes": {"1": {"ops_per_s": [...], "p99_ms": [...], ...}, ...},
"ratio": {"4": ops(4) / ops(1), ...}, "runs": [...]} and prints the curve.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.local_hbase import cluster as CLUSTER  # noqa: E402
from deploy.local_hbase import ycsb as YCSB  # noqa: E402
from deploy.localproc.cgroups import PERIOD_US, Slice, add_quota_arguments, quota_options  # noqa: E402
from deploy.localproc.process import cpu_s, threads_cpu_s  # noqa: E402
from deploy.localproc.state import held  # noqa: E402

WORKLOAD = "A"  # 50 % reads, 50 % updates: MET §3.1's tenant A
UNIFORM = {"requestdistribution": "uniform"}  # every region equally busy: capacity, not skew


def log(msg: str) -> None:
    print(f"[scale {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def spread_evenly(driver: Any, table: str, timeout_s: float = 180) -> dict[str, int]:
    """Regions of `table` round-robin over the live RegionServers (equal counts); returns the
    count per server once HBase has them there."""
    servers = sorted(s.id for s in driver.servers())
    parts = sorted((p for p in driver.partitions() if p.table == table), key=lambda p: p.id)
    want = {p.id: servers[i % len(servers)] for i, p in enumerate(parts)}
    for pid, target in want.items():
        driver.move_partition(pid, target)
    deadline = time.monotonic() + timeout_s
    while True:
        now = {p.id: p.server for p in driver.partitions() if p.table == table}
        if all(now.get(pid) == target for pid, target in want.items()):
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"regions of {table} not spread within {timeout_s:.0f} s")
        time.sleep(0.5)
    return {s: sum(1 for t in want.values() if t == s) for s in servers}


def process_cpu_load(info_url: str) -> float | None:
    """What the monitor reads as a RegionServer's CPU: its JVM's ProcessCpuLoad (/jmx)."""
    bean = CLUSTER.get_jmx(info_url, "java.lang:type=OperatingSystem")
    v = (bean or {}).get("ProcessCpuLoad")
    return float(v) if isinstance(v, (int, float)) and v >= 0 else None


def p99_ms(result: Any) -> float | None:
    p99s = [lat["p99"] for op, lat in result.latency_us.items() if "p99" in lat and op != "CLEANUP"]
    return round(max(p99s) / 1000, 2) if p99s else None


def one_run(n: int, rep: int, a: argparse.Namespace) -> dict[str, Any]:
    from actuator.hbase import HBaseDriver
    from actuator.hbase_gateway import HBaseGateway

    work = Path(a.out).resolve() / f"rs{n}-rep{rep}"
    cluster = CLUSTER.LocalHBase(work / "hbase", rs_heap_mb=a.rs_heap_mb, **quota_options(a))
    cluster.stop()  # an earlier run's, if it was killed
    rec: dict[str, Any] = {"size": n, "repetition": rep}
    beside: list[subprocess.Popen] = []
    t_setup = time.monotonic()
    try:
        cluster.start(rs=n, timeout_s=600)
        gw = HBaseGateway(CLUSTER.home_for(cluster.version) / "lib", cluster.client_settings(),
                          log_file=work / "gateway.log")
        gw.open()
        driver = HBaseDriver(gw)
        try:
            YCSB.create_tables(gw, a.records, [WORKLOAD], {WORKLOAD: a.regions})
            rec["regions_per_server"] = sorted(spread_evenly(driver, YCSB.table_of(WORKLOAD)).values())
            loaded = YCSB.run_many(cluster, "load", [WORKLOAD], records=a.records, threads=8)[WORKLOAD]
            rec["load_ok"] = loaded.success_fraction
            gw.admin.flush(gw.jvm.org.apache.hadoop.hbase.TableName.valueOf(YCSB.table_of(WORKLOAD)))
        finally:
            driver.close()
        rec["setup_s"] = round(time.monotonic() - t_setup, 1)
        if a.idle_s > 0:
            rec["idle_cpu_cores"] = idle_cpu(cluster, a.idle_s)
        threads = a.threads_base + a.threads_per_rs * n
        kw = dict(records=a.records, threads=threads, extra=UNIFORM)
        YCSB.finish(*YCSB.start(cluster, WORKLOAD, "run", seconds=a.warmup_s, **kw), WORKLOAD, "run")
        rs = [p for p in cluster.region_servers() if cluster.running(p.name)]
        procs = cluster.procs()
        throttled_before = {p.name: cluster.groups.throttling(p.name) for p in rs} if cluster.quota_on else {}
        beside = start_beside(a.busy_beside, cluster, a.busy_beside_cores)  # stopped in `finally` whatever happens
        proc, t0 = YCSB.start(cluster, WORKLOAD, "run", seconds=a.skip_s + a.measure_s, **kw)
        while time.monotonic() - t0 < a.skip_s and proc.poll() is None:
            time.sleep(0.2)
        at_a = time.monotonic() - t0
        pids = {name: p.pid for name, p in procs.items()}
        before = {name: cpu_s(pid) for name, pid in pids.items()} | {"ycsb": cpu_s(proc.pid)}
        threads_a = [threads_cpu_s(pids.get(p.name)) for p in rs]
        load_a = os.getloadavg()[0]
        mid = t0 + a.skip_s + a.measure_s / 2
        while time.monotonic() < mid and proc.poll() is None:
            time.sleep(0.2)
        rec["process_cpu_load"] = {p.name: process_cpu_load(p.info_url) for p in rs}
        while time.monotonic() - t0 < a.skip_s + a.measure_s - 1 and proc.poll() is None:
            time.sleep(0.2)
        at_b = time.monotonic() - t0
        after = {name: cpu_s(pid) for name, pid in pids.items()} | {"ycsb": cpu_s(proc.pid)}
        threads_b = [threads_cpu_s(pids.get(p.name)) for p in rs]
        result = YCSB.finish(proc, t0, WORKLOAD, "run")
        stop_beside(beside, cluster)
        beside = []
        window = at_b - at_a
        ops = sum(rate for s, rate in result.timeline if at_a < s <= at_b)
        rec.update(
            threads=threads, window_s=round(window, 1), ops_per_s=round(ops / window, 1),
            p99_ms=p99_ms(result), failed=result.failed, ok_fraction=round(result.success_fraction, 5),
            latency_ms={op: {k: round(v / 1000, 2) for k, v in lat.items()} for op, lat in result.latency_us.items()},
            cpu_cores={name: round((after[name] - before[name]) / window, 3) for name in after},
            load_avg_1min=[round(load_a, 2), round(os.getloadavg()[0], 2)],
            slices={k: v.to_dict() for k, v in cluster.slices().items()}, busy_beside=a.busy_beside,
            busy_beside_cores=a.busy_beside_cores)
        rec["rs_thread_cores"] = thread_cores(threads_a, threads_b, window)
        if cluster.quota_on:
            now = {p.name: cluster.groups.throttling(p.name) for p in rs}
            rec["throttled_periods"] = {name: now[name].get("throttled", 0) - throttled_before[name].get("throttled", 0)
                                        for name in now}
            rec.update(quota_stops(throttled_before, now))
        log(f"{n} RS rep {rep}: {rec['ops_per_s']:.0f} ops/s, p99 {rec['p99_ms']} ms, "
            f"RS cores {[rec['cpu_cores'][p.name] for p in rs]}, client {rec['cpu_cores']['ycsb']}, "
            f"load {rec['load_avg_1min']}")
        if a.load_shares:
            rec["load_curve"] = [load_point(cluster, rs, share, rec["ops_per_s"], kw, a) for share in a.load_shares]
    except Exception as e:  # noqa: BLE001 - one failed run is reported, the others still run
        rec["error"] = f"{type(e).__name__}: {e}"
        log(f"{n} RS rep {rep}: FAILED {rec['error']}")
    finally:
        stop_beside(beside, cluster)
        cluster.stop()
    return rec


def load_point(cluster: Any, rs: list[Any], share: float, saturated_ops_s: float, kw: dict[str, Any],
               a: argparse.Namespace) -> dict[str, Any]:
    """One point of the load curve: the same clients held to `share` of the rate the cluster
    served at saturation (YCSB -target), measured as the saturated run is; with each
    RegionServer's share of CFS periods in which its quota ran out (cpu.stat)."""
    target = round(share * saturated_ops_s, 1)
    before: dict[str, dict[str, int]] = {}
    proc, t0 = YCSB.start(cluster, WORKLOAD, "run", seconds=a.skip_s + a.measure_s, target_ops=target, **kw)
    while time.monotonic() - t0 < a.skip_s and proc.poll() is None:
        time.sleep(0.2)
    at_a = time.monotonic() - t0
    procs = cluster.procs()
    pids = {p.name: procs[p.name].pid for p in rs if p.name in procs}
    cpu_a = {name: cpu_s(pid) for name, pid in pids.items()}
    threads_a = [threads_cpu_s(pid) for pid in pids.values()]
    if cluster.quota_on:  # counted over the measured window only
        before = {p.name: cluster.groups.throttling(p.name) for p in rs}
    while time.monotonic() - t0 < a.skip_s + a.measure_s - 1 and proc.poll() is None:
        time.sleep(0.2)
    at_b = time.monotonic() - t0
    after = {p.name: cluster.groups.throttling(p.name) for p in rs} if cluster.quota_on else {}
    cpu_b = {name: cpu_s(pid) for name, pid in pids.items()}
    threads_b = [threads_cpu_s(pid) for pid in pids.values()]
    result = YCSB.finish(proc, t0, WORKLOAD, "run")
    window = at_b - at_a
    ops = sum(rate for s, rate in result.timeline if at_a < s <= at_b)
    # each RegionServer's CPU, and by kind of thread: where CPU per operation goes as load falls
    point: dict[str, Any] = {
        "share": share, "target_ops_s": target, "ops_per_s": round(ops / window, 1), "p99_ms": p99_ms(result),
        "failed": result.failed,
        "latency_ms": {op: {k: round(v / 1000, 2) for k, v in lat.items()} for op, lat in result.latency_us.items()},
        "cpu_cores": {name: round((cpu_b[name] - cpu_a[name]) / window, 3) for name in pids},
        "rs_thread_cores": thread_cores(threads_a, threads_b, window)}
    if after:
        point.update(quota_stops(before, after))
    log(f"  at {share:.0%} of saturation ({target:.0f} ops/s asked): {point['ops_per_s']:.0f} ops/s, "
        f"p99 {point['p99_ms']} ms, quota spent in {point.get('throttled_share')} of periods, "
        f"stopped {point.get('stopped_share')} of the time")
    return point


def quota_stops(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    """Per RegionServer, between two reads of its cpu.stat: the share of CFS periods in which
    its quota ran out (`throttled_share`), the share of the time it was stopped for it
    (`stopped_share`: a request that arrives then waits), and a stop's mean length (`stop_ms`).
    The kernel sums the stopped time over the CPUs the group was stopped on (cgroup v1's
    throttled_time), so a group stopped on both of two CPUs counts twice: up to 2, not 1."""
    out: dict[str, dict[str, Any]] = {"throttled_share": {}, "stopped_share": {}, "stop_ms": {}}
    for name in after:
        periods = after[name].get("periods", 0) - before.get(name, {}).get("periods", 0)
        throttled = after[name].get("throttled", 0) - before.get(name, {}).get("throttled", 0)
        stopped_us = after[name].get("throttled_us", 0) - before.get(name, {}).get("throttled_us", 0)
        out["throttled_share"][name] = round(throttled / periods, 3) if periods else None
        out["stopped_share"][name] = round(stopped_us / (periods * PERIOD_US), 4) if periods else None
        out["stop_ms"][name] = round(stopped_us / throttled / 1000, 2) if throttled else None
    return out


def thread_cores(before: list[dict[str, float]], after: list[dict[str, float]],
                 window_s: float) -> dict[str, float]:
    """Cores each kind of RegionServer thread used over the window, summed over the
    RegionServers (a reading per server before and after), largest first."""
    total: dict[str, float] = {}
    for b, a in zip(before, after):
        for kind, s in a.items():
            total[kind] = total.get(kind, 0.0) + s - b.get(kind, 0.0)
    return {k: round(v / window_s, 4) for k, v in sorted(total.items(), key=lambda kv: -kv[1])
            if v > 0}


# A process that reads random cache lines of a 64 MiB array for ever: what other tenants of a
# shared machine do to a node's CPU caches and memory bandwidth (at nice 19 it takes only the
# cycles the cluster leaves; capped like a RegionServer, it competes as one would).
BUSY = ("import random\nb = bytearray(64 << 20)\nn = len(b) - 1\nr = random.Random(1)\n"
        "while True:\n    for _ in range(100000):\n        b[r.randint(0, n)] += 1\n")


def start_beside(n: int, cluster: Any = None, cores: float | None = None) -> list[subprocess.Popen]:
    """`n` BUSY processes (none for 0), started now: at nice 19 with no cap, or, given `cores`,
    at normal priority each in a group of the cluster capped at `cores` (as a RegionServer's
    slice is): the other tenants of a machine whose CPU is sliced."""
    nice = [] if cores else ["nice", "-n", "19"]
    procs = [subprocess.Popen([*nice, sys.executable, "-c", BUSY], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(n)]
    if cores:
        for k, p in enumerate(procs):
            cluster.groups.apply(f"beside{k + 1}", Slice(cpu_cores=cores, cpu_shares=1024))
            cluster.groups.join(f"beside{k + 1}", p.pid)
    return procs


def stop_beside(procs: list[subprocess.Popen], cluster: Any = None) -> None:
    for k, p in enumerate(procs):
        p.kill()
        p.wait()
        if cluster is not None and cluster.quota_on:
            cluster.groups.remove(f"beside{k + 1}")


def idle_cpu(cluster: Any, seconds: float) -> dict[str, float]:
    """Each process's CPU (cores) over `seconds` with the table loaded and no client: what a
    RegionServer's own work (chores, flushes, heartbeats) takes out of its slice."""
    pids = {name: p.pid for name, p in cluster.procs().items()}
    before = {name: cpu_s(pid) for name, pid in pids.items()}
    t0 = time.monotonic()
    time.sleep(seconds)
    span = time.monotonic() - t0
    return {name: round((cpu_s(pid) - before[name]) / span, 4) for name, pid in pids.items()}


def summarise(runs: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in sizes:
        ok = [r for r in runs if r["size"] == n and "error" not in r]
        out[str(n)] = {
            "ops_per_s": [r["ops_per_s"] for r in ok], "p99_ms": [r["p99_ms"] for r in ok],
            "failed": [r["failed"] for r in ok],
            "rs_cores_mean": [round(statistics.mean(v for k, v in r["cpu_cores"].items() if k.startswith("rs")), 3)
                              for r in ok],
            "client_cores": [r["cpu_cores"]["ycsb"] for r in ok],
            "rs_thread_ms_per_op": thread_ms_per_op(ok),
            **({"load_curve": load_curve(ok)} if any(r.get("load_curve") for r in ok) else {}),
            "errors": [r["error"] for r in runs if r["size"] == n and "error" in r],
        }
    return out


def load_curve(runs: list[dict[str, Any]]) -> dict[str, dict[str, list[Any]]]:
    """Per share of saturation, each repetition's rate asked, throughput, p99, reads' and
    updates' p99, the RegionServers' mean share of periods their quota ran out in and of the
    time they were stopped for it, and their CPU ms per operation (None where not read)."""
    out: dict[str, dict[str, list[Any]]] = {}
    for r in runs:
        for point in r.get("load_curve", []):
            row = out.setdefault(f"{point['share']:g}", {"target_ops_s": [], "ops_per_s": [], "p99_ms": [],
                                                         "read_p99_ms": [], "update_p99_ms": [],
                                                         "throttled_share": [], "stopped_share": [],
                                                         "rs_cpu_ms_per_op": []})
            row["target_ops_s"].append(point.get("target_ops_s"))
            row["ops_per_s"].append(point["ops_per_s"])
            cores = sum((point.get("cpu_cores") or {}).values())
            row["rs_cpu_ms_per_op"].append(round(cores * 1000 / point["ops_per_s"], 4)
                                           if cores and point["ops_per_s"] else None)
            row["p99_ms"].append(point["p99_ms"])
            for op, key in (("READ", "read_p99_ms"), ("UPDATE", "update_p99_ms")):
                row[key].append(point["latency_ms"].get(op, {}).get("p99"))
            for key in ("throttled_share", "stopped_share"):
                shares = [v for v in (point.get(key) or {}).values() if v is not None]
                row[key].append(round(statistics.mean(shares), 4) if shares else None)
    return out


def thread_ms_per_op(runs: list[dict[str, Any]]) -> dict[str, float]:
    """RegionServer CPU ms per operation by thread kind, the median over the runs that read
    threads (runs of an older report did not): where a size's extra CPU per operation goes."""
    per: dict[str, list[float]] = {}
    read = [r for r in runs if r.get("rs_thread_cores") and r.get("ops_per_s")]
    for r in read:
        for kind, cores in r["rs_thread_cores"].items():
            per.setdefault(kind, []).append(1000.0 * cores / r["ops_per_s"])
    return {k: round(statistics.median(v + [0.0] * (len(read) - len(v))), 4)
            for k, v in sorted(per.items(), key=lambda kv: -sum(kv[1]))}


def _median(xs: list[float | None]) -> float:
    """The median of the figures that were measured; NaN if none was."""
    known = [x for x in xs if x is not None]
    return statistics.median(known) if known else float("nan")


def spread(xs: list[float]) -> str:
    if not xs:
        return "-"
    return f"{statistics.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1,2,3,4,6")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--records", type=int, default=24_000)
    ap.add_argument("--regions", type=int, default=24)
    ap.add_argument("--warmup-s", type=float, default=30)
    ap.add_argument("--skip-s", type=float, default=10, help="first seconds of the measured run not counted")
    ap.add_argument("--measure-s", type=float, default=60)
    ap.add_argument("--idle-s", type=float, default=0,
                    help="before the warm-up, measure each process's CPU this long with no client (0: not)")
    ap.add_argument("--busy-beside", type=int, default=0,
                    help="during each measured run, this many processes at nice 19 read random memory beside "
                         "the cluster (what a shared machine's other work does to the nodes' CPU caches)")
    ap.add_argument("--busy-beside-cores", type=float, default=None,
                    help="with --busy-beside: each of those processes at normal priority, capped at this many "
                         "cores in its own group (as many more RegionServers' slices would be)")
    ap.add_argument("--threads-base", type=int, default=8)
    ap.add_argument("--threads-per-rs", type=int, default=12)
    ap.add_argument("--rs-heap-mb", type=int, default=384)
    ap.add_argument("--out", default=str(ROOT / "out" / "scale-hbase"))
    ap.add_argument("--lock", help="take this flock around each run (e.g. /work/hbase.lock), not the whole bench")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs OUT/report.json already holds (same settings, no error) and do only the rest")
    ap.add_argument("--load-shares", default="",
                    help="after each saturated run, the same clients held to these shares of the rate it "
                         "served (e.g. 0.3,0.5,0.7,0.9: the p99 below saturation), each measured as it is")
    add_quota_arguments(ap)
    a = ap.parse_args(argv)
    try:
        a.load_shares = [float(x) for x in a.load_shares.split(",") if x.strip()]
        if any(not 0 < x <= 1 for x in a.load_shares):
            raise ValueError
    except ValueError:
        print(f"scale-hbase: --load-shares: expected shares of saturation in (0, 1] separated by commas, "
              f"got {a.load_shares!r}", file=sys.stderr)
        return 2
    try:
        sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
        if not sizes or min(sizes) < 1:
            raise ValueError
    except ValueError:
        print(f"scale-hbase: --sizes: expected positive whole numbers separated by commas, got {a.sizes!r}",
              file=sys.stderr)
        return 2
    if a.busy_beside_cores is not None and (a.no_quota or not 0.01 <= a.busy_beside_cores <= 1024):
        print(f"scale-hbase: --busy-beside-cores: expected 0.01..1024 cores on quota'd nodes, got "
              f"{a.busy_beside_cores}{' with --no-quota' if a.no_quota else ''}", file=sys.stderr)
        return 2
    if a.repetitions < 1:
        print(f"scale-hbase: --repetitions: expected at least 1, got {a.repetitions}", file=sys.stderr)
        return 2
    out = Path(a.out)
    started = time.monotonic()
    runs: list[dict[str, Any]] = []
    report: dict[str, Any] = {"workload": WORKLOAD, "distribution": "uniform", "records": a.records,
                              "regions": a.regions, "measure_s": a.measure_s, "cores": os.cpu_count(),
                              "quota": not a.no_quota, "load_shares": a.load_shares, "runs": runs}
    held_s: list[float] = []
    if a.resume and (out / "report.json").exists():
        earlier = json.loads((out / "report.json").read_text())
        same = ("workload", "distribution", "records", "regions", "measure_s", "quota", "load_shares")
        # a report written before the load curve was asked for none
        differ = [k for k in same if earlier.get(k, [] if k == "load_shares" else None) != report[k]]
        if differ:
            print(f"scale-hbase: --resume: {out / 'report.json'} was made with other settings "
                  f"({', '.join(f'{k} {earlier.get(k)!r}, asked {report[k]!r}' for k in differ)})",
                  file=sys.stderr)
            return 2
        runs.extend(r for r in earlier.get("runs", []) if "error" not in r and r["size"] in sizes
                    and r["repetition"] <= a.repetitions)
        held_s.append(earlier.get("lock_held_s", 0))
    # a report that cannot be resumed is said before minutes of building and fetching
    out.mkdir(parents=True, exist_ok=True)
    YCSB.build()
    CLUSTER.fetch()
    done = {(r["size"], r["repetition"]) for r in runs}
    for rep in range(1, a.repetitions + 1):
        for n in sizes:
            if (n, rep) in done:
                continue
            with held(a.lock, held_s):
                runs.append(one_run(n, rep, a))
            report["lock_held_s"] = round(sum(held_s))
            report["sizes"] = summarise(runs, sizes)
            (out / "report.json").write_text(json.dumps(report, indent=2))
    report["lock_held_s"] = round(sum(held_s))
    report["sizes"] = summarise(runs, sizes)
    one = report["sizes"][str(sizes[0])]["ops_per_s"]
    base = statistics.median(one) if one else None
    report["ratio"] = {str(n): round(statistics.median(v["ops_per_s"]) / base, 2)
                       for n, v in ((n, report["sizes"][str(n)]) for n in sizes) if base and v["ops_per_s"]}
    report["wall_s"] = round(time.monotonic() - started)
    (out / "report.json").write_text(json.dumps(report, indent=2))
    print(f"\n{'RS':>3} {'ops/s median (min-max)':>24} {'p99 ms median (min-max)':>24} {'x one':>6}")
    for n in sizes:
        s = report["sizes"][str(n)]
        print(f"{n:>3} {spread(s['ops_per_s']):>24} {spread(s['p99_ms']):>24} "
              f"{report['ratio'].get(str(n), float('nan')):>6}")
    kinds = list(report["sizes"][str(sizes[0])]["rs_thread_ms_per_op"])[:6]
    if kinds:
        print("\nRegionServer CPU ms per operation, by thread kind (median over repetitions)")
        print(f"{'RS':>3} " + " ".join(f"{k[:16]:>16}" for k in kinds) + f" {'all threads':>12}")
        for n in sizes:
            t = report["sizes"][str(n)]["rs_thread_ms_per_op"]
            print(f"{n:>3} " + " ".join(f"{t.get(k, 0.0):>16.4f}" for k in kinds)
                  + f" {sum(t.values()):>12.4f}")
    if a.load_shares:
        print("\nBelow saturation: p99 ms and the share of CFS periods the quota ran out in (median over repetitions)")
        for n in sizes:
            curve = report["sizes"][str(n)].get("load_curve", {})
            print(f"{n:>3} RS: " + ", ".join(f"{share}: {_median(v['p99_ms']):.0f} ms / {_median(v['throttled_share']):.2f}"
                                             for share, v in curve.items()))
    if "4" in report["ratio"] and sizes[0] == 1:
        print(f"4 RegionServers / 1: {report['ratio']['4']} (bar 2.5, goal 3)")
    print(f"{out / 'report.json'} ({report['wall_s']} s)")
    return 0 if all("error" not in r for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
