#!/usr/bin/env python3
"""YCSB against the local Cassandra cluster: YCSB 0.17's workload generator (`site.ycsb:core`,
Maven Central) drives Cassandra through the project's own binding (`ycsb-cassandra/`, class
site.ycsb.db.metctl.CassandraClient over the DataStax Java driver 4.x; YCSB publishes no
Cassandra binding on Maven Central), built once into the metctl cache.

    python deploy/local_cassandra/ycsb.py --workdir W build
    python deploy/local_cassandra/ycsb.py --workdir W load [--records 1000] [--keyspace ycsb]
    python deploy/local_cassandra/ycsb.py --workdir W run  [--seconds 30] [--workload A] [--threads 4]

W is the LocalCassandra's workdir (deploy/local_cassandra/cluster.py). `load` creates the keyspace
(SimpleStrategy, --replication) and the YCSB table (y_id text PRIMARY KEY, field0 … fieldN-1
text) when missing. Reads and writes are at --consistency (QUORUM by default). Each phase prints
YCSB's own summary: ops/s, operations per type and status, latencies.

The process handling, the build and the parsing of YCSB's output are deploy/localproc/ycsb.py's
(shared with the HBase runner, deploy/local_hbase/ycsb.py, whose workloads A–F these are).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(ROOT))
from deploy.local_cassandra import cluster as cluster_mod  # noqa: E402
from deploy.local_hbase.ycsb import WORKLOADS  # noqa: E402,F401 (A–F as MET §3.1 has them)
from deploy.localproc import ycsb as client  # noqa: E402
from deploy.localproc.ycsb import Result, finish, report, stop  # noqa: E402,F401 (re-exported)

MODULE = ROOT / "ycsb-cassandra"
BINDING = "site.ycsb.db.metctl.CassandraClient"

KEYSPACE = "ycsb"
TABLE = "usertable"
FIELDS = 10  # YCSB's standard table: field0 … field9
COMMON = {
    "workload": "site.ycsb.workloads.CoreWorkload",
    "fieldlength": 100,
    "readallfields": "true",
    "maxscanlength": 10,
    "scanlengthdistribution": "uniform",
}
# The Java driver's JVM is small: a YCSB client next to 2 Cassandra nodes on 2 shared cores.
JVM_OPTS = ["-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]


def build_dir() -> Path:
    return cluster_mod.cache_root() / "ycsb-cassandra-build"


def build(quiet: bool = True) -> Path:
    """Build the binding (once; again only when its sources change) into the cache."""
    return client.build_module(MODULE, build_dir(), quiet)


def classpath() -> str:
    out = build()
    return os.pathsep.join([str(out / "ycsb-cassandra.jar"), str(out / "lib" / "*")])


def ensure_table(session: Any, keyspace: str = KEYSPACE, table: str = TABLE, fields: int = FIELDS,
                 replication: int = 2) -> None:
    """Create the keyspace and the YCSB table when missing. An existing table must have the
    columns YCSB will write: one that lacks some is left alone and named in the error."""
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = "
                    f"{{'class': 'SimpleStrategy', 'replication_factor': {int(replication)}}}")
    cols = ", ".join(f"field{i} text" for i in range(fields))
    session.execute(f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (y_id text PRIMARY KEY, {cols})")
    have = {r.column_name for r in session.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = %s AND table_name = %s",
        (keyspace, table))}
    missing = [f"field{i}" for i in range(fields) if f"field{i}" not in have]
    if "y_id" not in have or missing:
        raise cluster_mod.ClusterError(
            f"table {keyspace}.{table} exists without the YCSB columns {['y_id'] if 'y_id' not in have else []}"
            f"{missing}: drop it, or ask for fewer fields (fieldcount)")


def ycsb_command(cluster: Any, workload: str, phase: str, *, records: int, threads: int = 4,
                 keyspace: str = KEYSPACE, table: str = TABLE, fields: int = FIELDS,
                 consistency: str = "QUORUM", seconds: float | None = None,
                 operations: int | None = None, target_ops: float | None = None,
                 distribution: str = "zipfian", status_interval_s: int = 1) -> list[str]:
    props: dict[str, Any] = {
        **COMMON, **WORKLOADS[workload], "table": table, "recordcount": records, "fieldcount": fields,
        "requestdistribution": distribution,
        "hosts": ",".join(cluster.contact_points()), "port": cluster.native_port,
        "cassandra.keyspace": keyspace,
        "cassandra.readconsistencylevel": consistency, "cassandra.writeconsistencylevel": consistency,
        "status.interval": status_interval_s,
    }
    # CoreWorkload reads operationcount in both phases (zipfian sizes its key space with it)
    props["operationcount"] = operations if operations is not None else (records if phase == "load" else 10**9)
    if phase == "run":
        if seconds is not None:
            props["maxexecutiontime"] = max(1, int(seconds))
    return client.client_command(JVM_OPTS, classpath(), BINDING, phase, threads, target_ops, props)


def start(cluster: Any, workload: str, phase: str, **kw: Any) -> tuple[Any, float]:
    """Start one YCSB client JVM; collect it with `finish` (or end it early with `stop`)."""
    return client.start_command(ycsb_command(cluster, workload, phase, **kw), Path(cluster.workdir),
                                f"cassandra-{workload}-{phase}", client.clients_group(cluster))


def run_phase(cluster: Any, workload: str, phase: str, **kw: Any) -> Any:
    proc, t0 = start(cluster, workload, phase, **kw)
    return finish(proc, t0, workload, phase)


def load(cluster: Any, session: Any, records: int, workload: str = "A", *, keyspace: str = KEYSPACE,
         table: str = TABLE, fields: int = FIELDS, replication: int = 2, **kw: Any) -> Any:
    """Create the table if missing, then YCSB's load phase (inserts user keys 0 … records-1)."""
    ensure_table(session, keyspace, table, fields, replication)
    return run_phase(cluster, workload, "load", records=records, keyspace=keyspace, table=table,
                     fields=fields, **kw)


def summary(r: Any) -> str:
    """YCSB's own figures for one phase: throughput, then per operation: statuses, latencies."""
    rows = [f"{r.phase} {r.workload}: {r.ops} ops in {r.seconds:.1f} s, {r.throughput:.1f} ops/s "
            f"(YCSB), {r.failed} not OK"]
    for op, statuses in sorted(r.per_op.items()):
        lat = r.latency_us.get(op, {})
        lat_s = ", ".join(f"{k} {v / 1000:.2f} ms" for k, v in lat.items())
        rows.append(f"  {op:8} {' '.join(f'{s}={n}' for s, n in sorted(statuses.items()))}  {lat_s}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="YCSB against the local Cassandra cluster")
    ap.add_argument("--workdir", default=os.environ.get("METCTL_CASSANDRA_WORKDIR", "out/local-cassandra"))
    ap.add_argument("--keyspace", default=KEYSPACE)
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("--fields", type=int, default=FIELDS)
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--workload", default="A", choices=sorted(WORKLOADS))
    ap.add_argument("--consistency", default="QUORUM")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build")
    ld = sub.add_parser("load")
    ld.add_argument("--replication", type=int, default=2)
    r = sub.add_parser("run")
    r.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args(argv)
    if a.cmd == "build":
        print(build(quiet=False))
        return 0
    cluster = cluster_mod.LocalCassandra(a.workdir)
    if not cluster.contact_points():
        print(f"local-cassandra: no running node in {cluster.workdir}: start it first (cluster.py start)",
              file=sys.stderr)
        return 2
    common = {"keyspace": a.keyspace, "table": a.table, "fields": a.fields, "threads": a.threads,
              "consistency": a.consistency}
    try:
        if a.cmd == "load":
            from actuator.cassandra import connect

            ccl, session = connect(cluster.contact_points(), cluster.native_port)
            try:
                result = load(cluster, session, a.records, a.workload, replication=a.replication, **common)
            finally:
                ccl.shutdown()
        else:
            result = run_phase(cluster, a.workload, "run", records=a.records, seconds=a.seconds, **common)
    except cluster_mod.ClusterError as e:
        print(f"local-cassandra ycsb: {e}", file=sys.stderr)
        return 1
    print(summary(result))
    return 0 if result.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
