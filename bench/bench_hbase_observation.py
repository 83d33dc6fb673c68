"""What one executor tick's observation costs on a real HBase cluster: HBaseDriver.servers() and
partitions() (docs/executor.md: a tick observes, then only starts operations), timed as a whole
and by part, so a slow tick can be put down to the call that makes it slow.

Parts timed, each `--rounds` times, through one py4j gateway like metctl's:
  cluster_metrics_all      Admin.getClusterMetrics() (every option: what servers() asks for)
  cluster_metrics_live     Admin.getClusterMetrics(LIVE_SERVERS) (what servers() needs)
  decommissioned           Admin.listDecommissionedRegionServers()
  region_servers           Admin.getRegionServers()
  list_tables              Admin.listTableNames()
  locations_per_table      RegionLocator.getAllRegionLocations() once per user table
  partitions_per_table     the region listing as the driver did it before it read hbase:meta
                           in one scan: one RegionLocator per table, each region decoded
  servers / partitions     the driver's calls as metctl makes them
  tick_observation         servers() + partitions(), what one executor tick observes

The parts are timed round-robin (one call of each per round) so a change in the machine's load
weighs on all of them alike.

Against a running local cluster (deploy/local_hbase/cluster.py --workdir W start, or the one of
a chaos run: OUT/hbase), or, without --workdir (as `make bench` runs it), a cluster of its own:
2 RegionServers and two tables of 12 regions each (out/bench-hbase-observation/; ~2 minutes,
most of it the cluster starting), stopped at the end:

    .venv/bin/python bench/bench_hbase_observation.py [--workdir out/chaos-hbase/hbase] [--rounds 40]

Prints median and p95 per part in ms, and the machine's load average.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _cluster_module() -> Any:
    from deploy.local_hbase import cluster

    return cluster


def timed(parts: dict[str, Callable[[], Any]], rounds: int) -> dict[str, dict[str, float]]:
    ms: dict[str, list[float]] = {name: [] for name in parts}
    for _ in range(rounds):
        for name, fn in parts.items():
            t = time.perf_counter()
            fn()
            ms[name].append((time.perf_counter() - t) * 1000)
    out = {}
    for name, xs in ms.items():
        xs.sort()
        out[name] = {"p50": round(xs[len(xs) // 2], 1), "p95": round(xs[min(len(xs) - 1, int(len(xs) * 0.95))], 1),
                     "max": round(xs[-1], 1)}
    return out


def per_table_listing(driver: Any, conn: Any) -> dict[str, tuple[str, str | None]]:
    """The region listing as HBaseDriver.region_locations did it before (commit 4fe7d56)."""
    from actuator.hbase import server_id_of

    live = set(driver._server_names())
    out: dict[str, tuple[str, str | None]] = {}
    for t in driver._user_tables():
        for loc in conn.getRegionLocator(t).getAllRegionLocations():
            ri = loc.getRegion()
            if ri.isSplitParent():
                continue
            sn = loc.getServerName()
            sid = server_id_of(sn) if sn is not None else None
            out[str(ri.getEncodedName())] = (t.getNameAsString(), sid if sid in live else None)
    return out


def observe(workdir: Path, rounds: int) -> dict[str, Any]:
    """Every part's timings on the running cluster of `workdir`."""
    from actuator.hbase import HBaseDriver
    from actuator.hbase_gateway import HBaseGateway, default_client_jars_dir

    cluster = _cluster_module().LocalHBase(workdir)
    with HBaseGateway(default_client_jars_dir(), cluster.client_settings()) as gw:
        driver = HBaseDriver(gw, host_format="{host}:{port}")
        admin, conn = gw.admin, gw.connection
        opt = gw.jvm.org.apache.hadoop.hbase.ClusterMetrics.Option
        live = gw.jvm.java.util.EnumSet.of(opt.LIVE_SERVERS)
        tables = driver._user_tables()
        driver.servers(), driver.partitions()  # warm: the driver caches each server's profile
        parts = {
            "cluster_metrics_all": lambda: admin.getClusterMetrics(),
            "cluster_metrics_live": lambda: admin.getClusterMetrics(live),
            "decommissioned": lambda: admin.listDecommissionedRegionServers(),
            "region_servers": lambda: admin.getRegionServers(),
            "list_tables": lambda: admin.listTableNames(),
            "locations_per_table": lambda: [conn.getRegionLocator(t).getAllRegionLocations() for t in tables],
            "partitions_per_table": lambda: per_table_listing(driver, conn),
            "servers": driver.servers,
            "partitions": driver.partitions,
            "tick_observation": lambda: (driver.servers(), driver.partitions()),
        }
        if per_table_listing(driver, conn) != driver.region_locations():
            print("bench_hbase_observation: the two listings differ (a region moved meanwhile?)",
                  file=sys.stderr)
        out: dict[str, Any] = timed(parts, rounds)
        out["regions"] = len(driver.partitions())
        out["user_tables"] = len(tables)
        out["load_avg_1_5_15"] = os.getloadavg()
        driver.close()
    return out


def observe_own_cluster(workdir: Path, rounds: int) -> dict[str, Any]:
    """observe() on a cluster started for it (2 RegionServers, tables of 12 regions), stopped
    whatever happens."""
    from actuator.hbase_gateway import HBaseGateway, default_client_jars_dir
    from deploy.local_hbase import ycsb

    cluster = _cluster_module().LocalHBase(workdir, rs_heap_mb=384, session_timeout_ms=40_000)
    try:
        cluster.start(rs=2, timeout_s=600)
        with HBaseGateway(default_client_jars_dir(), cluster.client_settings()) as gw:
            ycsb.create_tables(gw, 12_000, ["A", "C"], regions={"A": 12, "C": 12})
        return observe(workdir, rounds)
    finally:
        cluster.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", help="a running local cluster's workdir (its cluster.json); "
                    "without it the bench starts and stops a cluster of its own")
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args(argv)
    if args.workdir is None:
        out = observe_own_cluster(ROOT / "out" / "bench-hbase-observation", args.rounds)
    elif not (Path(args.workdir) / "cluster.json").exists():
        print(f"bench_hbase_observation: no cluster.json in {args.workdir}: start a cluster first",
              file=sys.stderr)
        return 2
    else:
        out = observe(Path(args.workdir), args.rounds)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
