"""Measure HBase's per-operation CPU cost and latency on the local cluster, to check the
simulator's constants (simulator/settings.py: get_cpu_ms, put_cpu_ms, scan_row_cpu_ms,
client_op_cpu_ms, rpc_floor_ms, wal_sync_ms) against a real HBase 2.6.

One RegionServer (so every region is on it and its process CPU is the server's whole cost),
YCSB through the project's binding (deploy/local_hbase/ycsb.py). Per operation type, one
workload alone: C (gets), B (updates = puts), E (95 % scans of 1–`--scan-length` rows, 5 %
inserts). Each runs once unmeasured (JIT, block cache warm: the table fits in the cache, so
gets are cached gets as get_cpu_ms means), then measured: the RegionServer's and the YCSB
client's process CPU time (/proc/PID/stat utime + stime, GC and flushes included) over a window
that leaves out the client JVM's start, divided by the operations YCSB's status lines count in
that window; latency is YCSB's mean per operation type at a light load (`--light-threads`,
1 thread: no queueing, so it is the floor a request pays, network round trip included).

Scaling to the simulator's hardware (docs/simulator.md, "Calibration"): CPU ms per operation
scale with the core's speed; this bench prints the measured figure, the setting and their
ratio, and the setting's source stays what the setting says. Loopback has no network, so the
latency floor measured here is below a LAN's by the round trip (network_rtt_ms).

    .venv/bin/python bench/calibrate_hbase.py [--records 20000] [--seconds 40] [--threads 8]

~4–6 minutes on 2 cores (cluster start, load, 3 workloads x (warm + measured + light)).
Figures go to out/calibrate-hbase/report.json, and a simulator calibration file of the node
measured to out/calibrate-hbase/calibration.yaml (`simulator.calibration: FILE` in a config).

On a quota'd RegionServer (the default: deploy/localproc/cgroups.py, a fixed slice of the
machine) the report also holds `quota_node`: the simulator settings of one node that is that
slice (bench/sim_vs_real.py predicts the scale and compare benches with them). The simulator's
nodes have whole cores, so a node of q cores is one core on which every CPU cost is 1/q times
the measured one: the same capacity (operations per second at saturation); see
docs/simulator.md, "A quota'd RegionServer", for what that does to latency.

`--cost-growth-from REPORT` (a `make scale-hbase` report with each RegionServer's CPU, e.g.
docs/scale-hbase-threads-report.json): the calibration file also sets
`hardware.shared_machine_cost_growth`, so that a simulated cluster of several such nodes pays
what RegionServers sharing this machine pay (docs/simulator.md, "RegionServers that share one
machine"). Read before the cluster starts: a file that cannot give it exits 2 at once.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from deploy.local_hbase import cluster as CLUSTER  # noqa: E402
from deploy.local_hbase import ycsb as YCSB  # noqa: E402
from deploy.localproc.cgroups import PERIOD_US, add_quota_arguments, quota_options  # noqa: E402
from deploy.localproc.process import cpu_s  # noqa: E402

# A quota'd RegionServer's CPU at light load is not in proportion to its requests: at λ YCSB A
# requests a second it spends 6 + 0.082 λ + 0.773 λ / (1 + 0.0056 λ) ms of CPU a second, within
# 10 % at one and four RegionServers (bench/scale_hbase.py --load-shares, 2026-11-28,
# docs/scale-hbase-load-cpu-report.json and docs/scale-hbase-load4-report.json; docs/local-hbase.md,
# "The p99 below saturation"): a wake-up costs 0.773 ms and serves what arrives within 5.6 ms.
# Not measured by this bench: the quota'd node's settings carry that measurement
# (simulator hardware.cpu_wakeup_ms, over the quota like every cost, and cpu_wakeup_window_ms).
WAKEUP_CPU_MS = 0.773
WAKEUP_WINDOW_MS = 5.6
# The variance over the mean of the CPU a RegionServer asks in one 100-ms period, in quotas
# (simulator hardware.cpu_quota_dispersion), and how long a period that runs out stops per
# quota it asks beyond its quota (cpu_quota_stop_per_excess, κ: min(0.85, κ·(D − 1)) of the
# period): fitted together (least squares) to both cpu.stat shares, the periods the quota ran
# out in (nr_throttled / nr_periods) and the time stopped (throttled_time / wall, taken as the
# wall-clock time stopped), 40 points at 10-95 % of the saturated rate at one and four
# RegionServers (the three load reports above and docs/scale-hbase-load-report.json), each at
# the share the simulated node asks there: 0.024 and 2.63, rms error 0.084 of the periods'
# share and 0.140 of the time stopped (0.202 with every stop its period's whole rest, the
# dispersion 0.026 fitted to the periods alone); one RegionServer's points alone give 0.020
# and 5.04, four's 0.029 and 1.54 (docs/evaluation.md, "The quota's stops by their length").
QUOTA_DISPERSION = 0.024
QUOTA_STOP_PER_EXCESS = 2.63

# What each workload measures: the operation type YCSB reports and the setting it checks.
OPERATIONS = {"C": ("READ", "get_cpu_ms"), "B": ("UPDATE", "put_cpu_ms"), "E": ("SCAN", "scan_row_cpu_ms")}


def mean_latency_us(stdout: str, op: str) -> float | None:
    for line in stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3 and parts[0] == f"[{op}]" and parts[1] == "AverageLatency(us)":
            return float(parts[2])
    return None


def measure(cluster, rs_pids: list[int], workload: str, *, records: int, threads: int, seconds: float,
            skip_s: float, scan_length: int, target_ops: float | None = None) -> dict:
    """One measured run: CPU per operation on the servers (every RegionServer's process,
    summed) and on the client, ops/s, latency; `target_ops`: YCSB's -target rate (None: as
    fast as the threads go)."""
    extra = {"maxscanlength": scan_length} if workload == "E" else {}
    saved = dict(YCSB.COMMON)
    YCSB.COMMON.update(extra)
    try:
        proc, t0 = YCSB.start(cluster, workload, "run", records=records, threads=threads, seconds=seconds,
                              target_ops=target_ops)
    finally:
        YCSB.COMMON.clear()
        YCSB.COMMON.update(saved)
    while time.monotonic() - t0 < skip_s and proc.poll() is None:
        time.sleep(0.2)
    at_a = time.monotonic() - t0
    rs_a, cl_a = sum(map(cpu_s, rs_pids)), cpu_s(proc.pid)
    while time.monotonic() - t0 < seconds - 2 and proc.poll() is None:
        time.sleep(0.2)
    at_b = time.monotonic() - t0
    rs_b, cl_b = sum(map(cpu_s, rs_pids)), cpu_s(proc.pid)
    result = YCSB.finish(proc, t0, workload, "run")
    out, _ = YCSB.outputs(proc)
    # YCSB's status line at second s carries the rate over (s-1, s]
    window_ops = sum(rate for s, rate in result.timeline if at_a < s <= at_b)
    op = OPERATIONS[workload][0]
    return {"workload": workload, "threads": threads, "window_s": round(at_b - at_a, 2),
            "ops_in_window": round(window_ops), "ops_s": round(window_ops / max(at_b - at_a, 1e-9), 1),
            "server_cpu_s": round(rs_b - rs_a, 3), "client_cpu_s": round(cl_b - cl_a, 3),
            "server_cpu_ms_per_op": (rs_b - rs_a) * 1000 / window_ops if window_ops else None,
            "client_cpu_ms_per_op": (cl_b - cl_a) * 1000 / window_ops if window_ops else None,
            "mean_latency_us": mean_latency_us(out, op), "success": result.success_fraction}


def quota_stops(cores: float) -> dict[str, float]:
    """The hardware settings of a quota'd node's CPU at light load, its periods' dispersion and
    its stops' length (WAKEUP_CPU_MS, over the quota as every cost; WAKEUP_WINDOW_MS;
    QUOTA_DISPERSION; QUOTA_STOP_PER_EXCESS)."""
    return {"cpu_wakeup_ms": round(WAKEUP_CPU_MS / cores, 4), "cpu_wakeup_window_ms": WAKEUP_WINDOW_MS,
            "cpu_quota_dispersion": QUOTA_DISPERSION, "cpu_quota_stop_per_excess": QUOTA_STOP_PER_EXCESS}


def quota_node(cores: float, *, get_ms: float, put_ms: float, row_ms: float, client_ms: float,
               client_row_ms: float, get_lat_ms: float, put_lat_ms: float,
               saturated_ops_s: dict[str, float], heap_mb: int,
               period_ms: float = PERIOD_US / 1000.0) -> dict[str, Any]:
    """The simulator settings of one node that is a `cores`-core slice: one whole core with
    every server CPU cost divided by `cores` (the same operations per second at saturation),
    stopped when it has spent its quota of a `period_ms` period (running, it runs on one core:
    `cores` of the period), its CPU at light load and its periods' dispersion as measured on
    the local cluster (quota_stops); the client is the YCSB clients' group (one core) at the measured
    cost; the latency floor and the WAL wait are what a 1-thread operation took beyond the CPU
    both ends spent."""
    scale = 1.0 / cores
    floor = max(get_lat_ms - get_ms - client_ms, 0.0)
    return {
        "cpu_cores": cores,
        "measured": {"get_cpu_ms": get_ms, "put_cpu_ms": put_ms, "scan_row_cpu_ms": row_ms,
                     "client_op_cpu_ms": client_ms, "get_latency_ms": get_lat_ms, "put_latency_ms": put_lat_ms,
                     "saturated_ops_s": saturated_ops_s},
        "simulator": {
            "hardware": {"cores": 1, "heap_mb": heap_mb, "network_rtt_ms": 0.05,
                         "cpu_quota_period_ms": period_ms, "cpu_quota_run_share": min(cores, 1.0),
                         **quota_stops(cores)},
            "costs": {"get_cpu_ms": round(get_ms * scale, 4),
                      # the default split of a get (half RPC, a quarter per block) kept
                      "rpc_cpu_ms": round(get_ms * scale * 0.5, 4), "block_cpu_ms": round(get_ms * scale * 0.25, 4),
                      "put_cpu_ms": round(put_ms * scale, 4), "scan_row_cpu_ms": round(row_ms * scale, 5),
                      "client_cores": 1, "client_op_cpu_ms": round(client_ms, 4),
                      "client_row_cpu_ms": round(client_row_ms, 5), "record_kb": 0.4,
                      "rpc_floor_ms": round(floor, 3),
                      "wal_sync_ms": round(max(put_lat_ms - put_ms - client_ms - floor, 0.0), 3)},
        },
    }


def calibration_file(report: dict[str, Any]) -> str:
    """A simulator calibration file (`simulator.calibration: FILE`, controller/calibration.py)
    of the node this run measured: on a quota'd RegionServer, quota_node's settings; without a
    quota, one node of this machine's cores at the measured CPU costs. Keys it leaves out keep
    the shipped values (configs/calibration/simulator.yaml)."""
    if "quota_node" in report:
        settings = dict(report["quota_node"]["simulator"])
        what = f"one RegionServer quota'd to {report['quota_node']['cpu_cores']:g} cores"
    else:
        measured = {k: v["measured"] for k, v in report["figures"].items()}
        get = measured["get_cpu_ms"]
        settings = {"hardware": {"cores": report["cores"]},
                    "costs": {"get_cpu_ms": round(get, 4), "rpc_cpu_ms": round(get * 0.5, 4),
                              "block_cpu_ms": round(get * 0.25, 4),
                              "put_cpu_ms": round(measured["put_cpu_ms"], 4),
                              "scan_row_cpu_ms": round(measured["scan_row_cpu_ms"], 5),
                              "client_op_cpu_ms": round(measured["client_op_cpu_ms"], 4)}}
        what = f"one RegionServer on {report['cores']} cores, no quota"
    growth = report.get("cost_growth")
    if growth is not None:
        # RegionServers beside one another on this machine (docs/simulator.md)
        settings["hardware"] = {**settings.get("hardware", {}), "shared_machine_cost_growth": growth["g"]}
        what += f", cost growth {growth['g']:g} from {growth['source']}"
    header = (f"# Measured by bench/calibrate_hbase.py (make calibrate-hbase): HBase {report['hbase']}, "
              f"{what}, {report['records']} records\n# per table (docs/simulator.md, Calibration). "
              "Use it with `simulator.calibration: FILE`; keys left out keep the shipped\n# values "
              "(configs/calibration/simulator.yaml).\n")
    return header + yaml.safe_dump(settings, sort_keys=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=20_000, help="records per table (fits the block cache)")
    ap.add_argument("--seconds", type=float, default=40, help="length of each measured run")
    ap.add_argument("--threads", type=int, default=8, help="YCSB threads of the measured runs")
    ap.add_argument("--light-threads", type=int, default=1, help="threads of the latency runs")
    ap.add_argument("--scan-length", type=int, default=100, help="YCSB maxscanlength (uniform 1..N)")
    ap.add_argument("--workdir", default=str(ROOT / "out" / "calibrate-hbase-cluster"))
    ap.add_argument("--out", default=str(ROOT / "out" / "calibrate-hbase" / "report.json"))
    ap.add_argument("--cost-growth-from", default=None, metavar="REPORT",
                    help="a scale report with each RegionServer's CPU (make scale-hbase): the calibration "
                         "file also carries how a RegionServer's cost grows with the others on this machine")
    ap.add_argument("--cost-growth-experiment", default="alone", metavar="NAME",
                    help="which experiment of a report of several (default: alone)")
    add_quota_arguments(ap)
    a = ap.parse_args(argv)
    growth = None
    if a.cost_growth_from:  # read before the cluster starts: a bad file costs no run
        from bench.sim_vs_real import cost_growth_from
        try:
            growth = cost_growth_from(a.cost_growth_from, a.cost_growth_experiment)
        except ValueError as err:
            print(f"calibrate_hbase: --cost-growth-from {a.cost_growth_from}: {err}", file=sys.stderr)
            return 2

    from actuator.hbase_gateway import HBaseGateway
    from simulator.settings import SimulatorSettings

    costs = SimulatorSettings().costs
    started = time.monotonic()
    YCSB.build()
    cluster = CLUSTER.LocalHBase(a.workdir, **quota_options(a))
    rs_slice = cluster.slice_for("rs") if cluster.quota_on else None
    report: dict = {"records": a.records, "threads": a.threads, "scan_length": a.scan_length,
                    "hbase": cluster.version, "cores": os.cpu_count(), "runs": {}}
    if growth is not None:
        report["cost_growth"] = growth
    try:
        cluster.start(rs=1)
        rs = cluster.region_servers()[0]
        with HBaseGateway(CLUSTER.home_for(cluster.version) / "lib", cluster.client_settings()) as gw:
            YCSB.load(cluster, gw, a.records, list(OPERATIONS), threads=4)
        rs_pids = [cluster.proc(rs.name).pid]
        for w in OPERATIONS:
            measure(cluster, rs_pids, w, records=a.records, threads=a.threads, seconds=15, skip_s=5,
                    scan_length=a.scan_length)  # warm-up, not kept
            busy = measure(cluster, rs_pids, w, records=a.records, threads=a.threads, seconds=a.seconds,
                           skip_s=6, scan_length=a.scan_length)
            light = measure(cluster, rs_pids, w, records=a.records, threads=a.light_threads,
                            seconds=max(20.0, a.seconds / 2), skip_s=6, scan_length=a.scan_length)
            report["runs"][w] = {"busy": busy, "light": light}
            print(f"{w}: {busy['ops_s']:.0f} ops/s, server {busy['server_cpu_ms_per_op']:.3f} ms CPU/op, "
                  f"client {busy['client_cpu_ms_per_op']:.3f} ms CPU/op; 1-thread latency "
                  f"{light['mean_latency_us']} us", flush=True)
    finally:
        cluster.stop()

    rows = a.scan_length / 2 + 0.5  # mean of uniform 1..N
    runs = report["runs"]
    get_ms = runs["C"]["busy"]["server_cpu_ms_per_op"]
    put_ms = runs["B"]["busy"]["server_cpu_ms_per_op"]
    # E: 95 % scans, 5 % inserts; a scan's own RPC costs about what a get's does
    e_ms = runs["E"]["busy"]["server_cpu_ms_per_op"]
    scan_ms = (e_ms - 0.05 * put_ms) / 0.95
    row_ms = max(scan_ms - get_ms, 0.0) / rows
    client_ms = runs["C"]["busy"]["client_cpu_ms_per_op"]
    figures = {
        "get_cpu_ms": (get_ms, costs.get_cpu_ms),
        "put_cpu_ms": (put_ms, costs.put_cpu_ms),
        "scan_row_cpu_ms": (row_ms, costs.scan_row_cpu_ms),
        "client_op_cpu_ms": (client_ms, costs.client_op_cpu_ms),
        "get latency floor ms (1 thread, loopback)": (runs["C"]["light"]["mean_latency_us"] / 1000, None),
        "put latency floor ms (1 thread, loopback)": (runs["B"]["light"]["mean_latency_us"] / 1000, None),
    }
    report["figures"] = {k: {"measured": m, "setting": s} for k, (m, s) in figures.items()}
    if rs_slice is not None and rs_slice.cpu_cores:
        e_client = runs["E"]["busy"]["client_cpu_ms_per_op"]
        report["quota_node"] = quota_node(
            rs_slice.cpu_cores, get_ms=get_ms, put_ms=put_ms, row_ms=row_ms, client_ms=client_ms,
            client_row_ms=max(e_client - client_ms, 0.0) / rows,
            get_lat_ms=runs["C"]["light"]["mean_latency_us"] / 1000,
            put_lat_ms=runs["B"]["light"]["mean_latency_us"] / 1000,
            saturated_ops_s={w: runs[w]["busy"]["ops_s"] for w in runs}, heap_mb=cluster.rs_heap_mb)
    report["whole_run_s"] = round(time.monotonic() - started, 1)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    calibration = out.parent / "calibration.yaml"
    calibration.write_text(calibration_file(report))
    print(f"\n{'figure':44} {'measured':>9} {'setting':>9} {'ratio':>7}")
    for k, (m, s) in figures.items():
        ratio = f"{m / s:7.2f}" if s else ""
        print(f"{k:44} {m:9.3f} {s if s is not None else '':>9} {ratio}")
    print(f"\nwhole run {report['whole_run_s']} s; figures in {out}; simulator.calibration: {calibration}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
