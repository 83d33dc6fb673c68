"""YCSB's output as deploy/local_hbase/ycsb.py reads it for both bindings (HBase, Cassandra):
per-operation statuses, failures and latencies from the summary; and the Cassandra wrapper's
refusal, in one line with exit 2, to run without a running local cluster."""
from __future__ import annotations

import subprocess
import sys

import pytest

from deploy.local_cassandra import ycsb as cassandra_ycsb
from deploy.local_hbase import ycsb as hbase_ycsb
from deploy.localproc import ycsb as client
from deploy.localproc.process import ClusterError
from tests.fixtures.cassandra import ROOT

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
    r = client.parse_output("A", "run", SUMMARY, "", 7.4)
    assert r.per_op == {"READ": {"OK": 720, "NOT_FOUND": 6}, "UPDATE": {"OK": 744, "ERROR": 2}}
    assert (r.ops, r.ok, r.failed, r.throughput) == (1472, 1464, 8, 209.2)
    assert r.latency_us["READ"] == {"avg": 9350.5, "max": 151940, "p95": 20530, "p99": 34530}
    assert "CLEANUP" not in r.latency_us
    text = cassandra_ycsb.summary(r)
    assert "8 not OK" in text and "NOT_FOUND=6" in text and "avg 9.35 ms" in text


def test_run_without_a_running_cluster_exits_2(tmp_path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "deploy" / "local_cassandra" / "ycsb.py"),
                           "--workdir", str(tmp_path), "run"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"local-cassandra: no running node in {tmp_path.resolve()}: start it first (cluster.py start)"]


# what a client stopped by SIGTERM leaves: per-second status lines only (YCSB 0.17, -s, with
# reportlatencyforeacherror=true so a failure is named by its status)
STATUS_LINES = """\
2026-11-23 04:56:52:493 4 sec: 28 operations; 26.37 current ops/sec; [READ: Count=10, Max=5000, Min=900, Avg=2000, 90=4000, 99=5000, 99.9=5000, 99.99=5000] [READ-MODIFY-WRITE: Count=9, Max=9100, Min=1000, Avg=3000, 90=8000, 99=9100, 99.9=9100, 99.99=9100] [UPDATE: Count=9, Max=4000, Min=800, Avg=1500, 90=3000, 99=4000, 99.9=4000, 99.99=4000]
2026-11-23 04:56:53:493 5 sec: 40 operations; 12.0 current ops/sec; [READ: Count=8, Max=28790000, Min=900, Avg=3600000, 90=9000, 99=28790000, 99.9=28790000, 99.99=28790000] [READ-ERROR: Count=1, Max=61000000, Min=61000000, Avg=61000000, 90=61000000, 99=61000000, 99.9=61000000, 99.99=61000000] [READ-NOT_FOUND: Count=3, Max=2000, Min=1000, Avg=1500, 90=2000, 99=2000, 99.9=2000, 99.99=2000] [UPDATE: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0, 99=0, 99.9=0, 99.99=0]
"""


def test_status_lines_give_failures_by_status_each_second_and_the_longest_wait() -> None:
    ycsb = hbase_ycsb
    r = ycsb.parse_output("F", "run", "", STATUS_LINES, 5.0)
    assert (r.ops, r.failed) == (40, 4)
    assert r.per_op["READ"] == {"OK": 18, "ERROR": 1, "NOT_FOUND": 3}
    assert r.per_op["READ-MODIFY-WRITE"] == {"OK": 9}  # an operation's name, not a status
    assert r.failures == [(4.0, 0), (5.0, 4)]
    assert r.max_wait_us == [(4.0, 9100), (5.0, 61000000)]


def test_the_run_phase_reads_only_the_records_the_load_wrote() -> None:
    ycsb = hbase_ycsb
    # D is loaded with a tenth of the records (MET's fast-growing log); a run over all of them
    # would read keys never written: NOT_FOUND, counted as failed operations
    assert ycsb.loaded_records("D", 2000) == 200
    assert ycsb.loaded_records("A", 2000) == 2000


def stand_in(tmp_path, script: str):
    """A real process in the client's place, writing status lines as YCSB does (to stderr)."""
    return client.start_command([sys.executable, "-c", script], tmp_path, "stand-in")[0]


def test_a_client_slow_to_start_is_waited_for_until_its_first_operation(tmp_path) -> None:
    # silent for 1.5 s (a JVM starting on a busy machine), then a status line with 0, then one with 7
    slow = stand_in(tmp_path, "import sys, time\ntime.sleep(1.5)\n"
                              "print('2026-11-25 23:00:01:000 1 sec: 0 operations; 0 current ops/sec;', file=sys.stderr, flush=True)\n"
                              "time.sleep(0.5)\n"
                              "print('2026-11-25 23:00:02:000 2 sec: 7 operations; 7 current ops/sec;', file=sys.stderr, flush=True)\n"
                              "time.sleep(30)")
    try:
        assert client.operations_so_far(slow) == 0
        waited = client.wait_for_operations({"A": slow}, timeout_s=60, every_s=0.1)
        assert waited >= 1.9 and client.operations_so_far(slow) == 7
    finally:
        slow.kill()
        slow.wait()


def test_a_client_that_ends_or_stays_idle_is_named_not_waited_for_forever(tmp_path) -> None:
    gone = stand_in(tmp_path, "import sys\nprint('cannot connect', file=sys.stderr)\nsys.exit(1)")
    idle = stand_in(tmp_path, "import time\ntime.sleep(30)")
    try:
        with pytest.raises(ClusterError, match=r"YCSB C ended \(1\) before its first operation:\ncannot connect"):
            client.wait_for_operations({"C": gone}, timeout_s=60, every_s=0.1)
        with pytest.raises(ClusterError, match=r"^YCSB E: no operation within 1 s$"):
            client.wait_for_operations({"E": idle}, timeout_s=1, every_s=0.1)
    finally:
        idle.kill()
        idle.wait()
