#!/usr/bin/env python3
"""`make demo-cassandra`: metctl's CassandraDriver scales a real local Cassandra 5.0 cluster out
and back in under a QUORUM read/write load, and reports what the clients saw.

1. start 2 nodes (deploy/local_cassandra/cluster.py), keyspace with replication 2, a table;
2. run the QUORUM load (deploy/local_cassandra/load.py: it remembers every acknowledged write, so
   the demo can check none was lost; YCSB through deploy/local_cassandra/ycsb.py is not wired
   in here yet) for --phase-s seconds: "before";
3. add a node: it bootstraps; the driver watches gossip until it is UN, then runs cleanup on the
   others; measure "after join";
4. throttle streaming, decommission that node through the driver, watch it until it LEFT, stop
   its process; measure "after";
5. out/demo-cassandra/report.json (availability during the actions, actions_done, throughput_before,
   throughput_after, join/decommission seconds, peak RSS) and a throughput plot; stop everything.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(ROOT))
from deploy.local_cassandra import cluster as cl_mod  # noqa: E402
from deploy.local_cassandra import load as load_mod  # noqa: E402
from deploy.local_cassandra import ycsb as cassandra_ycsb  # noqa: E402
from deploy.localproc.cgroups import add_quota_arguments, quota_options  # noqa: E402
from deploy.localproc import cpu  # noqa: E402


def wait_for(check: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.5)


def plot(load: Any, marks: dict[str, float], t_start: float, out: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    secs = sorted(s for s in load.timeline if s >= int(t_start))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([s - t_start for s in secs], [load.timeline[s][0] for s in secs], label="QUORUM ops ok / s")
    ax.plot([s - t_start for s in secs], [load.timeline[s][1] for s in secs], label="failed / s", color="red")
    for name, t in marks.items():
        ax.axvline(t - t_start, color="grey", linestyle=":")
        ax.text(t - t_start, ax.get_ylim()[1] * 0.95, name, rotation=90, fontsize=7, va="top")
    ax.set_xlabel("seconds")
    ax.set_ylabel("operations per second")
    ax.legend(loc="lower right")
    fig.tight_layout()
    path = out / "throughput.png"
    fig.savefig(path)
    plt.close(fig)
    return str(path)


SKIP_S = 10.0  # a YCSB client's first seconds: its JVM starting, not the cluster


def served(session: Any) -> dict[str, Any]:
    """Per node (by address): the replica reads and writes of the YCSB table it has served so
    far (system_views, node-local counters: a QUORUM operation at RF 2 is two replica
    operations) and the compactions and cleanups running on it now (sstable_tasks)."""
    from cassandra.query import SimpleStatement

    from monitor.cassandra_views import CassandraViewsSource

    views = CassandraViewsSource(session, keyspaces=[cassandra_ycsb.KEYSPACE])
    out: dict[str, Any] = {}
    for host in session.cluster.metadata.all_hosts():
        if host.is_up is False:
            continue
        parts = views.sample_host(host)
        tasks = session.execute(SimpleStatement("SELECT keyspace_name, table_name, kind FROM "
                                                "system_views.sstable_tasks"), timeout=5, host=host)
        out[host.address] = {"replica_ops": sum(p.reads + p.writes for p in parts),
                             "background_tasks": sorted(f"{t.kind} {t.keyspace_name}.{t.table_name}" for t in tasks)}
    return out


def per_node(cluster: Any, went: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Each node's replica operations per second over the window and the CPU each cost it:
    does a joined node take its share, and does a node do more work per operation than before?"""
    rows = {}
    for n in cluster.nodes():
        b, e = before.get(n.address), after.get(n.address)
        if b is None or e is None:
            continue
        rate = (e["replica_ops"] - b["replica_ops"]) / max(went["window_s"], 1e-9)
        cores = went["cores"].get(n.name)
        rows[n.name] = {"address": n.address, "replica_ops_per_s": round(rate, 1),
                        "cpu_ms_per_replica_op": round(cores * 1000 / rate, 3) if cores and rate > 0 else None,
                        "background_tasks": e["background_tasks"]}
    return rows


def saturated(cluster: Any, session: Any, a: argparse.Namespace) -> dict[str, Any]:
    """YCSB A (50/50 read/update at QUORUM, uniform keys) closed loop with many threads for
    --ycsb-s: the cluster's throughput now, with its spread over the 10-s status intervals, and
    where the CPU went meanwhile (which process ran at its cap, and whether the machine's cores
    ran out before the nodes' slices did)."""
    proc, t0 = cassandra_ycsb.start(cluster, "A", "run", records=a.ycsb_records, seconds=a.ycsb_s,
                                    threads=a.ycsb_threads, distribution="uniform", status_interval_s=10)

    def until(t: float) -> None:
        while time.monotonic() - t0 < t and proc.poll() is None:
            time.sleep(0.2)

    until(SKIP_S)
    before = cpu.reading(cluster, {"ycsb": proc.pid, "probe": os.getpid()})
    served_before = served(session)
    until(a.ycsb_s - 1)
    after = cpu.reading(cluster, {"ycsb": proc.pid, "probe": os.getpid()})
    served_after = served(session)
    went = cpu.spent(before, after)  # the probe: the QUORUM loop in this process
    r = cassandra_ycsb.finish(proc, t0, "A", "run")
    rates = [rate for t, rate in r.timeline if t > SKIP_S]
    p99 = [lat["p99"] / 1000 for lat in r.latency_us.values() if "p99" in lat]
    return {"nodes": len(cluster.contact_points()),
            "ops_per_s": round(statistics.mean(rates), 1) if rates else round(r.throughput, 1),
            "interval_ops_per_s": {"min": round(min(rates), 1), "median": round(statistics.median(rates), 1),
                                   "max": round(max(rates), 1)} if rates else None,
            "p99_ms": round(max(p99), 1) if p99 else None, "failed": r.failed,
            "cpu": went, "per_node": per_node(cluster, went, served_before, served_after)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="out/demo-cassandra")
    add_quota_arguments(ap)
    ap.add_argument("--phase-s", type=float, default=20.0)
    ap.add_argument("--nodes", type=int, default=2, help="nodes before the join (RF 2 whatever the count)")
    ap.add_argument("--ycsb-s", type=float, default=0.0,
                    help="also measure capacity: YCSB at saturation for this long before the join, after "
                         "it and after the decommission (0: off)")
    ap.add_argument("--ycsb-threads", type=int, default=48)
    ap.add_argument("--ycsb-records", type=int, default=20_000)
    ap.add_argument("--stream-mib", type=float, default=16.0)
    a = ap.parse_args(argv)
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    from actuator.cassandra import CassandraDriver, LocalNodeTool, connect

    cluster = cl_mod.LocalCassandra(out / "cluster", **quota_options(a))
    marks: dict[str, float] = {}
    actions: list[dict[str, Any]] = []
    peak: dict[str, float] = {}
    t_ready0 = time.monotonic()
    cluster.start(nodes=a.nodes)
    ready_s = time.monotonic() - t_ready0
    ccl = None
    try:
        ccl, session = connect(cluster.contact_points(), cluster.native_port)
        for ks in ("system_distributed", "system_traces"):
            session.execute(f"ALTER KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 2}}")
        session.execute("CREATE KEYSPACE IF NOT EXISTS demo WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        session.execute("CREATE TABLE IF NOT EXISTS demo.usertable (y_id text PRIMARY KEY, field0 text)")
        driver = CassandraDriver(session, LocalNodeTool(cluster))
        load = load_mod.QuorumLoad(session, "demo.usertable")
        load.run_ops(writes=1000, reads=0)  # some data to stream
        capacity: dict[str, Any] = {}
        if a.ycsb_s:
            cassandra_ycsb.load(cluster, session, a.ycsb_records, "A", threads=8)
        t_start = time.time()
        # beside a capacity measurement the probe is light (it only checks availability and
        # that no acknowledged write is lost); alone it is the load
        load.start(pause_s=0.05 if a.ycsb_s else 0.0)

        def measure(label: str) -> None:
            if a.ycsb_s:
                capacity[label] = saturated(cluster, session, a)

        def sample_rss() -> None:
            for k, v in cluster.rss_mb().items():
                peak[k] = max(peak.get(k, 0.0), v)

        def states() -> dict[str, str]:
            sample_rss()
            return {s.id: s.state for s in driver.servers()}

        time.sleep(a.phase_s)
        # the first saturated run warms the JVMs (C1 compiles, caches fill): on 2026-11-26 and
        # -27 each run of the same 3 nodes served more than the one before, so "before" is the
        # second
        measure("warm_up")
        measure("before")
        marks["join"] = time.time()
        node = cluster.add_node(wait=False)
        t0 = time.monotonic()
        wait_for(lambda: states().get(node.address) == "active", 300, f"{node.address} to join")
        join_s = time.monotonic() - t0
        actions.append({"action": "add_node", "server": node.address, "seconds": round(join_s, 1)})
        driver.cleanup_all(except_server=node.address)
        wait_for(lambda: all(driver.op_result(s, "cleanup") is not None for s in cluster.contact_points()
                             if s != node.address), 300, "cleanup")
        actions.append({"action": "cleanup", "servers": [s for s in cluster.contact_points() if s != node.address]})
        marks["joined"] = time.time()
        if a.ycsb_s:  # capacity, not the join's aftermath: wait for its compactions to end
            t_settle = time.monotonic()
            wait_for(lambda: not any(v["background_tasks"] for v in served(session).values()), 600,
                     "the compactions after the join to end")
            actions.append({"action": "settle", "seconds": round(time.monotonic() - t_settle, 1)})
        time.sleep(a.phase_s)
        measure("after_join")
        driver.set_stream_throughput(a.stream_mib)
        marks["decommission"] = time.time()
        t1 = time.monotonic()
        driver.decommission(node.address)
        wait_for(lambda: node.address not in states(), 300, f"{node.address} to leave")
        leave_s = time.monotonic() - t1
        cluster.stop_node(node.name)
        actions.append({"action": "decommission", "server": node.address, "seconds": round(leave_s, 1),
                        "stream_throughput_mib_s": a.stream_mib})
        marks["left"] = time.time()
        time.sleep(a.phase_s)
        measure("after_decommission")
        t_end = time.time()
        load.stop()
        bad = load.verify()

        def tput(t0: float, t1: float) -> float:
            ok, _ = load.window(t0, t1)
            return round(ok / max(1.0, t1 - t0), 1)
        during_ok, during_failed = 0, 0
        for lo, hi in ((marks["join"], marks["joined"]), (marks["decommission"], marks["left"])):
            o, f = load.window(int(lo), int(hi) + 1)
            during_ok, during_failed = during_ok + o, during_failed + f
        report = {
            "cluster": {"nodes_before": a.nodes, "nodes_peak": a.nodes + 1, "replication": 2,
                        "consistency": "QUORUM", "version": cluster.version, "start_to_ready_s": round(ready_s, 1),
                        "slices": {k: v.to_dict() for k, v in cluster.slices().items()}},
            "capacity_ycsb": capacity,
            "load": "python cassandra-driver QUORUM loop, 1 write + 1 read per iteration (not YCSB)",
            "actions_done": actions,
            "availability": (during_ok / (during_ok + during_failed)) if during_ok + during_failed else None,
            "availability_whole_run": load.availability,
            "operations": {"ok": load.ok_writes + load.ok_reads, "failed": load.failed,
                           "acknowledged_writes_lost": len(bad), "lost_keys": bad[:20]},
            "throughput_before": tput(t_start + 2, marks["join"]),
            "throughput_during_join": tput(marks["join"], marks["joined"]),
            "throughput_after_join": tput(marks["joined"] + 1, marks["decommission"]),
            "throughput_during_decommission": tput(marks["decommission"], marks["left"]),
            "throughput_after": tput(marks["left"] + 1, t_end - 1),
            "join_s": round(join_s, 1),
            "decommission_s": round(leave_s, 1),
            "peak_rss_mb": {k: round(v) for k, v in peak.items()},
            "errors": load.errors[:10],
        }
        report["plots"] = [plot(load, marks, t_start, out)]
        (out / "report.json").write_text(json.dumps(report, indent=2))
        print(json.dumps({k: report[k] for k in ("availability", "throughput_before", "throughput_after",
                                                 "join_s", "decommission_s", "peak_rss_mb", "capacity_ycsb")}))
        print(f"report: {out / 'report.json'}")
        return 0 if not bad else 1
    finally:
        if ccl is not None:
            ccl.shutdown()
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
