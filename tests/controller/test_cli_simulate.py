"""`metctl simulate` and `metctl run` end to end (on the simulated cluster)."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from rich.console import Console

from controller.cli import main
from controller.commands.simulate import compare_table
from controller.commands.run import DEMO_CONFIG
from controller.config import load_config
from tests.fixtures.simcluster import quiet_config, small_scenario_dict

FIELDS = ("total_ops", "mean_throughput", "node_minutes", "max_nodes", "actions",
          "slo_violation_intervals", "slo_violation_magnitude", "elasticity")


def _scenario(tmp_path, **kw):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(small_scenario_dict(duration_s=900, **kw)))
    return path


def test_simulate_writes_summary_csv_and_plots(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["simulate", "--scenario", str(_scenario(tmp_path)), "--policy", "met",
                 "--out", str(out), "--seed", "3"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    for f in FIELDS:
        assert f in summary
    assert summary["policy"] == "met" and summary["seed"] == 3 and summary["duration_s"] == 900
    assert (out / "timeseries.csv").exists()
    for png in ("throughput.png", "cumulative.png", "latency.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    assert "total operations" in capsys.readouterr().out


def test_simulate_is_deterministic_for_a_seed(tmp_path):
    scen = _scenario(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert main(["simulate", "--scenario", str(scen), "--policy", "tiramola", "--out", str(out),
                     "--no-plots"]) == 0
    assert (a / "timeseries.csv").read_text() == (b / "timeseries.csv").read_text()
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    sa.pop("wall_time_s"), sb.pop("wall_time_s")
    assert sa == sb


def test_compare_runs_each_policy_on_the_same_seed(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["simulate", "--scenario", str(_scenario(tmp_path)), "--compare", "met,tiramola,static",
                 "--out", str(out)]) == 0
    both = json.loads((out / "compare.json").read_text())
    assert set(both) == {"met", "tiramola", "static"}
    assert len({s["seed"] for s in both.values()}) == 1
    assert both["static"]["actions"] == {} and both["static"]["max_nodes"] == 3
    text = capsys.readouterr().out
    assert "met" in text and "tiramola" in text and "node-minutes" in text
    assert (out / "compare.png").exists() and (out / "met" / "summary.json").exists()
    # the table names the scenario's own SLO window, whatever it is
    wide = Console(width=400, record=True, file=io.StringIO())
    wide.print(compare_table(both))
    assert f"({both['met']['slo_interval_s']:g}-s windows" in wide.export_text()


def test_bad_scenario_is_one_line_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    data = small_scenario_dict()
    data["workloads"][0]["threads"] = -1
    bad.write_text(yaml.safe_dump(data))
    assert main(["simulate", "--scenario", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "workloads[0].threads" in err[0] and str(bad) in err[0]
    assert main(["simulate", "--scenario", str(bad), "--compare", "met,nope"]) == 2


def test_run_once_with_no_arguments(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--once"]) == 0
    # the demo's scenario (configs/demo.yaml: simulator.scenario) names the report's directory
    scenario = Path(load_config(DEMO_CONFIG).simulator.scenario).stem
    summary = json.loads((tmp_path / "out" / f"run-{scenario}" / "summary.json").read_text())
    assert summary["policy"] == "met" and summary["decisions"] == 1
    assert "report in" in capsys.readouterr().out


def test_live_view_renders_nodes_profiles_and_decisions(sim_stack):
    from rich.console import Console

    from controller.commands.run import LiveView

    view = LiveView()
    run = sim_stack("met", observers=[view],
                    config=quiet_config(policy={"paper_faithful": True}))  # MET's profiles
    view.run = run
    run.run(until=400)
    console = Console(record=True, width=160, force_terminal=True)
    console.print(view.render())
    text = console.export_text()
    for n in run.cluster.nodes:
        if n.vm_state == "running":
            assert n.host in text
    assert "decision:" in text and "plan" in text and "throughput" in text
    assert any(p in text for p in ("read", "write", "scan", "read_write"))


def test_run_refuses_a_live_config_it_cannot_run_with_one_line(tmp_path, capsys):
    # live drivers are wired (tests/controller/test_cli_run.py); with no /jmx URL there is no
    # per-region data to decide on, and nothing is started
    cfg = tmp_path / "live.yaml"
    cfg.write_text("cluster: lab\ninfrastructure: {driver: local}\ndatastore: {driver: hbase}\n")
    assert main(["run", "--config", str(cfg), "--once"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "monitor.hbase_jmx_urls" in err[0]


def test_simulate_seeds_and_frontier(tmp_path, capsys):
    """--seeds runs each seed (mean, min-max, per_seed); --frontier runs static at each size and
    gives each policy its frontier ratio; the static policy at the scenario's own size sits on
    the frontier (ratio 1 when that size is one of the points and on the hull)."""
    out = tmp_path / "out"
    scen = tmp_path / "short.yaml"
    scen.write_text(yaml.safe_dump(small_scenario_dict(duration_s=120)))
    assert main(["simulate", "--scenario", str(scen), "--compare", "static,tiramola", "--seeds", "1,2",
                 "--frontier", "2,3", "--out", str(out)]) == 0
    comp = json.loads((out / "compare.json").read_text())
    for p in ("static", "tiramola"):
        assert [s["seed"] for s in comp[p]["per_seed"]] == [1, 2]
        lo, hi = comp[p]["min_max"]["total_ops"]
        assert lo <= comp[p]["total_ops"] <= hi
        assert "slo_violation_tenant_windows" in comp[p] and "slo_violation_windows_by_workload" in comp[p]
    front = json.loads((out / "frontier.json").read_text())
    assert [r["size"] for r in front["sizes"]] == [2, 3]
    static3 = [s for s in front["sizes"] if s["size"] == 3][0]
    assert comp["static"]["total_ops"] == static3["ops"]  # same runs: 3 is the scenario's size
    ratios = [s["frontier_ratio"] for s in comp["static"]["per_seed"]]
    assert all(abs(r - 1.0) < 1e-9 for r in ratios) or front["sizes"][0]["ops"] > static3["ops"]
    assert (out / "frontier.png").read_bytes()[:4] == b"\x89PNG"
    printed = capsys.readouterr().out
    assert "frontier ratio" in printed and "cost at the SLO" in printed
    # cost at the SLO: each policy's attainment and node-minutes per seed, the ratio only where
    # the policy met the target
    assert front["slo_target"] == 0.99
    smallest = front["smallest_static_meeting_slo"]["per_seed"]
    for sd in ("1", "2"):
        att = {r["size"]: [p["slo_attainment"] for p in r["per_seed"] if str(p["seed"]) == sd][0]
               for r in front["sizes"]}
        ok = [n for n, a in att.items() if a >= 0.99]
        assert (smallest[sd] or {}).get("size") == (min(ok) if ok else None)
    for p in ("static", "tiramola"):
        for row in front["cost_at_slo"][p]["per_seed"]:
            assert (row["vs_smallest_static"] is None) == (not row["meets_slo"] or smallest[str(row["seed"])] is None)


@pytest.mark.parametrize("flag,value", [("--slo-target", "1.5"), ("--slo-target", "nan"), ("--slo-target", "x"),
                                        ("--frontier", "0,4"), ("--frontier", "four")])
def test_bad_frontier_input_exits_2_naming_the_flag(tmp_path, capsys, flag, value):
    args = ["simulate", "--scenario", "met-elasticity", "--frontier", "2,3", "--out", str(tmp_path / "o")]
    args = [a for a in args if a not in ("--frontier", "2,3")] + [flag, value]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and flag in err[0]
