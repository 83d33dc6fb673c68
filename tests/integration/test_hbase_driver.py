"""HBaseDriver against a real local HBase 2.6 cluster (tests/fixtures/hbase.py): listing,
moves confirmed by the master, per-region metrics, major compaction, splits, the balancer
switch."""
from __future__ import annotations

import time

import pytest

from actuator.drivers import DataStoreDriver, DriverError
from actuator.hbase import HBaseDriver
from tests.fixtures.hbase import TestTable
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration


def region_of(table, key: str) -> str:
    """Encoded name of the region holding `key`, as HBase's own client locates it."""
    locator = table.gateway.connection.getRegionLocator(table.table_name)
    return str(locator.getRegionLocation(key.encode(), True).getRegion().getEncodedName())


def wait_for(check, timeout_s: float = 30.0, what: str = "the condition"):
    return poll(check, timeout_s, what, every_s=0.3)


def located(driver, region: str) -> str | None:
    return next(p.server for p in driver.partitions() if p.id == region)


def moved(driver, region: str, target: str) -> None:
    """Start a move, then observe it land (the driver returns at once)."""
    driver.move_partition(region, target)
    wait_for(lambda: located(driver, region) == target, 60, f"{region} on {target}")


def test_the_driver_is_a_data_store_driver(hbase_driver):
    assert isinstance(hbase_driver, DataStoreDriver)


def test_servers_are_the_region_servers_the_master_counts_live(hbase_cluster, hbase_driver):
    servers = hbase_driver.servers()
    assert {s.id for s in servers} == hbase_cluster.live_server_ids()
    running = {p.server_id for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name)}
    assert {s.id for s in servers} == running
    assert all(s.state == "active" for s in servers)


def test_partitions_are_every_user_region_on_a_live_server(hbase_driver, hbase_table, hbase_gateway):
    parts = hbase_driver.partitions()
    mine = [p for p in parts if p.table == "usertable"]
    from_java = {str(ri.getEncodedName()) for ri in hbase_gateway.admin.getRegions(hbase_table.table_name)}
    assert {p.id for p in mine} == from_java
    assert len(mine) == 6
    live = {s.id for s in hbase_driver.servers()}
    assert all(p.server in live for p in parts)
    assert not [p for p in parts if p.table.startswith("hbase:")], "system regions must never be listed"


def test_a_move_is_confirmed_where_hbase_locates_the_region(hbase_driver, hbase_table):
    region = region_of(hbase_table, "user5000")
    source = next(p.server for p in hbase_driver.partitions() if p.id == region)
    target = next(s.id for s in hbase_driver.servers() if s.id != source)
    t0 = time.monotonic()
    hbase_driver.move_partition(region, target)
    print(f"move_partition returned in {time.monotonic() - t0:.3f} s")
    wait_for(lambda: located(hbase_driver, region) == target, 60, f"{region} on {target}")
    print(f"move latency {time.monotonic() - t0:.2f} s")
    locator = hbase_table.gateway.connection.getRegionLocator(hbase_table.table_name)
    loc = locator.getRegionLocation(b"user5000", True).getServerName()
    assert f"{loc.getHostname()},{loc.getPort()}" == target
    assert hbase_table.get("user5000") == b"x" * 100
    # moving it where it already is does nothing
    hbase_driver.move_partition(region, target)
    assert located(hbase_driver, region) == target
    moved(hbase_driver, region, source)


def test_a_move_to_a_server_that_is_not_live_fails(hbase_driver, hbase_table):
    region = region_of(hbase_table, "user1000")
    with pytest.raises(DriverError, match="not live"):
        hbase_driver.move_partition(region, "localhost,1")


def test_an_unknown_region_is_refused_for_good(hbase_driver):
    with pytest.raises(DriverError) as e:
        hbase_driver.move_partition("0" * 32, hbase_driver.servers()[0].id)
    assert e.value.retryable is False


def test_region_metrics_count_each_regions_own_requests(hbase_driver, hbase_table):
    region = region_of(hbase_table, "user7000")
    before = {r.id: r for r in hbase_driver.region_metrics()}
    keys = [f"user7{i:03d}x" for i in range(40)]  # all inside user7000's region
    assert {region_of(hbase_table, k) for k in keys} == {region}
    hbase_table.put(keys)
    for k in keys[:25]:
        assert hbase_table.get(k) is not None

    def grown():
        # hbase:meta lists a region an earlier test's split just created before its
        # RegionServer reports it: wait (bounded) until both name the same regions too
        now = {r.id: r for r in hbase_driver.region_metrics()}
        r = now.get(region)
        if r and r.write_requests >= before[region].write_requests + 40 \
                and r.read_requests >= before[region].read_requests + 25 \
                and set(now) == {p.id for p in hbase_driver.partitions()}:
            return now
        return None

    now = wait_for(grown, timeout_s=20)
    assert now, "the RegionServer never reported the region's new request counts"
    row = now[region]
    assert row.table == "usertable"
    assert row.server == next(p.server for p in hbase_driver.partitions() if p.id == region)
    assert 0.0 <= row.locality <= 1.0
    assert row.size_mb >= 0 and row.memstore_mb >= 0
    assert row.region == region
    assert {r.id for r in now.values()} == {p.id for p in hbase_driver.partitions()}


def test_major_compaction_merges_store_files_and_reports_when_done(hbase_driver, hbase_table, hbase_gateway):
    region = region_of(hbase_table, "user3000")
    # the fixture's flush made one store file; one more flush makes two (a third would let
    # HBase's own minor compaction, threshold 3, merge them before we look)
    hbase_table.put([f"user3{i:03d}r" for i in range(20)])
    hbase_gateway.admin.flushRegion(region.encode())

    def store_files() -> int:
        server = next(p.server for p in hbase_driver.partitions() if p.id == region)
        sn = hbase_driver._server_name(server)
        for rm in hbase_gateway.admin.getRegionMetrics(sn, hbase_table.table_name):
            if str(hbase_gateway.jvm.org.apache.hadoop.hbase.client.RegionInfo.encodeRegionName(
                    rm.getRegionName())) == region:
                return int(rm.getStoreFileCount())
        return -1

    assert wait_for(lambda: store_files() >= 2, timeout_s=20)
    hbase_driver.compact(region)
    assert wait_for(lambda: not hbase_driver.compaction_running(region), timeout_s=60)
    assert wait_for(lambda: store_files() == 1, timeout_s=30), "major compaction left several store files"
    assert hbase_table.get("user3005r") == b"x" * 100


def count_rows(table) -> int:
    """Rows a full scan returns, fetched a thousand per gateway call."""
    scanner = table.table.getScanner(table.gateway.jvm.org.apache.hadoop.hbase.client.Scan())
    try:
        n = 0
        while batch := scanner.next(1000):
            n += len(batch)
        return n
    finally:
        scanner.close()


def drop_table(gateway, name: str) -> None:
    admin, table_name = gateway.admin, gateway.jvm.org.apache.hadoop.hbase.TableName.valueOf(name)
    if admin.tableExists(table_name):
        admin.disableTable(table_name)
        admin.deleteTable(table_name)


def test_a_split_is_confirmed_when_two_daughters_on_its_server_replace_it(hbase_driver, hbase_gateway):
    # a table of its own, dropped afterwards: the shared ones keep the region counts other tests
    # rely on
    drop_table(hbase_gateway, "split_me")  # left over by an interrupted run on a reused cluster
    table = TestTable(hbase_gateway, "split_me", regions=3)  # [, user1) [user1, user9) [user9, )
    try:
        keys = [f"user{i:04d}" for i in range(0, 10_000, 5)]
        table.put(keys)
        table.flush()
        parent = region_of(table, "user5000")  # 1,600 of the 2,000 rows
        before = {p.id: p.server for p in hbase_driver.partitions() if p.table == "split_me"}
        t0 = time.monotonic()
        hbase_driver.split_partition(parent)
        print(f"split_partition returned in {time.monotonic() - t0:.3f} s")

        def split():
            now = {p.id: p.server for p in hbase_driver.partitions() if p.table == "split_me"}
            done = parent not in now and len(now) == len(before) + 1 and None not in now.values()
            return now if done else None

        now = wait_for(split, 60, f"{parent} replaced by two daughters")
        print(f"split latency {time.monotonic() - t0:.2f} s")
        daughters = set(now) - set(before)
        assert len(daughters) == 2 and {now[d] for d in daughters} == {before[parent]}
        assert {region_of(table, "user1000"), region_of(table, "user8995")} == daughters
        assert count_rows(table) == len(keys)
        hbase_driver.split_partition(parent)  # already split: nothing to do
        # 200 rows fit in one store-file block: HBase finds no middle key to split at
        with pytest.raises(DriverError, match="no split point") as e:
            hbase_driver.split_partition(region_of(table, "user9000"))
        assert e.value.retryable is False
    finally:
        drop_table(hbase_gateway, "split_me")


def test_the_balancer_switch_reports_what_it_was_and_is_given_back(hbase_gateway):
    admin = hbase_gateway.admin
    admin.balancerSwitch(True, True)  # as an operator would have it
    driver = HBaseDriver(hbase_gateway)
    try:
        assert driver.set_balancer(False) is True
        assert admin.isBalancerEnabled() is False
        assert driver.set_balancer(False) is False
        driver.restore_balancer()  # metctl stops: HBase gets its balancer back
        assert admin.isBalancerEnabled() is True
        # found off: stays off when metctl stops
        admin.balancerSwitch(False, True)
        other = HBaseDriver(hbase_gateway)
        assert other.set_balancer(False) is False
        other.restore_balancer()
        assert admin.isBalancerEnabled() is False
    finally:
        admin.balancerSwitch(False, True)
