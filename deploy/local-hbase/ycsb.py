#!/usr/bin/env python3
"""YCSB against the local HBase cluster: MET §3.1's multi-tenant mix, scaled to this machine.

YCSB's workload generator (`site.ycsb:core:0.17.0`, Maven Central) drives HBase through the
project's own binding (`ycsb-hbase/`, class site.ycsb.db.metctl.HBase2Client), built once into
the metctl cache. Each workload (A–F) is one tenant with its own table: 4 equal regions (D: 1),
keys inserted in order (zero-padded) and drawn from YCSB's hotspot distribution with 50 % of the
operations on 40 % of the keys — so, as in MET, one region per table is the hotspot (~31 % of its
requests), one intermediate (~27 %), two cooler (~21 % each).

    python deploy/local-hbase/ycsb.py --workdir W load [--records 2000]
    python deploy/local-hbase/ycsb.py --workdir W run  [--seconds 30] [--workloads A,C,E]

Each run prints ops/s and the fraction of operations that succeeded, per workload.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODULE = ROOT / "ycsb-hbase"
BINDING = "site.ycsb.db.metctl.HBase2Client"
FAMILY = "family"

_spec = importlib.util.spec_from_file_location("metctl_local_hbase_cluster", HERE / "cluster.py")
cluster_mod = sys.modules.get("metctl_local_hbase_cluster")
if cluster_mod is None:
    assert _spec and _spec.loader
    cluster_mod = importlib.util.module_from_spec(_spec)
    sys.modules["metctl_local_hbase_cluster"] = cluster_mod
    _spec.loader.exec_module(cluster_mod)

# MET §3.1 (B and D as the paper modified them), hotspot keys everywhere.
WORKLOADS: dict[str, dict[str, Any]] = {
    "A": {"readproportion": 0.5, "updateproportion": 0.5},
    "B": {"readproportion": 0.0, "updateproportion": 1.0},
    "C": {"readproportion": 1.0, "updateproportion": 0.0},
    "D": {"readproportion": 0.05, "updateproportion": 0.0, "insertproportion": 0.95},
    "E": {"readproportion": 0.0, "updateproportion": 0.0, "scanproportion": 0.95,
          "insertproportion": 0.05},
    "F": {"readproportion": 0.5, "updateproportion": 0.0, "readmodifywriteproportion": 0.5},
}
REGIONS = {"A": 4, "B": 4, "C": 4, "D": 1, "E": 4, "F": 4}
# MET loads D with a tenth of the records (a fast-growing log). Its run phase must be told the
# same count: YCSB reads keys below `recordcount`, and a read of a key never loaded returns
# NOT_FOUND, an operation that fails for the workload's own sake, not the cluster's.
LOADED_SHARE = {"D": 10}


def loaded_records(workload: str, records: int) -> int:
    """How many records `load` writes for the workload (the run phase's `recordcount`)."""
    return max(1, records // LOADED_SHARE.get(workload, 1))


COMMON = {
    "workload": "site.ycsb.workloads.CoreWorkload",
    "requestdistribution": "hotspot",
    "hotspotdatafraction": 0.4,
    "hotspotopnfraction": 0.5,
    "insertorder": "ordered",
    "zeropadding": 10,
    "fieldcount": 4,
    "fieldlength": 100,
    "readallfields": "true",
    "maxscanlength": 10,
    "scanlengthdistribution": "uniform",
    "columnfamily": FAMILY,
    # a failed operation is measured as <OP>-<STATUS> (READ-ERROR, READ-NOT_FOUND, …) instead of
    # <OP>-FAILED, so the per-second status lines tell a server error from a missing row
    "reportlatencyforeacherror": "true",
}
JVM_OPTS = ["-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


def table_of(workload: str) -> str:
    return f"ycsb_{workload.lower()}"


def build_dir() -> Path:
    return cluster_mod.cache_root() / "ycsb-hbase-build"


def build(quiet: bool = True) -> Path:
    """Build the binding (once; again only when its sources change) into the cache."""
    return build_module(MODULE, build_dir(), quiet)


def build_module(module: Path, out: Path, quiet: bool = True) -> Path:
    """`mvn package` of a binding module (ycsb-hbase/, ycsb-cassandra/) into `out`, skipped
    while out/<module name>.jar is newer than the pom and every Java source. Returns `out`."""
    jar = out / f"{module.name}.jar"
    sources = [module / "pom.xml", *module.rglob("*.java")]
    if jar.exists() and all(s.stat().st_mtime <= jar.stat().st_mtime for s in sources):
        return out
    cmd = ["mvn", "-B", *(["-q"] if quiet else []), "-f", str(module / "pom.xml"),
           f"-Dycsb.build.dir={out}", "package"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise cluster_mod.ClusterError(f"building {module.name} failed:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return out


def classpath(cluster: Any) -> str:
    out = build()
    home = cluster_mod.home_for(cluster.version)
    return os.pathsep.join([str(cluster.client_conf_dir()), str(out / "ycsb-hbase.jar"),
                            str(out / "lib" / "*"), str(home / "lib" / "*")])


def split_keys(records: int, regions: int) -> list[bytes]:
    """Region boundaries at equal shares of the ordered, zero-padded key space."""
    pad = int(COMMON["zeropadding"])
    return [f"user{(records * i) // regions:0{pad}d}".encode() for i in range(1, regions)]


def create_tables(gateway: Any, records: int, workloads: Iterable[str]) -> None:
    """One table per workload (tenant) with its regions pre-split; existing tables are kept."""
    jvm = gateway.jvm
    hb = jvm.org.apache.hadoop.hbase
    for w in workloads:
        name = hb.TableName.valueOf(table_of(w))
        if gateway.admin.tableExists(name):
            continue
        td = hb.client.TableDescriptorBuilder.newBuilder(name).setColumnFamily(
            hb.client.ColumnFamilyDescriptorBuilder.of(FAMILY)).build()
        splits = split_keys(records, REGIONS[w])
        if splits:
            arr = gateway.gateway.new_array(jvm.byte, len(splits), 0)
            for i, s in enumerate(splits):
                arr[i] = s
            gateway.admin.createTable(td, arr)
        else:
            gateway.admin.createTable(td)


@dataclass
class Result:
    workload: str
    phase: str  # load | run
    seconds: float
    ops: int
    ok: int
    throughput: float  # ops/s as YCSB reports it ([OVERALL] Throughput)
    per_op: dict[str, dict[str, int]] = field(default_factory=dict)  # op -> {status: count}
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (s, current ops/s)
    # from the per-second status lines: (s, operations not OK in that second), and (s, the
    # longest operation in that second, µs): how long operations waited through a fault
    failures: list[tuple[float, int]] = field(default_factory=list)
    max_wait_us: list[tuple[float, int]] = field(default_factory=list)
    # op -> {"avg": …, "p95": …, "p99": …, "max": …} in µs, from YCSB's summary
    latency_us: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def success_fraction(self) -> float:
        return self.ok / self.ops if self.ops else 0.0

    @property
    def failed(self) -> int:
        """Operations that did not return OK (YCSB's ERROR, NOT_FOUND, … and its -FAILED)."""
        return self.ops - self.ok


_STATUS_LINE = re.compile(r"(\d+) sec: (\d+) operations; ([0-9.]+) current ops/sec")
_RETURN = re.compile(r"^\[([A-Z-]+)\], Return=([A-Z_]+), (\d+)$")
_THROUGHPUT = re.compile(r"^\[OVERALL\], Throughput\(ops/sec\), ([0-9.E+-]+)$")
_STATUS_OP = re.compile(r"\[([A-Z_-]+): Count=(\d+), Max=(\d+)")
# YCSB's Status names other than OK (site.ycsb.Status), and its generic -FAILED suffix
_NOT_OK = ("ERROR", "NOT_FOUND", "NOT_IMPLEMENTED", "UNEXPECTED_STATE", "BAD_REQUEST", "FORBIDDEN",
           "SERVICE_UNAVAILABLE", "FAILED")


def split_status(name: str) -> tuple[str, str]:
    """"READ-NOT_FOUND" -> ("READ", "NOT_FOUND"); "READ-MODIFY-WRITE" -> ("READ-MODIFY-WRITE", "OK")."""
    op, _, status = name.rpartition("-")
    return (op, status) if op and status in _NOT_OK else (name, "OK")
_LATENCY = re.compile(r"^\[([A-Z-]+)\], (AverageLatency|95thPercentileLatency|99thPercentileLatency|MaxLatency)"
                      r"\(us\), ([0-9.E+-]+)$")
_LATENCY_KEY = {"AverageLatency": "avg", "95thPercentileLatency": "p95", "99thPercentileLatency": "p99",
                "MaxLatency": "max"}


def parse_output(workload: str, phase: str, stdout: str, stderr: str, seconds: float) -> Result:
    per_op: dict[str, dict[str, int]] = {}
    latency: dict[str, dict[str, float]] = defaultdict(dict)
    throughput = 0.0
    for line in stdout.splitlines():
        if m := _RETURN.match(line.strip()):
            op, status, n = m.group(1), m.group(2), int(m.group(3))
            if split_status(op)[1] != "OK" or op == "CLEANUP":
                continue
            per_op.setdefault(op, {})[status] = per_op.get(op, {}).get(status, 0) + n
        elif m := _THROUGHPUT.match(line.strip()):
            throughput = float(m.group(1))
        elif (m := _LATENCY.match(line.strip())) and m.group(1) != "CLEANUP":
            latency[m.group(1)][_LATENCY_KEY[m.group(2)]] = float(m.group(3))
    ops = sum(sum(s.values()) for s in per_op.values())
    ok = sum(s.get("OK", 0) for s in per_op.values())
    timeline = [(float(m.group(1)), float(m.group(3))) for m in _STATUS_LINE.finditer(stderr)]
    # a status line carries the cumulative operation count and, per operation type, the
    # interval's count and longest latency; failures apart ("READ-NOT_FOUND: Count=…")
    lines = [(m, ln) for ln in stderr.splitlines() if (m := _STATUS_LINE.search(ln))]
    failures: list[tuple[float, int]] = []
    max_wait: list[tuple[float, int]] = []
    interval: dict[str, dict[str, int]] = {}
    for m, ln in lines:
        bad, longest = 0, 0
        for name, n, mx in _STATUS_OP.findall(ln):
            op, status = split_status(name)
            if int(n):
                interval.setdefault(op, {})[status] = interval.get(op, {}).get(status, 0) + int(n)
                longest = max(longest, int(mx))
            if status != "OK":
                bad += int(n)
        failures.append((float(m.group(1)), bad))
        max_wait.append((float(m.group(1)), longest))
    if not per_op and lines:
        # stopped before its summary (SIGTERM): the status lines are all there is
        last = lines[-1][0]
        ops = int(last.group(2))
        ok = ops - sum(n for _, n in failures)
        per_op = interval
        throughput = ops / float(last.group(1)) if float(last.group(1)) else 0.0
    return Result(workload, phase, seconds, ops, ok, throughput, per_op, timeline, latency_us=dict(latency),
                  failures=failures, max_wait_us=max_wait)


def ycsb_command(cluster: Any, workload: str, phase: str, *, records: int, threads: int,
                 seconds: float | None = None, operations: int | None = None,
                 target_ops: float | None = None, insert_start: int = 0,
                 insert_count: int | None = None, status_interval_s: int = 1) -> list[str]:
    props = {**COMMON, **WORKLOADS[workload], "table": table_of(workload), "recordcount": records,
             **cluster.client_settings(), "hbase.client.retries.number": 15,
             "status.interval": status_interval_s}
    if phase == "load":
        props["insertstart"] = insert_start
        props["insertcount"] = insert_count if insert_count is not None else records
    else:
        props["operationcount"] = operations if operations is not None else 10**9
        if seconds is not None:
            props["maxexecutiontime"] = int(seconds)
    return client_command([*JVM_OPTS, *cluster_mod.JDK17_FLAGS], classpath(cluster), BINDING, phase,
                          threads, target_ops, props)


def client_command(java_opts: list[str], cp: str, binding: str, phase: str, threads: int,
                   target_ops: float | None, props: Mapping[str, Any]) -> list[str]:
    """The YCSB client's command line (both bindings, HBase and Cassandra, share it)."""
    cmd = ["java", *java_opts, "-cp", cp, "site.ycsb.Client",
           "-load" if phase == "load" else "-t", "-db", binding, "-threads", str(threads), "-s"]
    if target_ops:
        cmd += ["-target", str(int(target_ops))]
    for k, v in props.items():
        cmd += ["-p", f"{k}={v}"]
    return cmd


def start(cluster: Any, workload: str, phase: str, **kw: Any) -> tuple[subprocess.Popen, float]:
    """Start one YCSB client process (its own JVM); collect it with `finish` or `stop`. Its
    output goes to files (a status line a second would fill a pipe nobody reads meanwhile)."""
    return start_command(ycsb_command(cluster, workload, phase, **kw), Path(cluster.workdir), f"{workload}-{phase}")


def start_command(cmd: list[str], workdir: Path, label: str) -> tuple[subprocess.Popen, float]:
    """Start a YCSB client command in `workdir`, its output in workdir/ycsb/<label>-<ns>.out|.err."""
    logs = workdir / "ycsb"
    logs.mkdir(parents=True, exist_ok=True)
    stem = logs / f"{label}-{time.time_ns()}"
    with open(f"{stem}.out", "w") as out, open(f"{stem}.err", "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=workdir)
    proc.ycsb_stem = stem  # type: ignore[attr-defined]
    return proc, time.monotonic()


def _outputs(proc: subprocess.Popen) -> tuple[str, str]:
    stem = proc.ycsb_stem  # type: ignore[attr-defined]
    return (Path(f"{stem}.out").read_text(errors="replace"), Path(f"{stem}.err").read_text(errors="replace"))


def finish(proc: subprocess.Popen, t0: float, workload: str, phase: str, timeout_s: float = 900) -> Result:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    out, err = _outputs(proc)
    result = parse_output(workload, phase, out, err, time.monotonic() - t0)
    if proc.returncode != 0 and not result.ops:
        raise cluster_mod.ClusterError(f"YCSB {phase} {workload} failed ({proc.returncode}):\n{err[-3000:]}")
    return result


def stop(proc: subprocess.Popen, t0: float, workload: str, phase: str = "run") -> Result:
    """End a running client early (SIGTERM) and read what its status lines counted."""
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=60)
    out, err = _outputs(proc)
    return parse_output(workload, phase, out, err, time.monotonic() - t0)


def run_many(cluster: Any, phase: str, workloads: Iterable[str],
             per_workload: Mapping[str, Mapping[str, Any]] | None = None, **kw: Any) -> dict[str, Result]:
    """Run several workloads at once (one JVM each, like MET's YCSB clients side by side)."""
    started = {w: start(cluster, w, phase, **{**kw, **(per_workload or {}).get(w, {})}) for w in workloads}
    return {w: finish(p, t0, w, phase) for w, (p, t0) in started.items()}


def load(cluster: Any, gateway: Any, records: int, workloads: Iterable[str] = tuple(WORKLOADS),
         threads: int = 2) -> dict[str, Result]:
    workloads = list(workloads)
    create_tables(gateway, records, workloads)
    per = {w: {"insert_count": loaded_records(w, records)} for w in LOADED_SHARE}
    return run_many(cluster, "load", workloads, per, records=records, threads=threads)


def report(results: Mapping[str, Result]) -> str:
    rows = [f"{'workload':8} {'ops/s':>9} {'ops':>8} {'ok %':>8}"]
    for w, r in sorted(results.items()):
        rows.append(f"{w:8} {r.throughput:9.1f} {r.ops:8d} {100 * r.success_fraction:8.3f}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="YCSB (MET §3.1 mix) against the local HBase cluster")
    ap.add_argument("--workdir", default=os.environ.get("METCTL_HBASE_WORKDIR", "out/local-hbase"))
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--workloads", default="A,B,C,D,E,F")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build")
    sub.add_parser("load")
    r = sub.add_parser("run")
    r.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args(argv)
    workloads = [w.strip().upper() for w in args.workloads.split(",") if w.strip()]
    if args.cmd == "build":
        print(build())
        return 0
    sys.path.insert(0, str(ROOT))
    cluster = cluster_mod.LocalHBase(args.workdir)
    if args.cmd == "load":
        from actuator.hbase_gateway import HBaseGateway

        with HBaseGateway(cluster_mod.home_for(cluster.version) / "lib", cluster.client_settings()) as gw:
            results = load(cluster, gw, args.records, workloads, args.threads)
    else:
        results = run_many(cluster, "run", workloads, records=args.records, threads=args.threads,
                           seconds=args.seconds)
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
