#!/usr/bin/env python3
"""YCSB against the local HBase cluster: MET §3.1's multi-tenant mix, scaled to this machine.

YCSB's workload generator (`site.ycsb:core:0.17.0`, Maven Central) drives HBase through the
project's own binding (`ycsb-hbase/`, class site.ycsb.db.metctl.HBase2Client), built once into
the metctl cache. Each workload (A–F) is one tenant with its own table: 4 equal regions (D: 1),
keys inserted in order (zero-padded) and drawn from YCSB's hotspot distribution with 50 % of the
operations on 40 % of the keys — so, as in MET, one region per table is the hotspot (~31 % of its
requests), one intermediate (~27 %), two cooler (~21 % each).

    python deploy/local_hbase/ycsb.py --workdir W load [--records 2000]
    python deploy/local_hbase/ycsb.py --workdir W run  [--seconds 30] [--workloads A,C,E]

Each run prints ops/s and the fraction of operations that succeeded, per workload.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(ROOT))
from deploy.local_hbase import cluster as cluster_mod  # noqa: E402
from deploy.localproc.ycsb import (  # noqa: E402,F401 (Result, parse_output, stop, …: re-exported)
    Result, build_module, client_command, clients_group, finish, operations_so_far, outputs, parse_output,
    report, split_status, start_command, stop, wait_for_operations,
)

MODULE = ROOT / "ycsb-hbase"
BINDING = "site.ycsb.db.metctl.HBase2Client"
FAMILY = "family"

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


def classpath(cluster: Any) -> str:
    out = build()
    home = cluster_mod.home_for(cluster.version)
    return os.pathsep.join([str(cluster.client_conf_dir()), str(out / "ycsb-hbase.jar"),
                            str(out / "lib" / "*"), str(home / "lib" / "*")])


def split_keys(records: int, regions: int) -> list[bytes]:
    """Region boundaries at equal shares of the ordered, zero-padded key space."""
    pad = int(COMMON["zeropadding"])
    return [f"user{(records * i) // regions:0{pad}d}".encode() for i in range(1, regions)]


def create_tables(gateway: Any, records: int, workloads: Iterable[str],
                  regions: Mapping[str, int] | None = None) -> None:
    """One table per workload (tenant) with its regions pre-split (REGIONS, or `regions`);
    existing tables are kept."""
    jvm = gateway.jvm
    hb = jvm.org.apache.hadoop.hbase
    for w in workloads:
        name = hb.TableName.valueOf(table_of(w))
        if gateway.admin.tableExists(name):
            continue
        td = hb.client.TableDescriptorBuilder.newBuilder(name).setColumnFamily(
            hb.client.ColumnFamilyDescriptorBuilder.of(FAMILY)).build()
        splits = split_keys(records, (regions or REGIONS)[w])
        if splits:
            arr = gateway.gateway.new_array(jvm.byte, len(splits), 0)
            for i, s in enumerate(splits):
                arr[i] = s
            gateway.admin.createTable(td, arr)
        else:
            gateway.admin.createTable(td)


def ycsb_command(cluster: Any, workload: str, phase: str, *, records: int, threads: int,
                 seconds: float | None = None, operations: int | None = None,
                 target_ops: float | None = None, insert_start: int = 0,
                 insert_count: int | None = None, status_interval_s: int = 1,
                 extra: Mapping[str, Any] | None = None) -> list[str]:
    """`extra`: YCSB properties over the mix's (e.g. requestdistribution=uniform)."""
    props = {**COMMON, **WORKLOADS[workload], "table": table_of(workload), "recordcount": records,
             **cluster.client_settings(), "hbase.client.retries.number": 15,
             "status.interval": status_interval_s, **(extra or {})}
    if phase == "load":
        props["insertstart"] = insert_start
        props["insertcount"] = insert_count if insert_count is not None else records
    else:
        props["operationcount"] = operations if operations is not None else 10**9
        if seconds is not None:
            props["maxexecutiontime"] = int(seconds)
    return client_command([*JVM_OPTS, *cluster_mod.JDK17_FLAGS], classpath(cluster), BINDING, phase,
                          threads, target_ops, props)


def start(cluster: Any, workload: str, phase: str, **kw: Any) -> tuple[subprocess.Popen, float]:
    """Start one YCSB client process (its own JVM); collect it with `finish` or `stop`. Its
    output goes to files (a status line a second would fill a pipe nobody reads meanwhile)."""
    return start_command(ycsb_command(cluster, workload, phase, **kw), Path(cluster.workdir), f"{workload}-{phase}",
                         clients_group(cluster))


def run_many(cluster: Any, phase: str, workloads: Iterable[str],
             per_workload: Mapping[str, Mapping[str, Any]] | None = None, **kw: Any) -> dict[str, Result]:
    """Run several workloads at once (one JVM each, like MET's YCSB clients side by side)."""
    started = {w: start(cluster, w, phase, **{**kw, **(per_workload or {}).get(w, {})}) for w in workloads}
    return {w: finish(p, t0, w, phase) for w, (p, t0) in started.items()}


def load(cluster: Any, gateway: Any, records: int, workloads: Iterable[str] = tuple(WORKLOADS),
         threads: int = 2, regions: Mapping[str, int] | None = None) -> dict[str, Result]:
    workloads = list(workloads)
    create_tables(gateway, records, workloads, regions)
    per = {w: {"insert_count": loaded_records(w, records)} for w in LOADED_SHARE}
    return run_many(cluster, "load", workloads, per, records=records, threads=threads)


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
