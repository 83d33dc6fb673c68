"""bench/policy_table.py judges a policy against the fixed-size frontier: a static cluster whose
size is one of the frontier's points must score exactly 1.0, a smaller one on the hull too, and
the printed table must carry every policy asked for."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(300)
def test_static_on_the_frontier_scores_one(tmp_path):
    out = tmp_path / "table.json"
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text("policy: {name: tiramola}\n")  # a variant: the config's policy under its own name
    r = subprocess.run([sys.executable, "bench/policy_table.py", "--scenarios", "scan-burst",
                        "--policies", "static,met,tiramola", "--variant", f"fixed={fixed}", "--seeds", "1",
                        "--sizes", "2,4,6", "--jobs", "1",
                        "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=280)
    assert r.returncode == 0, r.stderr[-2000:]
    table = json.loads(out.read_text())["scan-burst"]
    (static,) = table["static"]  # scan-burst starts with 4 nodes: a frontier point
    assert static["frontier_ratio"] == pytest.approx(1.0, abs=1e-9)
    assert [p["size"] for p in table["frontier"]["1"]] == [2, 4, 6]
    (met,) = table["met"]
    assert 0 < met["frontier_ratio"] < 2 and met["node_minutes"] > 0
    assert "| scan-burst | static |" in r.stdout and "| scan-burst | met |" in r.stdout
    (variant,) = table["fixed"]  # ran the variant's policy (tiramola), not the default met
    (tiramola,) = table["tiramola"]
    assert variant["ops"] == tiramola["ops"] and variant["ops"] != met["ops"]
    assert "| scan-burst | fixed |" in r.stdout
