"""The short policy comparison on quota'd real HBase (make compare-hbase runs the long one):
static 2 and the default met each on a fresh local HBase whose RegionServers are fixed slices
of the machine, the same low -> peak -> low YCSB demand (target rates, many threads). Both runs
complete operations and are scored in SLO windows per tenant, the report gives node-minutes
and the cost at the SLO, static never launches a RegionServer, and a cut-short bench resumes
without running a finished run again."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.compare]

MINUTES = 1.5  # the whole low -> peak -> low schedule; a fresh cluster and its table take ~1.5 min more
COMPARE = Path(__file__).resolve().parents[2] / "deploy" / "local_hbase" / "compare.py"
ARGS = ["--policies", "met", "--static-sizes", "2", "--repetitions", "1", "--minutes", str(MINUTES),
        "--phases", "1x0.5,1x1.5,1x0.5", "--rs-capacity", "300", "--tenants", "AC", "--records", "1000",
        "--regions", "4", "--max-nodes", "3", "--slo-window-s", "10"]


@pytest.mark.timeout(1200)
def test_static_and_met_on_the_same_demand_are_scored_in_slo_windows(tmp_path):
    out = tmp_path / "compare"
    done = subprocess.run([sys.executable, str(COMPARE), *ARGS, "--out", str(out)],
                          capture_output=True, text=True, timeout=1100)
    assert (out / "report.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    runs = {r["config"]: r for r in report["runs"]}
    print((out / "table.md").read_text())
    assert set(runs) == {"static-2", "met"}
    for config, run in runs.items():
        assert "error" not in run, run.get("error")
        assert run["ycsb_ops"] > 0, config
        for tenant in ("A", "C"):
            assert run["slo"]["by_tenant"][tenant]["windows"] >= 5, (config, run["slo"])
        assert 0 <= run["attainment"] <= 1
        assert run["node_minutes"] >= 0.9 * 2 * MINUTES, (config, run["node_minutes"])
        assert all(group["cpu_cores"] for kind, group in run["slices"].items() if kind == "rs")
    assert runs["static-2"]["launches"] == 0 and runs["static-2"]["max_nodes"] == 2
    assert runs["static-2"]["node_minutes"] <= 1.1 * 2 * MINUTES
    assert "cost_at_slo" in report["summary"]["met"]
    assert report["summary"]["static-2"]["ycsb_ops"]["n"] == 1
    assert done.returncode == 0, done.stderr[-3000:]
    # run again: both runs are done, so nothing runs and the report is the same
    again = subprocess.run([sys.executable, str(COMPARE), *ARGS, "--out", str(out)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "phases," not in again.stdout
    assert json.loads((out / "report.json").read_text())["summary"] == report["summary"]


def test_an_unknown_policy_is_refused_in_one_line():
    done = subprocess.run([sys.executable, str(COMPARE), "--policies", "met,best", "--rs-capacity", "300"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "--policies" in done.stderr and "best" in done.stderr
