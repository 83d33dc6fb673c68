"""bench/evaluate.py (`make evaluate`) on a tiny grid: a too-small static cluster fails the SLO
and is not the smallest meeting it, the cost ratios follow, the table is written into the
docs' generated block, and a re-run computes only what changed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, strategies as st

from bench import evaluate

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    return evaluate


@pytest.mark.timeout(600)
def test_tiny_grid_scores_caches_and_writes_the_table(tmp_path, capsys):
    bench = load_bench()
    scen = tmp_path / "tiny.yaml"
    # open loop: 9,000 gets/s and 2,000 updates/s ask ~2.8 cores; one 2-core node saturates,
    # three do not
    scen.write_text(yaml.safe_dump({
        "name": "tiny", "duration_s": 180, "seed": 1, "initial_nodes": 3, "slo_latency_ms": 50,
        "workloads": [{"name": "reads", "mix": {"read": 1.0}, "records": 100000, "regions": 6,
                       "rate": {"shape": "constant", "ops_per_s": 9000}},
                      {"name": "writes", "mix": {"update": 1.0}, "records": 100000, "regions": 3,
                       "rate": [[0, 2000], [180, 2000]]}]}))
    doc = tmp_path / "doc.md"
    doc.write_text(f"# before\n{bench.BEGIN}\nold table\n{bench.END}\nafter\n")
    out = tmp_path / "ev.json"
    args = ["--scenarios", str(scen), "--seeds", "1", "--sizes", "1,3", "--jobs", "2", "--quiet",
            "--cache", str(tmp_path / "cache"), "--out", str(out), "--docs", str(doc)]
    assert bench.main(args + ["--policies", "target-tracking"]) == 0
    first = json.loads(out.read_text())
    assert first["runs"] == 4 and first["computed"] == 4  # the oracle, two static sizes, a policy
    t = first["scenarios"]["tiny"]
    static1, static3 = t["rows"]["static 1"], t["rows"]["static 3"]
    one = static1["runs"][0]
    assert one["slo_attainment"] < 0.5 and not static1["per_seed"][0]["meets_slo"]
    assert one["ops_failed"] > 0.01 * one["ops_offered"]  # requests time out, counted, not served
    assert static3["runs"][0]["ops_failed"] == 0
    # the oracle is at most every static size that meets the SLO, and above the CPU bound
    oracle = t["oracle_node_minutes"]["1"]
    assert 3.0 <= oracle <= static3["runs"][0]["node_minutes"]
    # a steady load: the reactive oracle, sized as each minute starts, needs no spare node and
    # costs what the oracle does
    reactive = t["reactive_oracle"]["1"]
    assert reactive["headroom"] == 0 and reactive["node_minutes"] == oracle and reactive["minutes_met"] == 1.0
    assert reactive["start_ceiling"] == 1.0  # 3 nodes from the start carry it
    assert static1["vs_smallest_static"]["mean"] is None  # a run that fails tenants has no cost ratio
    assert t["smallest_static_meeting_slo"]["1"]["size"] == 3
    assert static3["vs_smallest_static"]["mean"] == pytest.approx(1.0)
    tt = t["rows"]["target-tracking"]["per_seed"][0]
    if tt["meets_slo"]:
        assert tt["vs_smallest_static"] == pytest.approx(tt["node_minutes"] / static3["per_seed"][0]["node_minutes"])
    text = doc.read_text()
    assert "old table" not in text and "| tiny | static 1 |" in text and "reactive oracle" in text
    assert text.endswith(f"{bench.END}\nafter\n")
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


@given(threshold=st.integers(1, 40), start=st.integers(1, 40))
def test_the_search_finds_the_smallest_size_that_meets(threshold, start):
    search = load_bench().SmallestMeeting(start)
    runs = 0
    while (n := search.next()) is not None:
        search.record(n, n >= threshold)
        runs += 1
    assert min(search.met) == threshold and (threshold == 1 or threshold - 1 in search.failed)
    assert runs <= 13  # a few runs (at most 6 within 4 nodes of the start), never one per size


def test_a_cached_run_counts_only_while_the_code_it_ran_is_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(evaluate, "ROOT", tmp_path)
    (tmp_path / "simulator").mkdir()
    model = tmp_path / "simulator" / "model.py"
    model.write_text("RATE = 1\n")
    entry = tmp_path / "run.json"
    entry.write_text(json.dumps({"result": {"node_minutes": 5.0}, "code": {"simulator/model.py": evaluate._sha("simulator/model.py")}}))
    assert evaluate.cached_result(entry) == {"node_minutes": 5.0}
    model.write_text("RATE = 2\n")  # the model changed: the run must be redone
    assert evaluate.cached_result(entry) is None
    model.unlink()
    assert evaluate.cached_result(entry) is None
    assert evaluate.cached_result(tmp_path / "absent.json") is None
