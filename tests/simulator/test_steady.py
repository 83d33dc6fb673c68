"""Steady-state capacity (simulator/steady.py): it agrees with the running simulator once the
simulator has settled, and the smallest size it names is the smallest that meets the SLO."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.cluster import SimCluster
from simulator.scenario import scenario_from_dict
from simulator.settings import HardwareSettings, SimulatorSettings
from simulator.steady import RegionLoad, smallest_nodes, scenario_load, steady_state


def _scenario(ops_per_s, nodes, ycsb="A"):
    return scenario_from_dict({"name": "steady", "duration_s": 120, "seed": 2, "initial_nodes": nodes,
                               "workloads": [{"name": "web", "ycsb": ycsb, "records": 300_000, "regions": 12,
                                              "rate": {"shape": "constant", "ops_per_s": ops_per_s}}]}, "<s>")


def test_it_agrees_with_the_running_simulator_once_settled():
    for ops, nodes in ((12_000, 4), (20_000, 4)):
        sc = _scenario(ops, nodes)
        cl = SimCluster(sc)
        cl.run_until(120)
        rec = cl.recording()
        sim_mean, sim_p99 = rec.latency_wl_ms[60:, 0].mean(), rec.p99_wl_ms[60:, 0].mean()
        model = steady_state(scenario_load(sc, 60, 120), nodes, timeout_ms=1000)
        assert not model.saturated
        assert abs(model.mean_ms / sim_mean - 1) < 0.15, (model.mean_ms, sim_mean)
        assert abs(model.p99_ms / sim_p99 - 1) < 0.25, (model.p99_ms, sim_p99)


def test_the_smallest_size_meets_the_slo_and_one_fewer_does_not():
    load = scenario_load(_scenario(30_000, 4), 0, 60)
    n = smallest_nodes(load, 20.0)
    assert n is not None and n > 1
    assert steady_state(load, n).meets(20.0)
    assert not steady_state(load, n - 1).meets(20.0)
    tight = smallest_nodes(load, 5.0)
    assert tight is None or tight >= n  # a tighter objective never needs fewer nodes


def test_a_load_no_size_can_serve_within_the_objective_has_no_smallest_size():
    load = scenario_load(_scenario(30_000, 4), 0, 60)
    assert smallest_nodes(load, 0.1) is None  # below one round trip and RPC floor
    assert smallest_nodes(load, 50.0, max_nodes=1) is None  # one node saturates
    one = steady_state(load, 1)
    assert one.saturated and math.isinf(one.p99_ms) and one.failed_share == 1.0


@settings(max_examples=15, deadline=None)
@given(st.floats(1_000, 60_000), st.floats(1.1, 3.0))
def test_more_load_never_needs_fewer_nodes(ops, factor):
    base = scenario_load(_scenario(ops, 4), 0, 60)
    more = RegionLoad(base.reads * factor, base.writes * factor, base.scans * factor, base.size_mb,
                      base.tenant, base.hot_req, base.hot_size)
    a, b = smallest_nodes(base, 50.0), smallest_nodes(more, 50.0)
    # None: no size serves it (a hot region needs more than one node can give: split it)
    assert (a is None and b is None) or b is None or (a is not None and b >= a)


def test_each_tenant_gets_its_own_percentile():
    sc = scenario_from_dict({"name": "two", "duration_s": 60, "initial_nodes": 4, "workloads": [
        {"name": "gets", "ycsb": "C", "records": 300_000, "regions": 8, "rate": [[0, 8000]]},
        {"name": "scans", "ycsb": "E", "records": 300_000, "regions": 8, "rate": [[0, 400]]}]}, "<s>")
    state = steady_state(scenario_load(sc, 0, 60), 4)
    gets, scans = state.p99_by_tenant
    assert scans > gets and state.p99_ms == max(gets, scans)
    assert np.isfinite(state.mean_ms) and state.max_utilisation < 1


def test_the_steady_state_prices_servers_that_share_one_machine_as_the_simulator_does():
    load = scenario_load(_scenario(12_000, 4), 0, 60)
    shared = SimulatorSettings(hardware=HardwareSettings(shared_machine_cost_growth=0.38))
    alone, beside = steady_state(load, 4), steady_state(load, 4, shared)
    assert beside.max_utilisation > alone.max_utilisation and beside.p99_ms > alone.p99_ms
    assert steady_state(load, 1, shared) == steady_state(load, 1)
    # the smallest size that meets an objective can only grow when servers share a machine
    assert smallest_nodes(load, 20.0, shared) >= smallest_nodes(load, 20.0)


def test_the_steady_state_waits_out_a_quota_s_stops_as_the_simulator_does():
    """Nodes under a control-group CPU quota (simulator.solver.throttled_wait_survival, 100-ms
    period, running 15 % of it): nearly saturated, a node stops often enough that the p99 is
    a stop (85 ms) and the smallest size meeting 50 ms grows; at 70 % it rarely stops and
    serves its queue at full speed, so its p99 is shorter. The mean is the model's either way."""
    quota = SimulatorSettings(hardware=HardwareSettings(cpu_quota_period_ms=100.0, cpu_quota_run_share=0.15))
    near_full = scenario_load(_scenario(16_500, 3), 0, 60)
    stopped, plain = steady_state(near_full, 3, quota), steady_state(near_full, 3)
    assert stopped.max_utilisation > 0.95 and stopped.mean_ms == plain.mean_ms
    assert plain.p99_ms < 50.0 < 85.0 < stopped.p99_ms
    assert smallest_nodes(near_full, 50.0) == 3 and smallest_nodes(near_full, 50.0, quota) == 4
    easy = scenario_load(_scenario(12_000, 3), 0, 60)
    assert steady_state(easy, 3).max_utilisation < 0.75
    assert steady_state(easy, 3, quota).p99_ms < steady_state(easy, 3).p99_ms


def test_the_steady_state_sees_a_quota_d_node_stop_from_half_its_rate_as_the_simulator_does():
    """With the local cluster's wake-ups and periods' dispersion (hardware.cpu_wakeup_ms,
    cpu_quota_dispersion) a quota'd node at half its capacity asks more than its quota and
    stops in most periods: the oracle's p99 is a stop (85 ms) where without them it is a few
    ms, so the smallest size meeting 50 ms grows; at a light load nothing changes."""
    quota = HardwareSettings(cpu_quota_period_ms=100.0, cpu_quota_run_share=0.15)
    local = quota.model_copy(update={"cpu_wakeup_ms": 5.15, "cpu_wakeup_window_ms": 5.6, "cpu_quota_dispersion": 0.026})
    old, new = SimulatorSettings(hardware=quota), SimulatorSettings(hardware=local)
    half = scenario_load(_scenario(8_000, 3), 0, 60)
    before, after = steady_state(half, 3, old), steady_state(half, 3, new)
    assert 0.4 < after.max_utilisation < 0.6 and after.mean_ms == before.mean_ms
    assert before.p99_ms < 10.0 < 50.0 < after.p99_ms < 100.0
    assert smallest_nodes(half, 50.0, new) > smallest_nodes(half, 50.0, old)
    light = scenario_load(_scenario(1_000, 3), 0, 60)
    assert steady_state(light, 3, new).p99_ms < 10.0
