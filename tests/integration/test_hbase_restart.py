"""A RegionServer restarted with a profile (HBaseDriver.restart_server through the local
cluster's restart-rs command) runs with that profile's block cache and memstore limits — seen
in its /conf, in its own log and in /jmx — and serves again with no region lost."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import requests

from actuator.hbase import PROFILE_KEY, default_settings_for
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration

BLOCK_CACHE = "hfile.block.cache.size"
MEMSTORE = "hbase.regionserver.global.memstore.size"


def conf_of(info_url: str) -> dict[str, str]:
    doc = requests.get(f"{info_url}/conf", params={"format": "json"}, timeout=5).json()
    return {p["key"]: str(p["value"]) for p in doc["properties"]}


def heap_max_mb(info_url: str) -> float:
    bean = requests.get(f"{info_url}/jmx", params={"qry": "java.lang:type=Memory"}, timeout=5).json()["beans"][0]
    return bean["HeapMemoryUsage"]["max"] / 2**20


def last_logged_mb(log: Path, pattern: str) -> float:
    """The last value the RegionServer logged for `pattern` (e.g. "globalMemStoreLimit=148.5 M")."""
    values = re.findall(pattern, log.read_text(errors="replace"))
    assert values, f"{pattern!r} not in {log}"
    return float(values[-1])


def serving_with(driver, server_id: str, profile: str) -> None:
    poll(lambda: any(s.id == server_id and s.state == "active" and s.profile == profile
                     for s in driver.servers()), 180, f"{server_id} serving with {profile}", every_s=0.5)


def test_restart_with_the_write_profile_applies_its_limits(hbase_cluster_restored, hbase_driver, hbase_table):
    cluster = hbase_cluster_restored
    settings = default_settings_for("write")
    assert BLOCK_CACHE in settings and MEMSTORE in settings, "the write profile must size both"
    server = hbase_driver.servers()[0]
    proc = cluster.rs_by_server_id(server.id)
    old_pid = proc.pid
    t0 = time.monotonic()
    hbase_driver.restart_server(server.id, "write")  # starts it; observed next
    serving_with(hbase_driver, server.id, "write")
    print(f"restart latency {time.monotonic() - t0:.1f} s")

    proc = cluster.proc(proc.name)
    assert proc.pid != old_pid and cluster.running(proc.name)
    assert server.id in {s.id for s in hbase_driver.servers()}
    assert next(s for s in hbase_driver.servers() if s.id == server.id).profile == "write"

    conf = conf_of(proc.info_url)
    assert float(conf[BLOCK_CACHE]) == pytest.approx(float(settings[BLOCK_CACHE]))
    assert float(conf[MEMSTORE]) == pytest.approx(float(settings[MEMSTORE]))
    assert conf[PROFILE_KEY] == "write"

    # what the server actually allocated, from its own log (the last start's lines)
    heap = heap_max_mb(proc.info_url)
    log = Path(proc.log)
    cache_mb = last_logged_mb(log, r"Allocating BlockCache size=([0-9.]+) MB")
    memstore_mb = last_logged_mb(log, r"globalMemStoreLimit=([0-9.]+) M")
    assert cache_mb == pytest.approx(float(settings[BLOCK_CACHE]) * heap, rel=0.02)
    assert memstore_mb == pytest.approx(float(settings[MEMSTORE]) * heap, rel=0.02)

    # nothing was lost: every region is served and the rows read back
    assert all(p.server is not None for p in hbase_driver.partitions())
    assert all(hbase_table.get(f"user{i:04d}") == b"x" * 100 for i in range(0, 10_000, 500))

    hbase_driver.restart_server(server.id, "default")
    serving_with(hbase_driver, server.id, "default")
    assert conf_of(cluster.proc(proc.name).info_url)[PROFILE_KEY] == "default"
