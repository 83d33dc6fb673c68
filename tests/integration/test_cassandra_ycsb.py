"""YCSB 0.17 on the shared local Cassandra cluster through the project's binding (ycsb-cassandra/,
the DataStax Java driver 4.x, run by deploy/local_cassandra/ycsb.py): a short workload A (50 %
reads, 50 % updates) at QUORUM loses no operation, and the monitor's per-table rates over the
same window are YCSB's own operation counts."""
from __future__ import annotations

from typing import Any

import pytest

from monitor.cassandra_views import CassandraViewsSource
from monitor.collector import Collector
from monitor.settings import MonitorSettings
from deploy.local_cassandra import ycsb
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration

RECORDS = 1000
OPERATIONS = 2000
RF = 2  # the wrapper's keyspace, as the fixture's: every replica counts each client write


def test_ycsb_workload_a_at_quorum_matches_the_monitor(cassandra_cluster: Any, cassandra_session: Any) -> None:
    """The wrapper refuses a table without YCSB's columns, creates ycsb.usertable (field0 … field9), loads it, runs 2,000 operations of
    workload A at QUORUM with 4 threads: all of them are done, nothing fails, and reads and writes summed over the nodes' system_views,
    divided by RF (at QUORUM with RF 2 both replicas read: data + digest), are YCSB's READ and
    UPDATE counts within 10 %."""
    # the fixture's usertable has field0 only: the wrapper names what it lacks, changes nothing
    with pytest.raises(ycsb.cluster_mod.ClusterError, match=r"metctl_test\.usertable .*'field1'"):
        ycsb.ensure_table(cassandra_session, "metctl_test", "usertable", fields=10)
    loaded = ycsb.load(cassandra_cluster, cassandra_session, RECORDS, "A", threads=2)
    print("\n" + ycsb.summary(loaded))
    assert loaded.failed == 0 and loaded.per_op.get("INSERT", {}).get("OK") == RECORDS, ycsb.summary(loaded)

    table = f"{ycsb.KEYSPACE}.{ycsb.TABLE}"
    src = CassandraViewsSource(cassandra_session)
    nodes = set(cassandra_cluster.contact_points())
    # a table just created may not be listed yet by every node's system_views
    poll(lambda: {p.server for p in src.sample().partitions if p.table == table} == nodes,
         60, f"{table} in every node's system_views", every_s=0.5)
    clock = {"t": 0.0}
    collector = Collector([src], MonitorSettings(smoothing_alpha=0.99))
    src.clock = lambda: clock["t"]
    collector.poll(0.0)
    # a count of operations, not a duration: a client JVM slow to start on a busy machine still
    # does them all (the time bound is only against a hang)
    result = ycsb.run_phase(cassandra_cluster, "A", "run", records=RECORDS, operations=OPERATIONS, seconds=600,
                            threads=4)
    clock["t"] = 10.0  # a fixed interval: rates are counts / 10 s
    collector.poll(10.0)
    print(ycsb.summary(result))

    assert result.failed == 0, ycsb.summary(result)
    reads, updates = result.per_op["READ"]["OK"], result.per_op["UPDATE"]["OK"]
    assert reads > 0 and updates > 0 and reads + updates == OPERATIONS, ycsb.summary(result)
    parts = [p for p in collector.snapshot(10.0).partitions if p.table == table]
    assert {p.node for p in parts} == nodes
    seen_reads = sum(p.reads for p in parts) * 10.0 / RF
    seen_writes = sum(p.writes for p in parts) * 10.0 / RF
    print(f"monitor: {seen_reads:.0f} reads, {seen_writes:.0f} writes; YCSB: {reads} reads, {updates} updates")
    assert seen_reads == pytest.approx(reads, rel=0.10)
    assert seen_writes == pytest.approx(updates, rel=0.10)


def test_the_capacity_demo_accounts_each_nodes_share_and_cost(cassandra_cluster: Any, cassandra_session: Any) -> None:
    """The capacity demo's account of a run (deploy/local_cassandra/demo.py, "does a node add
    capacity?"): over a window of 2,000 YCSB operations at QUORUM, the replica operations it
    counts on the nodes sum to RF x 2,000 (within 10 %), every node served its part, and each
    node's CPU per replica operation is a positive figure; no compaction is left listed once
    the nodes are idle."""
    from deploy.local_cassandra import demo
    from deploy.localproc import cpu

    ycsb.load(cassandra_cluster, cassandra_session, RECORDS, "A", threads=2)
    table = f"{ycsb.KEYSPACE}.{ycsb.TABLE}"
    nodes = set(cassandra_cluster.contact_points())
    src = CassandraViewsSource(cassandra_session)
    poll(lambda: {p.server for p in src.sample().partitions if p.table == table} == nodes,
         60, f"{table} in every node's system_views", every_s=0.5)
    cpu_before, before = cpu.reading(cassandra_cluster), demo.served(cassandra_session)
    result = ycsb.run_phase(cassandra_cluster, "A", "run", records=RECORDS, operations=OPERATIONS, seconds=600,
                            threads=4)
    cpu_after, after = cpu.reading(cassandra_cluster), demo.served(cassandra_session)
    assert result.failed == 0, ycsb.summary(result)
    went = cpu.spent(cpu_before, cpu_after)
    rows = demo.per_node(cassandra_cluster, went, before, after)
    print(rows)
    assert {r["address"] for r in rows.values()} == nodes
    total = sum(r["replica_ops_per_s"] for r in rows.values()) * went["window_s"]
    assert total == pytest.approx(RF * OPERATIONS, rel=0.10)
    assert all(r["replica_ops_per_s"] > 0 and r["cpu_ms_per_replica_op"] > 0 for r in rows.values()), rows
    poll(lambda: not any(v["background_tasks"] for v in demo.served(cassandra_session).values()), 120,
         "no compaction listed on idle nodes", every_s=1)
