"""The short chaos run (make chaos-hbase runs the long one): a real local HBase with 3
RegionServers, `metctl run` as a separate daemon with its file journal, YCSB tenants, a
linked-rows writer, and seeded faults (one of each kind the seed draws in ~2 minutes). The rows
acknowledged are all there and none names a missing row; the daemon killed mid-run was
restarted by the harness."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

CHAOS = Path(__file__).resolve().parents[2] / "deploy" / "local_hbase" / "chaos.py"


def test_a_short_chaos_run_loses_no_row_and_the_daemon_comes_back(tmp_path):
    out = tmp_path / "chaos"
    done = subprocess.run(
        [sys.executable, str(CHAOS), "--minutes", "1.5", "--seed", "3", "--out", str(out),
         "--first-fault-s", "20", "--fault-every-s", "30", "--segment-s", "60", "--records", "300",
         "--rows", "1500", "--workloads", "ACE", "--faults", "kill_daemon,kill_rs,stop_zk",
         "--mid-plan-wait-s", "10"],
        capture_output=True, text=True, timeout=600)
    assert (out / "report.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    print(json.dumps({k: v for k, v in report.items() if k != "faults"}, indent=1))
    assert report["integrity"]["rows_written"] > 0
    assert report["lost_rows"] == 0 and report["dangling_rows"] == 0, report["integrity"]
    assert sum(report["faults_by_kind"].values()) >= 2
    if report["faults_by_kind"].get("kill_daemon"):
        assert report["controller_restarts"] >= report["faults_by_kind"]["kill_daemon"]
    assert report["ycsb_ops"] > 0
    assert done.returncode == 0, done.stderr[-3000:]
