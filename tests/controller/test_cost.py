"""Cost at the SLO: the smallest static size meeting the target, ratios that count only when
the policy meets it, the spread over seeds, the oracle's sum."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from controller.cost import check_target, cost_at_slo, oracle_minutes, smallest_static, spread


def test_a_too_small_static_is_not_the_smallest_meeting_the_slo():
    sizes = [(4, 240.0, 0.62), (6, 360.0, 0.97), (8, 480.0, 0.995), (12, 720.0, 1.0)]
    assert smallest_static(sizes, 0.99) == {"size": 8, "node_minutes": 480.0, "slo_attainment": 0.995}
    assert smallest_static(sizes, 0.95)["size"] == 6
    assert smallest_static(sizes[:2], 0.99) is None  # none tried meets it


def test_ratios_count_only_when_the_policy_meets_the_target():
    static = {"1": {"size": 8, "node_minutes": 480.0}, "2": {"size": 8, "node_minutes": 480.0}}
    oracle = {"1": 300.0, "2": 300.0}
    runs = [{"seed": 1, "node_minutes": 360.0, "slo_attainment": 0.995},
            {"seed": 2, "node_minutes": 240.0, "slo_attainment": 0.80}]  # cheaper, but fails tenants
    got = cost_at_slo(runs, static, oracle, 0.99)
    assert got["per_seed"][0]["vs_smallest_static"] == pytest.approx(0.75)
    assert got["per_seed"][0]["vs_oracle"] == pytest.approx(1.2)
    assert got["per_seed"][1]["vs_smallest_static"] is None and not got["per_seed"][1]["meets_slo"]
    assert got["meets_slo"] == 1
    assert got["vs_smallest_static"] == {"mean": 0.75, "min": 0.75, "max": 0.75, "counted": 1, "of": 2}


@given(st.lists(st.one_of(st.none(), st.floats(0, 10)), min_size=1, max_size=6))
def test_spread_is_over_the_values_that_count(values):
    got = spread(values)
    counted = [v for v in values if v is not None]
    assert got["counted"] == len(counted) and got["of"] == len(values)
    if counted:
        assert got["min"] <= got["mean"] + 1e-9 and got["mean"] <= got["max"] + 1e-9


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5, float("nan"), float("inf")])
def test_a_target_outside_0_1_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="--slo-target"):
        check_target(bad)


def test_oracle_sums_each_minutes_smallest_size_and_gives_up_on_an_unservable_minute():
    need = [2, 2, 5, 3]
    assert oracle_minutes(4, lambda m: need[m]) == 12.0
    assert oracle_minutes(4, lambda m: None if m == 2 else need[m]) is None


OPEN_LOOP = ("business-day", "flash-crowd", "steady-growth", "oltp-day-scan-night", "compressed-week",
             "tenant-churn")


@pytest.mark.parametrize("name", OPEN_LOOP)
def test_each_shipped_open_loop_scenario_peaks_at_8_to_16_nodes_and_lasts_40_to_90_minutes(name):
    from controller.config import load_config
    from simulator.cluster import _with_scenario_hardware
    from simulator.scenario import load_scenario
    from simulator.steady import scenario_load, smallest_nodes

    sc = load_scenario(name)
    assert 40 * 60 <= sc.duration_s <= 90 * 60
    settings = _with_scenario_hardware(load_config(None).simulator, sc)
    need = [smallest_nodes(scenario_load(sc, 60.0 * m, 60.0 * (m + 1), settings), sc.slo_latency_ms, settings,
                           slo_max_failed=sc.slo_max_failed) for m in range(int(sc.duration_s // 60))]
    assert None not in need and 8 <= max(need) <= 16, need
    assert min(need) < max(need)  # demand moves: elasticity has something to save
