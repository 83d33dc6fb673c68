"""YCSB's output as deploy/local-hbase/ycsb.py reads it for both bindings (HBase, Cassandra):
per-operation statuses, failures and latencies from the summary; and the Cassandra wrapper's
refusal, in one line with exit 2, to run without a running local cluster."""
from __future__ import annotations

import subprocess
import sys

from tests.fixtures.cassandra import ROOT, load_cluster_module

SUMMARY = """\
[OVERALL], RunTime(ms), 7012
[OVERALL], Throughput(ops/sec), 209.2
[CLEANUP], Operations, 4
[CLEANUP], AverageLatency(us), 120000.0
[READ], Operations, 726
[READ], AverageLatency(us), 9350.5
[READ], MaxLatency(us), 151940
[READ], 95thPercentileLatency(us), 20530
[READ], 99thPercentileLatency(us), 34530
[READ], Return=OK, 720
[READ], Return=NOT_FOUND, 6
[UPDATE], Operations, 746
[UPDATE], AverageLatency(us), 7540.0
[UPDATE], Return=OK, 744
[UPDATE], Return=ERROR, 2
[UPDATE-FAILED], Operations, 2
"""


def test_the_summary_gives_counts_failures_and_latencies() -> None:
    ycsb = load_cluster_module("ycsb.py")
    r = ycsb.hbase_ycsb.parse_output("A", "run", SUMMARY, "", 7.4)
    assert r.per_op == {"READ": {"OK": 720, "NOT_FOUND": 6}, "UPDATE": {"OK": 744, "ERROR": 2}}
    assert (r.ops, r.ok, r.failed, r.throughput) == (1472, 1464, 8, 209.2)
    assert r.latency_us["READ"] == {"avg": 9350.5, "max": 151940, "p95": 20530, "p99": 34530}
    assert "CLEANUP" not in r.latency_us
    text = ycsb.summary(r)
    assert "8 not OK" in text and "NOT_FOUND=6" in text and "avg 9.35 ms" in text


def test_run_without_a_running_cluster_exits_2(tmp_path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "deploy" / "local-cassandra" / "ycsb.py"),
                           "--workdir", str(tmp_path), "run"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"local-cassandra: no running node in {tmp_path.resolve()}: start it first (cluster.py start)"]
