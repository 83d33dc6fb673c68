"""The monitor on the live cluster: HBaseJmxSource polls each RegionServer's /jmx (with the
HBase driver for locality and size) while YCSB tenants run, and the Collector's snapshot shows
per-region rates that match what each tenant does — reads on C's regions, writes on B's, scans
on E's — with the hotspot region of C the busiest."""
from __future__ import annotations

import time

import pytest

from monitor.collector import Collector
from monitor.hbase_jmx import HBaseJmxSource
from monitor.settings import MonitorSettings
from tests.fixtures.hbase import YCSB_RECORDS, spread_regions

pytestmark = pytest.mark.integration


def test_the_monitor_sees_each_tenants_real_per_region_rates(hbase_cluster, hbase_driver, hbase_gateway, ycsb):
    spread_regions(hbase_driver)  # an empty RegionServer has no per-region bean to read
    urls = tuple(p.info_url for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name))
    settings = MonitorSettings(hbase_jmx_urls=urls, min_fresh_fraction=0.0)
    source = HBaseJmxSource(settings, admin=hbase_driver)
    collector = Collector([source], settings)
    # the tenants run until stopped; the window the monitor watches starts at their first
    # operations (a client JVM can take longer than a short fixed run to start on a busy machine)
    started = {w: ycsb.start(hbase_cluster, w, "run", records=YCSB_RECORDS,
                             threads=1, seconds=600) for w in ("B", "C", "E")}
    try:
        ycsb.wait_for_operations({w: p for w, (p, _) in started.items()}, timeout_s=300)
        collector.poll(time.time())
        for _ in range(4):
            time.sleep(3)
            collector.poll(time.time())
        latency = source.sample().server_latency_ms  # read while the tenants still run
    finally:
        results = {w: ycsb.stop(p, t0, w, "run") for w, (p, t0) in started.items()}
    assert all(r.ops > 0 for r in results.values()), ycsb.report(results)
    snap = collector.snapshot(time.time())

    assert {n.id for n in snap.nodes} == {s.id for s in hbase_driver.servers()}
    by_table: dict[str, list] = {}
    for p in snap.partitions:
        by_table.setdefault(p.table, []).append(p)
    located = {p.id: p.server for p in hbase_driver.partitions()}
    for table, parts in by_table.items():
        assert all(p.node == located[p.id] for p in parts), table
    c, b, e = by_table["ycsb_c"], by_table["ycsb_b"], by_table["ycsb_e"]
    assert len(c) == len(b) == len(e) == 4
    assert all(p.reads > 0 and p.writes == 0 and p.scans == 0 for p in c)
    assert all(p.writes > 0 and p.reads == 0 for p in b)
    assert all(p.scans > 0 and p.scans > p.reads for p in e)
    # the hotspot: C's first region (keys 0..24 %) serves the most reads
    first = {str(ri.getEncodedName()) for ri in hbase_gateway.admin.getRegions(
        hbase_gateway.jvm.org.apache.hadoop.hbase.TableName.valueOf("ycsb_c")) if len(ri.getStartKey()) == 0}
    hottest = max(c, key=lambda p: p.reads)
    assert hottest.id in first
    # size and locality came from the admin API (local filesystem: everything is local)
    assert all(0.0 <= p.locality <= 1.0 and p.size_mb >= 0 for p in snap.partitions)
    # every RegionServer reports its mean call time (sub=IPC TotalCallTime_mean, ms)
    assert set(latency) == {s.id for s in hbase_driver.servers()}, latency
    assert all(0.0 <= ms < 10_000 for ms in latency.values()), latency
    print("reads/s on ycsb_c regions:", sorted(round(p.reads, 1) for p in c), "call ms:", latency)


def test_each_regionserver_reports_its_own_jvm_cpu_memory_and_io_wait(hbase_cluster, hbase_driver):
    from monitor.jvm_cpu import JvmSystemSource

    urls = tuple(p.info_url for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name))
    source = JvmSystemSource(urls)
    first = source.sample()
    time.sleep(1.5)
    second = source.sample()
    assert not first.errors and not second.errors, (first.errors, second.errors)
    assert {h.host for h in second.hosts} == {s.id for s in hbase_driver.servers()}
    for h in second.hosts:
        assert h.cpu is not None and 0.0 <= h.cpu <= 1.0
        assert h.memory is not None and 0.0 < h.memory < 1.0
        assert h.io_wait is not None and 0.0 <= h.io_wait <= 1.0  # same machine: its PID is visible
    assert all(h.io_wait is None for h in first.hosts)  # one sample is not a rate


def test_a_regionserver_that_does_not_answer_is_an_error_not_a_number():
    from monitor.jvm_cpu import JvmSystemSource
    from monitor.settings import HttpSettings

    sample = JvmSystemSource(["http://127.0.0.1:1"],
                             http=HttpSettings(connect_timeout_s=1, read_timeout_s=1)).sample()
    assert sample.hosts == () and len(sample.errors) == 1 and "127.0.0.1:1" in sample.errors[0]
