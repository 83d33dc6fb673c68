"""Demand that does not wait (issue 25): open-loop tenants on the simulated cluster. A cluster
that is too small fails requests and misses the SLO, one big enough meets it; the tail grows
faster than the mean near saturation; past capacity the backlog grows and drains when the load
falls; capacity comes with a new node only once it serves, and leaves with a node at once."""
from __future__ import annotations

import numpy as np

from controller.scoring import slo_summary
from simulator.cluster import SimCluster
from simulator.scenario import scenario_from_dict

# One table of cached gets spread evenly over 6 regions: on default nodes (2 cores, 0.2 ms of
# CPU per get) each node serves ~10,000 gets/s, so n nodes ~ n x 10,000.
PER_NODE = 10_000


def _scenario(rate, nodes=3, duration_s=120, timeout_ms=1000, extra=(), **kw):
    web = {"name": "web", "ycsb": "C", "records": 200_000, "regions": 6, "hot_data_fraction": 1.0,
           "hot_ops_fraction": 1.0, "rate": rate, "timeout_ms": timeout_ms}
    return scenario_from_dict({"name": "open", "duration_s": duration_s, "seed": 5, "initial_nodes": nodes,
                               "workloads": [web, *extra], **kw}, "<open>")


def _run(sc, until=None):
    cl = SimCluster(sc)
    cl.run_until(sc.duration_s if until is None else until)
    return cl, cl.recording()


def test_a_cluster_too_small_fails_requests_and_misses_the_slo_one_big_enough_meets_it():
    rate = {"shape": "constant", "ops_per_s": 2.5 * PER_NODE}
    small = slo_summary(_run(_scenario(rate, nodes=2))[1], _scenario(rate, nodes=2))
    big = slo_summary(_run(_scenario(rate, nodes=4))[1], _scenario(rate, nodes=4))
    assert small["slo_attainment"] < 0.5 and small["ops_failed"] > 0.1 * small["ops_offered"]
    assert big["slo_attainment"] >= 0.99 and big["ops_failed"] == 0


def test_near_saturation_the_p99_grows_much_faster_than_the_mean():
    def steady(share):
        rec = _run(_scenario({"shape": "constant", "ops_per_s": share * 3 * PER_NODE}, duration_s=60))[1]
        return rec.latency_wl_ms[20:, 0].mean(), rec.p99_wl_ms[20:, 0].mean()
    mean_half, p99_half = steady(0.5)
    mean_busy, p99_busy = steady(0.95)
    assert p99_busy - p99_half > 3 * (mean_busy - mean_half) > 0
    assert p99_busy > 3 * p99_half


def test_doubling_the_rate_past_capacity_more_than_doubles_the_backlog():
    def backlog(rate):  # a long timeout: nothing is shed, the queue only grows
        rec = _run(_scenario({"shape": "constant", "ops_per_s": rate}, duration_s=30, timeout_ms=600_000))[1]
        return rec.backlog[-1, 0]
    once, twice = backlog(3.6 * PER_NODE), backlog(7.2 * PER_NODE)
    assert once > 0 and twice > 2 * once


def test_the_backlog_drains_after_the_load_falls():
    rate = {"shape": "steps", "steps": [[0, 3.6 * PER_NODE], [20, PER_NODE]]}
    rec = _run(_scenario(rate, duration_s=60, timeout_ms=600_000))[1]
    peak = rec.backlog[19, 0]
    assert peak > 0 and rec.failed.sum() == 0
    drained = np.argmax(rec.backlog[20:, 0] == 0)
    assert rec.backlog[20 + drained, 0] == 0 and drained <= 10
    assert rec.ops[20, 0] > rec.offered[20, 0]  # serving the backlog on top of the new arrivals
    # latency is measured from each request's arrival: the backlog's wait shows while it drains
    assert rec.latency_wl_ms[20, 0] > 10 * rec.latency_wl_ms[50, 0]


def test_requests_are_conserved_step_by_step_through_moves_and_a_failure():
    sc = _scenario({"shape": "constant", "ops_per_s": 1.5 * PER_NODE}, duration_s=200)
    cl = SimCluster(sc)
    cl.run_until(20)
    cl.move(int(np.where(cl.reg_server == 0)[0][0]), 1)
    cl.run_until(60)
    cl.terminate(cl.nodes[2])  # its regions reopen elsewhere after the failover time
    cl.run_until(200)
    rec = cl.recording()
    before = np.concatenate([[0.0], rec.backlog[:-1, 0]])
    assert np.allclose(before + rec.offered[:, 0], rec.ops[:, 0] + rec.failed[:, 0] + rec.backlog[:, 0],
                       rtol=1e-9, atol=1e-6)
    assert np.all(rec.backlog >= 0) and np.all(rec.failed >= 0)
    # the dead server's regions are offline for the failover time: their requests time out
    failover = rec.failed[61:61 + int(cl.settings.actions.failover_s) - 2, 0]
    assert np.all(failover > 0.2 * 1.5 * PER_NODE)
    assert rec.failed[150:, 0].sum() == 0


def test_a_new_node_helps_only_once_it_serves_and_removing_one_drops_capacity_at_once():
    sc = _scenario({"shape": "constant", "ops_per_s": 2.5 * PER_NODE}, nodes=2, duration_s=400)
    cl = SimCluster(sc)
    cl.run_until(10)
    cl.launch("default", {"metctl:managed": "true", "metctl:cluster": "demo"})
    a = cl.settings.actions
    joined = 10 + a.vm_boot_s + a.rs_join_s
    cl.run_until(400)
    rec = cl.recording()
    assert np.all(rec.failed[11:int(joined) - 1, 0] > 0)  # booting: no capacity yet
    assert rec.failed[int(joined) + 30:, 0].sum() == 0  # serving its regions: enough
    # scaling in: the capacity leaves with the node at once
    cl.decommission(cl.nodes[2])
    cl.run_until(420)
    assert cl.recording().failed[-15:, 0].sum() > 0


def test_client_machines_do_not_cap_open_loop_demand():
    rate = {"shape": "constant", "ops_per_s": 4 * PER_NODE}
    rec = _run(_scenario(rate, nodes=6, duration_s=30))[1]
    assert abs(rec.ops[5:, 0].mean() / (4 * PER_NODE) - 1) < 0.02
    closed = scenario_from_dict({"name": "closed", "duration_s": 30, "seed": 5, "initial_nodes": 6, "workloads": [
        {"name": "web", "ycsb": "C", "records": 200_000, "regions": 6, "threads": 400}]}, "<closed>")
    # one 2-core client machine issues at most ~16,700 gets/s (simulator.costs.client_op_cpu_ms)
    assert _run(closed)[1].ops[5:, 0].mean() < 0.45 * 4 * PER_NODE


def test_an_open_load_near_saturation_slows_a_closed_tenant_on_the_same_nodes():
    batch = {"name": "batch", "ycsb": "B", "records": 200_000, "regions": 3, "threads": 10}

    def closed_throughput(open_share):
        sc = _scenario({"shape": "constant", "ops_per_s": open_share * 3 * PER_NODE}, duration_s=40, extra=[batch])
        return _run(sc)[1].ops[10:, 1].mean()
    alone, beside_busy = closed_throughput(0.05), closed_throughput(0.9)
    assert beside_busy < 0.5 * alone


def test_a_saturated_server_shows_its_call_queue_and_the_calls_it_drops_as_hbase_does():
    """What the policy sees of demand it cannot serve: a server past saturation reports calls
    waiting in its call queue and a growing count of calls dropped unanswered (HBase's
    numCallsInGeneralQueue, exceptions.callTimedOut); one below saturation reports neither.
    Served plus dropped per second is about what was offered."""
    from simulator.adapters import SimMetricsSource

    def sample(rate, nodes):
        cl = SimCluster(_scenario({"shape": "constant", "ops_per_s": rate}, nodes=nodes,
                                  duration_s=40))
        cl.run_until(20)
        first = SimMetricsSource(cl).sample()
        cl.run_until(40)
        return cl, first, SimMetricsSource(cl).sample()
    cl, first, last = sample(4 * PER_NODE, 2)
    assert all(q > 1000 for q in last.server_queue_length.values())
    dropped = sum(last.server_dropped_calls[s] - first.server_dropped_calls[s]
                  for s in last.server_dropped_calls) / 20.0
    rec = cl.recording()
    served = rec.ops[20:40, 0].sum() / 20.0
    assert dropped > 0 and abs(served + dropped - 4 * PER_NODE) < 0.1 * 4 * PER_NODE
    _, first, last = sample(1 * PER_NODE, 2)
    assert all(q == 0 for q in last.server_queue_length.values())
    assert last.server_dropped_calls == first.server_dropped_calls


def test_each_step_records_the_share_of_answers_over_the_objective_as_its_p99_says():
    # near saturation some steps' p99 cross the objective and some do not: a step's share of
    # answers slower than slo_latency_ms is over 1 % exactly when its p99 is over it
    sc = _scenario({"shape": "constant", "ops_per_s": 0.93 * 3 * PER_NODE}, duration_s=90,
                   slo_latency_ms=7)
    rec = _run(sc)[1]
    p99, slow = rec.p99_wl_ms[10:, 0], rec.slow_wl[10:, 0]
    clear = np.abs(p99 - 7.0) > 0.02 * 7.0  # away from the quantile's own tolerance
    assert (p99[clear] > 7.0).sum() >= 5 and (p99[clear] < 7.0).sum() >= 5
    assert np.array_equal(slow[clear] > 0.01, p99[clear] > 7.0)
    assert ((slow >= 0) & (slow <= 1)).all()
