"""The default met's whole rule list (decision/rules/__init__.py) through decide(): what the
rules do together, and the safety every combination of switches keeps."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from decision import decide
from decision.demand import backlogged
from decision.model import ClusterSnapshot, DecisionMemory, Node, NodeMetrics
from decision.policy import PolicyConfig
from decision.rules.diagnose import latency_slo
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import DONE, marks, watched
from tests.fixtures.snapshots import (
    carry_out, even_snapshot as even, later, make_snapshot, node, partition, snapshots,
)

G = PolicyConfig()  # the default: the rules


def test_no_plan_when_size_unchanged_and_nothing_overloaded():
    snap = even([0.5, 0.5, 0.05])  # one underloaded, but no headroom to remove a node
    plan = decide(snap, G, DONE)
    assert plan.is_empty and plan.reason.startswith("hold (nothing_pays)")
    # MET as the paper writes it re-places and reconfigures the same cluster.
    paper = decide(snap, PolicyConfig(paper_faithful=True), DecisionMemory())
    assert not paper.is_empty


SWITCHES = st.fixed_dictionaries({
    "diagnose": st.booleans(), "verify_after_acting": st.booleans(),
    "proportional_sizing": st.booleans(), "split_hot_partitions": st.booleans(),
    "scale_in_on_headroom": st.booleans(), "move_only_what_pays": st.booleans(),
    "latency_gate": st.booleans(), "move_gain_vs_cost": st.booleans(),
    "scale_out_ceiling": st.sampled_from(["met_step", "double"]),
    "predict_cycle_s": st.sampled_from([None, 3600.0]),
    "latency_slo_ms": st.sampled_from([None, 50.0]),
})


@settings(max_examples=120, deadline=None)
@given(snapshots(max_nodes=8, max_partitions=40), SWITCHES, st.integers(1, 16), st.booleans(),
       st.integers(1, 10), st.integers(1, 3))
# above max_nodes beside a node whose memory is full but whose requests take 0 ms (found by
# this test): the removal is allowed, since that node serves in time
@example(ClusterSnapshot(datetime(2026, 11, 22, 10, 0, tzinfo=UTC), (
    Node("rs1", "default", "active", NodeMetrics(0.0, 0.0, 0.0)),
    Node("rs2", "default", "active", NodeMetrics(0.0, 0.0, 1.0, rpc_latency_ms=0.0))), ()),
    {"diagnose": False, "verify_after_acting": False, "proportional_sizing": False,
     "split_hot_partitions": False, "scale_in_on_headroom": False, "move_only_what_pays": False,
     "latency_gate": True, "move_gain_vs_cost": False, "scale_out_ceiling": "met_step",
     "predict_cycle_s": None, "latency_slo_ms": 50.0}, 1, False, 1, 1)
def test_every_combination_of_switches_keeps_the_safety_rules(snap, switches, step, first_done,
                                                               max_nodes, min_nodes):
    """Whatever is switched off: never above max_nodes by a scale-out, never below min_nodes,
    never more than one node removed, never a removal while a node is overloaded and late (busy
    nodes that serve in time do not hold it: scale_in_while_within_slo), never a
    scale-out a verdict of no gain refused, and every plan consistent."""
    policy = PolicyConfig(max_nodes=max(max_nodes, min_nodes), min_nodes=min_nodes, **switches)
    plan = decide(snap, policy, DecisionMemory(step=step, first_decision_done=first_done))
    check_plan(snap, plan)
    current = sum(n.state == "active" for n in snap.nodes)
    if plan.sizing.delta > 0:
        assert plan.sizing.target <= policy.max_nodes
    if plan.sizing.delta < 0:
        assert plan.sizing.target >= policy.min_nodes and plan.sizing.delta == -1
        late = {v.node for v in plan.health.nodes if v.verdict == "overloaded"} - _served_in_time(snap, policy)
        assert not late
    assert plan.summary.terminations <= 1
    assert plan.sizing.target == current + plan.sizing.delta


def _served_in_time(snap, policy) -> set[str]:
    """Busy nodes that do not hold a scale-in (scale_in_while_within_slo): their requests are
    answered within the latency objective and none wait beyond a handful or go unanswered."""
    slo = latency_slo(policy)
    if not policy.scale_in_while_within_slo or slo is None:
        return set()
    return {n.id for n in snap.nodes if n.metrics is not None and n.metrics.rpc_latency_ms is not None
            and n.metrics.rpc_latency_ms <= slo and not backlogged(n.metrics.rpc_queue_length)
            and not (n.metrics.rpc_dropped_per_s or 0.0) > 0}


@settings(max_examples=80, deadline=None)
@given(snapshots(max_nodes=8, max_partitions=40), st.integers(1, 16), st.booleans(),
       st.integers(1, 10), st.booleans())
def test_safety_on_any_snapshot(snap, step, first_done, max_nodes, paper):
    """Never more than one node removed, never a shrink while a node is overloaded, never a
    shrink because the cluster is above max_nodes, and every plan consistent."""
    policy = PolicyConfig(max_nodes=max_nodes, paper_faithful=paper)
    plan = decide(snap, policy, DecisionMemory(step=step, first_decision_done=first_done))
    check_plan(snap, plan)
    assert plan.summary.terminations <= 1 and plan.sizing.delta >= -1
    if any(v.verdict == "overloaded" for v in plan.health.nodes):
        assert plan.sizing.delta >= 0 and plan.summary.terminations == 0
    if not paper:
        assert plan.sizing.delta <= step
        if plan.sizing.delta == 0 and not any(v.verdict == "overloaded"
                                              for v in plan.health.nodes):
            assert plan.is_empty


def test_steady_load_converges():
    """Once a steady cluster is placed, repeated decisions plan nothing."""
    snap = even([0.9] * 4)
    memory = DecisionMemory(step=8, first_decision_done=True)
    moves_late = 0
    for k in range(12):
        plan = decide(snap, G, memory)
        memory = plan.memory
        # Load now spread: cpu proportional to each node's share of requests.
        after = carry_out(snap, plan)
        loads: dict[str, float] = {}
        for p in after.partitions:
            loads[p.node] = loads.get(p.node, 0.0) + p.requests
        total = sum(loads.values())
        # 3.6 CPUs of work in all (0.9 on each of the first 4 nodes), by share of requests.
        nodes = tuple(Node(n.id, n.profile, n.state, NodeMetrics(
            min(1.0, 3.6 * loads.get(n.id, 0.0) / total), 0.01, 0.5)) for n in after.nodes)
        snap = later(type(after)(after.taken_at, nodes, after.partitions), 600)
        if k >= 2:
            moves_late += plan.summary.moves + plan.summary.launches + plan.summary.terminations
    assert moves_late == 0


def test_a_partition_being_split_is_not_also_moved_and_the_assignment_says_so():
    # Found by test_any_plan_is_consistent: two nodes overloaded by one hot partition each; the
    # rebalance moved the partition rs6 splits and the plan then dropped that move but kept it
    # in the assignment. A partition being split stays where it is in moves and assignment.
    parts = [partition("p0", "rs4", scans=1.0)] + \
        [partition(f"p{k}", "rs1") for k in (1, 2, 3)] + \
        [partition("p4", "rs6", scans=1.0), partition("p5", "rs6", scans=1.0)]
    snap = make_snapshot([node(f"rs{i + 1}", cpu=0.0, io_wait=io, memory=0.0)
                          for i, io in enumerate((0, 0, 0, 1.0, 0, 0.375))], parts)
    # disk-bound nodes (io_wait): MET's marks see them (sized from demand counts CPU only)
    plan = decide(snap, marks(), DecisionMemory())
    check_plan(snap, plan)
    split = {a.partition for a in plan.actions if a.op == "split"}
    assert split and not split & {a.partition for a in plan.actions if a.op == "move"}


STORE = PolicyConfig(data_placement="store")


def cassandra_like(cpus):
    """Cassandra's shape: one table, so one partition per node (the table's data on it)."""
    parts = [partition(f"usertable@rs{i + 1}", f"rs{i + 1}", reads=500, writes=500)
             for i in range(len(cpus))]
    return make_snapshot(cpus, parts)


def test_a_store_that_places_its_data_is_sized_not_rearranged():
    snap = cassandra_like([0.95, 0.95])
    # metctl placing the data: each node's load is its one partition, "hot": split, no node
    assert decide(snap, G, DONE).sizing.delta == 0
    plan = decide(snap, STORE, DONE)
    check_plan(snap, plan)
    assert plan.sizing.delta == 1 and plan.reason.startswith("scale out")
    assert [a.op for a in plan.actions] == ["launch"]
    assert "gives it its share of the data as it joins" in plan.actions[0].reason


def test_a_store_that_places_its_data_scales_in_by_decommissioning_one_node():
    snap = cassandra_like([0.3, 0.3, 0.3, 0.05])
    # by MET's marks at once; sized from demand once the demand fit fewer nodes for a while
    assert [a.op for a in decide(snap, marks(data_placement="store"), DONE).actions] == \
        ["drain", "terminate"]
    plan = decide(snap, STORE, watched(snap, STORE, seconds=630.0))
    assert [a.op for a in plan.actions] == ["drain", "terminate"]
    assert plan.sizing.delta == -1 and plan.summary.moves == 0
    # the kept nodes keep their data; the removed node's share leaves with its decommission
    assert sorted(a.node for a in plan.assignment) == ["rs1", "rs2", "rs3"]
    assert all(a.partitions == (f"usertable@{a.node}",) for a in plan.assignment)


def _holder(plan, pid):
    return next(a.node for a in plan.assignment if pid in a.partitions)


def test_a_partition_changes_class_only_after_reclassify_after_plans_in_a_row():
    # Full re-placement (move_only_what_pays: false): a read partition whose requests turn to
    # writes for one decision stays with the read nodes; the second decision in a row moves it.
    def snap(flipped):
        parts = [partition(f"r{k}", "rs1", reads=50) for k in range(4)] + \
            [partition(f"w{k}", "rs2", writes=50) for k in range(4)]
        if flipped:
            parts[0] = partition("r0", "rs1", writes=50)
        return make_snapshot([node("rs1", cpu=0.3, profile="read"),
                              node("rs2", cpu=0.3, profile="write")], parts)

    policy = G.model_copy(update={"move_only_what_pays": False, "reclassify_after": 2})
    first = decide(snap(True), policy, DONE)
    check_plan(snap(True), first)
    assert _holder(first, "r0") == "rs1"
    second = decide(snap(True), policy, first.memory)
    assert _holder(second, "r0") == "rs2"
    # a flip that does not last starts the count again
    back = decide(snap(False), policy, first.memory)
    again = decide(snap(True), policy, back.memory)
    assert _holder(again, "r0") == "rs1"
    # 1 (and MET as the paper writes it): at once
    assert _holder(decide(snap(True), policy.model_copy(update={"reclassify_after": 1}), DONE),
                   "r0") == "rs2"


@pytest.mark.parametrize("policy", [G, PolicyConfig(move_only_what_pays=False)])
def test_every_decision_remembers_that_the_first_decision_was_made(policy):
    plan = decide(even([0.3, 0.3]), policy, DecisionMemory())
    assert plan.memory.first_decision_done
