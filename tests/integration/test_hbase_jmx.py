"""monitor/hbase_jmx.py on the session's real RegionServers (the recorded-answer tests are
tests/monitor/test_hbase_jmx.py): per-region counters become rates, the admin API gives
locality, and each RegionServer reports its own process CPU."""
from __future__ import annotations

import time

import pytest

from monitor.collector import Collector
from monitor.hbase_jmx import HBaseJmxSource
from monitor.settings import MonitorSettings
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration


def settings(*urls, **kw):
    return MonitorSettings(hbase_jmx_urls=tuple(urls), **kw)


def every_server_listed(src, expected):
    """The first sample that lists every server in `expected`, waited for (bounded): a
    RegionServer an earlier test restarted answers /jmx before it registers its Server and
    Regions beans ("not a RegionServer?"), and HBase takes its metrics beans out of /jmx for a
    moment after regions open or close (its JmxCacheBuster restarts the metrics system)."""
    def listed():
        sample = src.sample()
        return sample if set(sample.servers) == expected else None

    return poll(listed, 60, "every running RegionServer's beans in /jmx", 1.0)


def _user_counters(sample):
    return {p.id: p for p in sample.partitions if p.table == "usertable"}


def test_real_regionservers_counters_rates_and_admin_locality(hbase_cluster, hbase_table, hbase_driver):
    urls = [p.info_url for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name)]
    cfg = settings(*urls)
    src = HBaseJmxSource(cfg, admin=hbase_driver)
    expected = {p.server_id for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name)}

    first = every_server_listed(src, expected)
    assert not [e for e in first.errors if "request failed" in e or "not JSON" in e], first.errors
    where = {loc.id: loc.server for loc in hbase_driver.partitions() if loc.table == "usertable"}
    seen = _user_counters(first)
    assert set(where) <= set(seen)
    assert all(seen[r].server == where[r] for r in where)
    assert all(p.locality is not None and 0 <= p.locality <= 1 for p in seen.values())

    c = Collector([src], cfg)
    c.poll(0.0)
    # Gets, then a poll, until the collector rates them. RegionServers refresh their /jmx
    # metrics periodically (wait, bounded, until the gets show), and HBase takes its beans out
    # of /jmx for a moment after regions open or close (an earlier test's moves): a poll that
    # falls in that moment rates nothing, so the round is tried again.
    deadline = time.monotonic() + 120
    t, gets, busy = 0.0, 60, []
    while not busy:
        assert time.monotonic() < deadline, "the collector never rated the gets"
        before = sum(p.reads for p in _user_counters(src.sample()).values())
        for i in range(gets):
            hbase_table.get(f"user{5000 + i:04d}")
        while sum(p.reads for p in _user_counters(src.sample()).values()) < before + gets:
            assert time.monotonic() < deadline, "gets never showed in /jmx getCount"
            time.sleep(1.0)
        t += 1.0
        c.poll(t)
        snap = c.snapshot(t)
        busy = [p for p in snap.partitions if p.table == "usertable" and p.reads > 0]
    assert all(p.writes >= 0 and p.scans >= 0 for p in snap.partitions)
    assert {p.node for p in snap.partitions} <= {n.id for n in snap.nodes}


def test_real_regionservers_report_their_own_process_cpu(hbase_cluster, hbase_table):
    """On the real local cluster (every RegionServer on 127.0.0.1): one process sample per
    server, a 0..1 fraction, and it rises on the server doing the work."""
    live = [p for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name)]
    src = HBaseJmxSource(settings(*[p.info_url for p in live]))
    expected = {p.server_id for p in live}
    sample = every_server_listed(src, expected)
    assert len(live) >= 2
    got = {h.host: h for h in sample.hosts}
    assert set(got) == set(sample.servers) == expected
    assert all(h.scope == "process" for h in got.values())
    # ProcessCpuLoad is the load since the JVM's previous reading: the first may be unknown
    # (None, reported with why); a later one is a number in 0..1.
    deadline = time.monotonic() + 30
    while True:
        for i in range(200):
            hbase_table.get(f"user{(i * 10) % 10000:04d}")
        cpus = [h.cpu for h in src.sample().hosts]
        if len(cpus) == len(expected) and all(c is not None for c in cpus):
            break
        assert time.monotonic() < deadline, "ProcessCpuLoad never became a number"
        time.sleep(1.0)
    assert all(0.0 <= c <= 1.0 for c in cpus)
    assert any(c > 0.0 for c in cpus)
