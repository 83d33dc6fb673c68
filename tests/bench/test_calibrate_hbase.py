"""bench/calibrate_hbase.py's reading of YCSB's summary (the measurement on a real HBase is
tests/integration/test_calibrate_hbase.py)."""
from __future__ import annotations

from bench import calibrate_hbase as bench


def test_latency_line_is_read_for_the_operation_asked():
    out = "[READ], Operations, 10\n[READ], AverageLatency(us), 612.5\n[UPDATE], AverageLatency(us), 900\n"
    assert bench.mean_latency_us(out, "READ") == 612.5
    assert bench.mean_latency_us(out, "UPDATE") == 900
    assert bench.mean_latency_us(out, "SCAN") is None
