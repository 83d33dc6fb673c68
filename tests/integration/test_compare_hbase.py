"""The short policy comparison on real HBase (make compare-hbase runs the long one): static and
the default met each on a fresh local HBase with 3 RegionServers, the same seeded YCSB schedule
(a quiet segment, then a burst), `metctl run` as a daemon. Both runs complete YCSB operations,
the report gives each its node-minutes, and static never launches a RegionServer."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.compare]

# the schedule's length per policy: a fresh cluster and its tables take ~40 s more per run
MINUTES = 0.6
COMPARE = Path(__file__).resolve().parents[2] / "deploy" / "local_hbase" / "compare.py"


def test_static_and_met_on_the_same_schedule_both_serve_and_static_never_grows(tmp_path):
    out = tmp_path / "compare"
    done = subprocess.run(
        [sys.executable, str(COMPARE), "--policies", "static,met", "--repetitions", "1",
         "--minutes", str(MINUTES), "--segment-s", "18", "--records", "300", "--workloads", "AC",
         "--out", str(out)],
        capture_output=True, text=True, timeout=600)
    assert (out / "report.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    runs = {r["policy"]: r for r in report["runs"]}
    print((out / "table.md").read_text())
    assert set(runs) == {"static", "met"}
    for policy, run in runs.items():
        assert "error" not in run, run.get("error")
        assert run["ycsb_ops"] > 0, policy
        # never fewer than the 3 RegionServers it started with (min_nodes 3)
        assert run["node_minutes"] >= 0.9 * 3 * MINUTES, (policy, run["node_minutes"])
    assert runs["static"]["launches"] == 0 and runs["static"]["max_nodes"] == 3
    assert runs["static"]["node_minutes"] <= 1.1 * 3 * MINUTES
    assert runs["static"]["plans_done"] == 0
    assert (out / "table.md").read_text().count("| static |") == 2  # summary row and its run
    assert done.returncode == 0, done.stderr[-3000:]


def test_an_unknown_policy_is_refused_in_one_line():
    done = subprocess.run([sys.executable, str(COMPARE), "--policies", "met,best"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--policies" in done.stderr and "best" in done.stderr
