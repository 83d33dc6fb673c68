"""bench/calibrate_hbase.py's measurement, short, on the session's real HBase: a YCSB get
workload's operations are counted in the window and the RegionServers' and client's CPU time is
divided over them, giving figures of the order the simulator's settings use."""
from __future__ import annotations

import pytest

from bench import calibrate_hbase as bench
from tests.fixtures.hbase import YCSB_RECORDS

pytestmark = pytest.mark.integration


@pytest.mark.timeout(400)
def test_cpu_per_get_and_latency_are_measured(hbase_cluster, ycsb):
    pids = [p.pid for p in hbase_cluster.region_servers() if hbase_cluster.running(p.name)]
    r = bench.measure(hbase_cluster, pids, "C", records=YCSB_RECORDS, threads=2, seconds=12, skip_s=5,
                      scan_length=100)
    assert r["success"] == 1.0 and r["ops_in_window"] > 100, r
    # A get costs the server and the client some CPU, far less than a second, far more than
    # a microsecond; the latency is YCSB's own mean for READ.
    assert 0.005 < r["server_cpu_ms_per_op"] < 50, r
    assert 0.005 < r["client_cpu_ms_per_op"] < 50, r
    assert r["mean_latency_us"] and r["mean_latency_us"] > 0, r
