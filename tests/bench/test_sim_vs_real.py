"""bench/sim_vs_real.py's prediction of compare-hbase runs: each run is simulated from the size it
started at, with the phases' tenants, and its error is against what the run measured."""
from __future__ import annotations

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
        _run("static-2", size=2, start_nodes=2),
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


def test_the_worst_tenant_counts_the_windows_of_all_its_phases():
    summary = {"slo_windows_by_workload": {"A-p1": 10, "A-p2": 30, "C-p1": 10, "C-p2": 30},
               "slo_attainment_by_workload": {"A-p1": 1.0, "A-p2": 0.5, "C-p1": 0.0, "C-p2": 1.0}}
    # A: (10 + 15) / 40 = 0.625; C: 30 / 40 = 0.75; the worst phase alone (C-p1, 0.0) is not it
    assert sim_vs_real.worst_tenant(summary) == 0.625
