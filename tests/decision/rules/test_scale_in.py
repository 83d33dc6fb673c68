"""Scale in (decision/rules/scale_in.py): one node less when none is overloaded and the rest
have room (scale_in_on_headroom; off: MET's remove_fraction rule), moving only its partitions."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from decision import decide
from decision.model import Plan
from decision.rules.rule import Carry
from decision.rules.scale_in import ScaleIn
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import DONE, alone, marks
from tests.fixtures.snapshots import (
    even_snapshot as even, make_snapshot, partition, snapshots, spread_partitions, with_latency,
)

G = marks()
OFF = marks(scale_in_on_headroom=False)


def test_alone_it_removes_one_node_or_says_why_not():
    plan = alone(ScaleIn(), even([0.3, 0.3, 0.3, 0.3, 0.05]))
    assert isinstance(plan, Plan) and plan.sizing.delta == -1 and plan.memory.step == 1
    said = alone(ScaleIn(), even([0.55, 0.55, 0.55, 0.05]))
    assert isinstance(said, Carry) and said.note.startswith("1 underloaded, mean cpu spread over one node fewer (3)")
    # the words say which way the headroom comparison came out ((0.55 x 3 + 0.05) / 3 = 0.57)
    assert "0.57 >= 0.48" in said.note
    plan = decide(even([0.55, 0.55, 0.55, 0.05]), G, DONE)
    assert plan.is_empty and "0.57 >= 0.48" in plan.reason and "0.57 < 0.48" not in plan.reason
    assert alone(ScaleIn(), even([0.9, 0.05])) is None  # a node overloaded: not its turn


def test_scale_in_on_headroom_moves_only_the_removed_nodes_partitions():
    # One underloaded node of five (MET's 50 % rule would keep all five).
    snap = even([0.3, 0.3, 0.3, 0.3, 0.05])
    assert decide(snap, marks(paper_faithful=True), DONE).summary.terminations == 0
    plan = decide(snap, G, DONE)
    check_plan(snap, plan)
    gone = [a.node for a in plan.actions if a.op == "terminate"]
    assert len(gone) == 1 and plan.sizing.delta == -1
    moves = [a for a in plan.actions if a.op == "move"]
    assert moves and all(a.source == gone[0] and a.cause == "scale_in" for a in moves)
    assert not any(a.op in ("reconfigure", "compact") for a in plan.actions)


def test_headroom_off_scales_in_by_mets_rule_only():
    # One underloaded node of five: MET's rule wants half of them underloaded.
    one = even([0.3, 0.3, 0.3, 0.3, 0.05])
    held = decide(one, OFF, DONE)
    assert held.is_empty and held.reason == (
        "hold (nothing_pays): size unchanged and no node overloaded (no scale-in)")
    # Three of five underloaded, room on the rest: MET's rule removes one, saying so.
    three = even([0.3, 0.3, 0.05, 0.05, 0.05])
    plan = decide(three, OFF, DONE)
    check_plan(three, plan)
    assert plan.sizing.delta == -1 and plan.reason.startswith("scale in on headroom: MET's rule")
    assert all(a.source == plan.actions[-1].node for a in plan.actions if a.op == "move")
    # Off does not stop a cluster above a lowered max_nodes from losing one node a decision.
    pinned = decide(even([0.3] * 6), OFF.model_copy(update={"max_nodes": 4}), DONE)
    assert pinned.sizing.delta == -1 and "> max_nodes 4" in pinned.reason


def test_alone_with_headroom_off_it_removes_a_node_only_by_mets_rule_and_says_so():
    one = even([0.3, 0.3, 0.3, 0.3, 0.05])  # one underloaded node of five
    on = alone(ScaleIn(), one, G)
    assert isinstance(on, Plan) and on.sizing.delta == -1
    assert alone(ScaleIn(), one, OFF) == Carry(note="no scale-in")  # a later hold says it
    three = alone(ScaleIn(), even([0.3, 0.3, 0.05, 0.05, 0.05]), OFF)
    assert isinstance(three, Plan) and three.sizing.delta == -1
    assert three.reason.startswith("scale in on headroom: MET's rule: 0 of 5 active nodes "
                                   "overloaded, 3 underloaded")
    assert alone(ScaleIn(), even([0.9, 0.05]), OFF) is None  # overloaded: never, on or off


def test_scale_in_spreads_the_removed_nodes_idle_partitions_by_count():
    """Idle partitions weigh nothing by load: placed by load alone they all landed on one
    node, which then took all of their load when they woke (a daily peak's tables)."""
    ids = ["rs1", "rs2", "rs3", "rs4", "rs5"]
    parts = spread_partitions(ids[:4], [(100.0, 50.0, 0.0)] * 8)
    parts += [partition("trickle", "rs5", reads=5.0)]
    parts += [partition(f"idle{k}", "rs5") for k in range(8)]  # a tenant gone quiet
    snap = make_snapshot([0.3, 0.3, 0.3, 0.3, 0.02], parts)
    plan = decide(snap, G, DONE)
    check_plan(snap, plan)
    assert [a.node for a in plan.actions if a.op == "terminate"] == ["rs5"]
    got = [sum(a.op == "move" and a.target == n for a in plan.actions) for n in ids[:4]]
    assert sum(got) == 9 and max(got) - min(got) <= 1, got


def test_no_scale_in_without_headroom():
    plan = decide(even([0.45, 0.45, 0.45, 0.05]), G, DONE)  # 1.4 cpu over 3 nodes: 0.47 > 0.48?
    assert plan.summary.terminations == (1 if 1.4 / 3 < 0.48 else 0)
    plan = decide(even([0.55, 0.55, 0.55, 0.05]), G, DONE)
    assert plan.is_empty


def test_at_min_nodes_nothing_is_removed_and_nothing_said_about_it():
    plan = decide(even([0.05, 0.05]), marks(min_nodes=2), DONE)
    assert plan.is_empty
    assert plan.reason == "hold (nothing_pays): size unchanged and no node overloaded"


def test_above_max_nodes_an_underloaded_cluster_loses_one_node_a_decision():
    snap = even([0.05] * 6)
    for paper in (False, True):
        plan = decide(snap, marks(max_nodes=3, paper_faithful=paper), DONE)
        assert plan.sizing.delta == -1 and plan.summary.terminations <= 1


SLO = marks(latency_slo_ms=50)


def test_scale_in_waits_until_latency_is_comfortably_under_the_slo():
    snap = even([0.3, 0.3, 0.3, 0.3, 0.05])  # headroom to lose a node (see above)
    assert decide(with_latency(snap, [20.0] * 5), SLO, DONE).summary.terminations == 1
    held = decide(with_latency(snap, [20.0, 20.0, 30.0, 20.0, 1.0]), SLO, DONE)
    assert held.is_empty and "slowest node 30.0 ms > 25 ms" in held.reason


@settings(max_examples=40, deadline=None)
@given(snapshots(min_nodes=2, max_nodes=8, max_partitions=60), st.booleans())
def test_scale_in_moves_only_what_leaves_and_never_while_a_node_is_overloaded(snap, headroom):
    plan = decide(snap, marks(scale_in_on_headroom=headroom), DONE)
    gone = {a.node for a in plan.actions if a.op == "terminate"}
    if gone:
        assert len(gone) == 1
        assert all(a.source in gone for a in plan.actions if a.op == "move")
        assert not any(a.op in ("launch", "reconfigure", "compact") for a in plan.actions)
        assert not any(v.verdict == "overloaded" for v in plan.health.nodes)


def test_busy_nodes_that_serve_in_time_do_not_keep_every_node_bought_for_a_tenant_gone():
    """tenant-churn: the resident's busy regions stayed on three nodes over cpu_high (served in
    0.8 ms against 50) while ten others idled after the newcomer left; the busy three held
    every scale-in (`within_slo`) for the run's last 15 minutes, at 13 nodes where 4 served."""
    cpus = [0.7, 0.7, 0.7] + [0.05] * 7
    snap = with_latency(even(cpus), [0.8] * 3 + [0.5] * 7)
    plan = decide(snap, SLO, DONE)
    check_plan(snap, plan)
    assert plan.sizing.delta == -1 and plan.summary.terminations == 1
    gone = next(a.node for a in plan.actions if a.op == "terminate")
    busy = {n.id for n in snap.nodes[:3]}
    assert gone not in busy
    assert not any(a.op == "move" and a.target in busy for a in plan.actions)
    # switched off, the busy nodes hold it as before, and the hold says why
    held = decide(snap, marks(latency_slo_ms=50, scale_in_while_within_slo=False), DONE)
    assert held.is_empty and "within_slo" in held.reason
    # a node short of capacity (slow) still forbids any removal
    slow = decide(with_latency(even(cpus), [80.0] + [0.8] * 2 + [0.5] * 7), SLO, DONE)
    assert slow.summary.terminations == 0
