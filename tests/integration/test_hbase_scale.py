"""Scale-out and scale-in on the real local cluster: a new RegionServer joins and regions move
to it one at a time; decommissioning drains it (no region left offline) and stops it."""
from __future__ import annotations

import threading
import time

import pytest

from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration


def test_a_new_server_takes_regions_one_by_one_and_drains_with_none_offline(
        hbase_cluster_restored, hbase_driver, hbase_table):
    cluster = hbase_cluster_restored
    t0 = time.monotonic()
    new = cluster.add_rs()
    print(f"new RegionServer live after {time.monotonic() - t0:.1f} s")
    assert new.server_id in {s.id for s in hbase_driver.servers()}
    assert not [p for p in hbase_driver.partitions() if p.server == new.server_id]

    # incremental: each move lands before the next starts, and the count grows by one each time
    to_move = [p.id for p in hbase_driver.partitions() if p.table == "usertable"][:3]
    for n, region in enumerate(to_move, start=1):
        hbase_driver.move_partition(region, new.server_id)  # starts it; observed next
        poll(lambda: any(p.id == region and p.server == new.server_id for p in hbase_driver.partitions()),
             60, f"{region} on the new server", every_s=0.3)
        on_new = {p.id for p in hbase_driver.partitions() if p.server == new.server_id}
        assert on_new == set(to_move[:n])

    # readers keep reading while the new server is drained
    failures: list[str] = []
    reads = 0
    stop = threading.Event()

    def reader():
        nonlocal reads
        i = 0
        while not stop.is_set():
            key = f"user{(i * 10) % 10_000:04d}"
            try:
                if hbase_table.get(key) != b"x" * 100:
                    failures.append(f"{key}: wrong value")
            except Exception as e:  # noqa: BLE001 - a failed read is what we count
                failures.append(f"{key}: {type(e).__name__}")
            reads += 1
            i += 37

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    t0 = time.monotonic()
    hbase_driver.decommission(new.server_id)  # starts the drain; observed next
    poll(lambda: new.server_id not in {s.id for s in hbase_driver.servers()}, 240,
         "the decommissioned server to stop", every_s=0.3)
    print(f"drain + stop {time.monotonic() - t0:.1f} s; {reads} reads during it, {len(failures)} failed")
    stop.set()
    thread.join(timeout=30)

    assert new.server_id not in {s.id for s in hbase_driver.servers()}
    assert not cluster.running(new.name) or _wait_exit(cluster, new.name)
    parts = hbase_driver.partitions()
    assert all(p.server is not None for p in parts), "a region was left offline"
    assert set(to_move) <= {p.id for p in parts}
    assert reads > 0 and not failures, failures[:5]
    # a server that is already gone: decommission does nothing
    hbase_driver.decommission(new.server_id)


def _wait_exit(cluster, name: str, timeout_s: float = 30) -> bool:
    return poll(lambda: not cluster.running(name), timeout_s, f"{name} to exit", every_s=0.3)
