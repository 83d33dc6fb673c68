"""bench/sim_vs_real.py's prediction of compare-hbase runs: each run is simulated from the size it
started at, with the phases' tenants, and its error is against what the run measured."""
from __future__ import annotations

import math

import pytest

from bench import sim_vs_real

PHASES = [{"name": "p1", "start_s": 0.0, "seconds": 60.0,
           "tenants": [{"workload": "A", "target": 200, "threads": 28},
                       {"workload": "C", "target": 200, "threads": 28}]},
          {"name": "p2", "start_s": 60.0, "seconds": 60.0,
           "tenants": [{"workload": "A", "target": 400, "threads": 48},
                       {"workload": "C", "target": 400, "threads": 48}]}]


def _run(config: str, **extra) -> dict:
    return {"config": config, "repetition": 1, "ycsb_ops": 100_000, "node_minutes": 6.0,
            "max_nodes": 3, "p99_ms_max": 150.0, **extra}


def test_each_run_is_predicted_from_the_size_it_started_at():
    compare = {"phases": PHASES, "records": 2_000, "regions": 4, "runs": [
        _run("static-2", size=2, start_nodes=2, slo={"by_tenant": {"A": {"p99_ms_median": 31.5},
                                                                   "C": {"p99_ms_median": 12.0}}}),
        _run("static", size=None, start_nodes=3, policy_section={"preset": "static",
                                                                 "min_nodes": 2, "max_nodes": 6}),
        _run("met", size=None, error="cluster did not start")]}
    rows = sim_vs_real.predict_compare(compare, {})
    assert [r["config"] for r in rows] == ["static-2", "static"]  # a failed run is not predicted
    static2, watching = rows
    assert static2["predicted_max_nodes"] == 2 and watching["predicted_max_nodes"] == 3
    # two minutes at 2 and 3 nodes
    assert static2["predicted_node_minutes"] == 4.0 and watching["predicted_node_minutes"] == 6.0
    assert static2["predicted_ops"] > 0
    assert static2["ops_error"] == round(static2["predicted_ops"] / 100_000 - 1, 3)
    assert watching["node_minutes_error"] == 0.0
    # each tenant's windows over its phases; at a third of two nodes' capacity, within 100 ms
    assert static2["predicted_attainment"] is not None and 0.0 <= static2["predicted_attainment"] <= 1.0
    # the slowest tenant's median window p99, beside the run's (a run without it: none)
    assert static2["measured_p99_median_ms"] == 31.5 and watching["measured_p99_median_ms"] is None
    assert 0.0 < static2["predicted_p99_median_ms"] < 100.0


def test_the_worst_tenant_counts_the_windows_of_all_its_phases():
    summary = {"slo_windows_by_workload": {"A-p1": 10, "A-p2": 30, "C-p1": 10, "C-p2": 30},
               "slo_attainment_by_workload": {"A-p1": 1.0, "A-p2": 0.5, "C-p1": 0.0, "C-p2": 1.0}}
    # A: (10 + 15) / 40 = 0.625; C: 30 / 40 = 0.75; the worst phase alone (C-p1, 0.0) is not it
    assert sim_vs_real.worst_tenant(summary) == 0.625


def test_per_node_at_scales_only_the_servers_costs_by_the_error_at_that_size():
    sim = {"hardware": {"cores": 1}, "costs": {"get_cpu_ms": 1.0, "put_cpu_ms": 2.0, "rpc_cpu_ms": 0.5,
                                               "client_op_cpu_ms": 0.1, "rpc_floor_ms": 1.5}}
    rows = [{"size": 1, "predicted_ops_per_s": 880.0, "measured_ops_per_s": 800.0},
            {"size": 3, "predicted_ops_per_s": 2500.0, "measured_ops_per_s": 1700.0}]
    scaled, factor = sim_vs_real.per_node_at(sim, rows, 3)
    assert factor == 2500.0 / 1700.0
    assert scaled["costs"]["get_cpu_ms"] == round(factor, 5) and scaled["costs"]["put_cpu_ms"] == round(2 * factor, 5)
    # the client's work and the latency floor are not the server's capacity: left as measured
    assert scaled["costs"]["client_op_cpu_ms"] == 0.1 and scaled["costs"]["rpc_floor_ms"] == 1.5
    assert sim["costs"]["get_cpu_ms"] == 1.0  # the calibration itself untouched


def test_per_node_at_a_size_the_scale_bench_never_ran_names_the_sizes_it_has():
    with pytest.raises(ValueError, match="no run at 6 RegionServers.*1, 3"):
        sim_vs_real.per_node_at({"costs": {}}, [{"size": 1, "predicted_ops_per_s": 1, "measured_ops_per_s": 1},
                                                {"size": 3, "predicted_ops_per_s": 1, "measured_ops_per_s": 1}], 6)


def _scale_run(size: int, ops: float, rs_cores: float) -> dict:
    return {"size": size, "ops_per_s": ops,
            "cpu_cores": {"zk": 0.001, "master": 0.004, "ycsb": 0.1,
                          **{f"rs{i + 1}": rs_cores for i in range(size)}}}


def test_the_cost_growth_is_read_from_the_servers_cpu_per_operation_at_two_sizes():
    # 0.1 ms per operation at one server, 0.15 at four (medians of two runs each)
    report = {"experiments": {"alone": {"runs": [
        _scale_run(1, 1500.0, 0.15), _scale_run(1, 1400.0, 0.14),
        _scale_run(4, 4000.0, 0.15), _scale_run(4, 4000.0, 0.15)]}}}
    g, per_op = sim_vs_real.cost_growth(report, "alone")
    assert per_op == {1: 0.1, 4: 0.15}
    assert 1 + g * math.log(4) == pytest.approx(1.5)
    # a curve whose servers do as much per CPU-second at every size: no growth
    flat = {"runs": [_scale_run(1, 1500.0, 0.15), _scale_run(4, 6000.0, 0.15)]}
    assert sim_vs_real.cost_growth(flat, "alone")[0] == pytest.approx(0.0)


def test_a_report_that_cannot_give_the_cost_growth_says_why(tmp_path, capsys):
    with pytest.raises(ValueError, match="two sizes"):
        sim_vs_real.cost_growth({"runs": [_scale_run(1, 1500.0, 0.15)]}, "alone")
    # from two servers to four, doubling: no g of the form 1 + g ln n fits it
    with pytest.raises(ValueError, match="faster than 1 \\+ g ln n"):
        sim_vs_real.cost_growth({"runs": [_scale_run(2, 1500.0, 0.15), _scale_run(4, 1500.0, 0.15)]}, "alone")
    with pytest.raises(ValueError, match="no experiment 'wide'.*alone"):
        sim_vs_real.cost_growth({"experiments": {"alone": {"runs": []}}}, "wide")
    bad = tmp_path / "scale.json"
    bad.write_text('{"runs": []}')
    cal = tmp_path / "cal.json"
    cal.write_text('{"quota_node": {"simulator": {}}}')
    scale = tmp_path / "s.json"
    scale.write_text('{"sizes": {}, "runs": []}')
    code = sim_vs_real.main(["--scale", str(scale), "--calibration", str(cal), "--compare", str(tmp_path / "none"),
                             "--cost-growth-from", str(bad), "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--cost-growth-from" in err and str(bad) in err and "two sizes" in err


def test_a_file_that_is_not_a_scale_report_is_named_as_such(tmp_path):
    odd = tmp_path / "odd.json"
    odd.write_text('{"runs": [{"ops_per_s": 10, "cpu_cores": {"rs1": 0.1}}]}')  # a run without its size
    with pytest.raises(ValueError, match="not a scale report"):
        sim_vs_real.cost_growth_from(str(odd), "alone")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(ValueError):
        sim_vs_real.cost_growth_from(str(broken), "alone")


def test_the_quota_s_period_is_the_calibration_s_else_the_local_cluster_s_unless_asked(tmp_path, capsys):
    old = {"quota_node": {"cpu_cores": 0.15, "simulator": {"hardware": {"cores": 1}, "costs": {"get_cpu_ms": 0.9}}}}
    sim = sim_vs_real.settings_for(old)  # written before calibrate_hbase.py recorded the period
    # and the local cluster's CPU at light load, periods' dispersion and stops' length (the
    # wake-up over the quota)
    assert sim["hardware"] == {"cores": 1, "cpu_quota_period_ms": 100.0, "cpu_quota_run_share": 0.15,
                               "cpu_wakeup_ms": round(0.773 / 0.15, 4), "cpu_wakeup_window_ms": 5.6,
                               "cpu_quota_dispersion": 0.024, "cpu_quota_stop_per_excess": 2.63}
    assert sim_vs_real.settings_for(old, 10.0)["hardware"]["cpu_quota_period_ms"] == 10.0
    assert "cpu_quota_period_ms" not in old["quota_node"]["simulator"]["hardware"]  # the report untouched
    recorded = {"quota_node": {"cpu_cores": 0.3, "simulator": {"hardware": {"cpu_quota_period_ms": 50.0,
                                                                           "cpu_quota_dispersion": 0.1}}}}
    assert sim_vs_real.settings_for(recorded)["hardware"]["cpu_quota_period_ms"] == 50.0
    assert sim_vs_real.settings_for(recorded)["hardware"]["cpu_quota_dispersion"] == 0.1
    cal = tmp_path / "cal.json"
    cal.write_text('{"quota_node": {"cpu_cores": 0.15, "simulator": {}}}')
    scale = tmp_path / "s.json"
    scale.write_text('{"sizes": {}, "runs": []}')
    code = sim_vs_real.main(["--scale", str(scale), "--calibration", str(cal), "--compare", str(tmp_path / "none"),
                             "--quota-period-ms", "-5", "--out", str(tmp_path / "out")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--quota-period-ms" in err and "-5" in err
    assert not (tmp_path / "out").exists()


def test_each_point_of_the_load_curve_is_predicted_at_its_size_and_rate():
    def point(share, target, ops, p99, throttled):
        return {"share": share, "target_ops_s": target, "ops_per_s": ops, "p99_ms": p99,
                "throttled_share": {"rs1": throttled}}
    scale = {"records": 2_000, "regions": 4, "measure_s": 20, "runs": [
        {"size": 1, "threads": 20, "load_curve": [point(0.3, 300.0, 299.0, 50.0, 0.5), point(0.9, 900.0, 880.0, 95.0, 1.0)]},
        {"size": 1, "threads": 20, "load_curve": [point(0.3, 320.0, 318.0, 60.0, 0.7)]},
        {"size": 1, "threads": 20, "error": "cluster did not start"}]}
    rows = sim_vs_real.predict_load(scale, {})
    assert [(r["size"], r["share"]) for r in rows] == [(1, 0.3), (1, 0.9)]
    low, high = rows
    assert low["target_ops_s"] == 310.0 and low["measured_p99_ms"] == 55.0 and low["measured_p99_spread"] == [50.0, 60.0]
    assert low["measured_throttled_share"] == 0.6
    # one node of the default hardware serves the rate asked; the error is against the measured p99
    assert low["predicted_ops_per_s"] == pytest.approx(310.0, rel=0.02)
    assert low["p99_error"] == round(low["predicted_p99_ms"] / 55.0 - 1, 3)
    assert sim_vs_real.predict_load({"runs": [{"size": 1, "threads": 8}]}, {}) == []  # no curve, no rows
