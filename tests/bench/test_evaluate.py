"""bench/evaluate.py (`make evaluate`) on a tiny grid: a too-small static cluster fails the SLO
and is not the smallest meeting it, the cost ratios follow, the table is written into the
docs' generated block, and a re-run computes only what changed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bench import evaluate
from tests.fixtures.simcluster import small_scenario_dict

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    return evaluate


@pytest.mark.timeout(600)
def test_tiny_grid_scores_caches_and_writes_the_table(tmp_path, capsys):
    bench = load_bench()
    scen = tmp_path / "tiny.yaml"
    scen.write_text(yaml.safe_dump(small_scenario_dict(name="tiny", duration_s=120, slo_latency_ms=25)))
    doc = tmp_path / "doc.md"
    doc.write_text(f"# before\n{bench.BEGIN}\nold table\n{bench.END}\nafter\n")
    out = tmp_path / "ev.json"
    args = ["--scenarios", str(scen), "--seeds", "1", "--sizes", "1,3", "--jobs", "2", "--quiet",
            "--cache", str(tmp_path / "cache"), "--out", str(out), "--docs", str(doc)]
    assert bench.main(args + ["--policies", "target-tracking"]) == 0
    first = json.loads(out.read_text())
    assert first["runs"] == 3 and first["computed"] == 3
    t = first["scenarios"]["tiny"]
    static1, static3 = t["rows"]["static 1"], t["rows"]["static 3"]
    assert static1["per_seed"][0]["slo_attainment"] < 0.99 and not static1["per_seed"][0]["meets_slo"]
    assert static1["vs_smallest_static"]["mean"] is None  # a run that fails tenants has no cost ratio
    assert t["smallest_static_meeting_slo"]["1"]["size"] == 3
    assert static3["vs_smallest_static"]["mean"] == pytest.approx(1.0)
    tt = t["rows"]["target-tracking"]["per_seed"][0]
    if tt["meets_slo"]:
        assert tt["vs_smallest_static"] == pytest.approx(tt["node_minutes"] / static3["per_seed"][0]["node_minutes"])
    text = doc.read_text()
    assert "old table" not in text and "| tiny | static 1 |" in text and text.endswith(f"{bench.END}\nafter\n")
    # again: nothing to compute; one more policy: only its run
    assert bench.main(args + ["--policies", "target-tracking"]) == 0
    assert json.loads(out.read_text())["computed"] == 0
    assert json.loads(out.read_text())["scenarios"] == first["scenarios"]
    assert bench.main(args + ["--policies", "target-tracking,tiramola"]) == 0
    assert json.loads(out.read_text())["computed"] == 1
    capsys.readouterr()


def test_bad_grid_input_names_the_flag(tmp_path, capsys):
    bench = load_bench()
    for flag, value in (("--sizes", "0,4"), ("--seeds", "x"), ("--slo-target", "2")):
        with pytest.raises(SystemExit) as e:
            bench.main([flag, value, "--cache", str(tmp_path)])
        assert e.value.code == 2 and flag in capsys.readouterr().err
