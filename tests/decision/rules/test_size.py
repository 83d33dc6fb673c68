"""Size to demand (decision/rules/size.py): a scale-out sized from the demand the nodes are
asked for (what they serve plus what queues), not from a step."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from decision import decide
from decision.model import Plan
from decision.rules.measure import Measure
from decision.rules.size import SizeToDemand, demand_target
from tests.fixtures.rules import DONE, SIZED, context, marks, queues_grew, sized, watched
from tests.fixtures.snapshots import later, queued_snapshot


def short_cluster(nodes=4, asked_over_served=1.5, cpu=0.9):
    """`nodes` nodes at `cpu`, each serving 600 requests/s with a call queue that grew by the
    excess over the last second (QUEUED, below): `asked_over_served` x that is asked."""
    return queued_snapshot([cpu] * nodes, [600.0 * (asked_over_served - 1)] * nodes,
                           latency_ms=1000.0)


QUEUED = queues_grew(short_cluster())  # the queues empty a second before (same nodes, time)


def test_alone_it_scales_out_to_the_nodes_the_demand_asks_for_and_fills_them():
    plan = sized(SizeToDemand(), short_cluster(), memory=QUEUED)
    # 4 nodes x 0.9 CPU x 1.5 (asked over served) = 5.4 node-loads; 6 nodes carry it at 90 %
    assert isinstance(plan, Plan) and plan.sizing.target == 6 and plan.sizing.delta == 2
    assert "6 nodes carry 5.40 node-loads at 90% each" in plan.reason
    assert "3,600 requests/s asked of 2,400 served" in plan.reason
    # what metctl explain shows: demand now and forecast, capacity, headroom, the lead time
    assert "demand 5.40 node-loads" in plan.reason and "5.40 forecast in 480 s" in plan.reason
    assert "runs up to 90% CPU within the SLO less 20% headroom" in plan.reason
    assert "lead time 420 s (scale_out_lead_s, not measured yet)" in plan.reason
    launched = {a.node for a in plan.actions if a.op == "launch"}
    assert len(launched) == 2
    # every new node gets busy partitions, off the nodes that are short
    assert launched <= {a.target for a in plan.actions if a.op == "move"}
    assert {a.source for a in plan.actions if a.op == "move"} <= {"rs1", "rs2", "rs3", "rs4"}


def test_a_cpu_bound_cluster_is_not_under_sized_by_its_cpu_reading():
    # CPU reads 0.9 everywhere whatever the excess: the queue says 3x is asked. MET's marks
    # add their step (1); sized from demand asks for ceil(4 x 0.9 x 3 / 0.9) = 12, at most
    # doubling in one decision
    snap = short_cluster(asked_over_served=3.0)
    assert decide(snap, marks(latency_slo_ms=50.0), DONE).sizing.delta == 1
    plan = decide(snap, SIZED, QUEUED)
    assert plan.sizing.target == 8 and "at most 8: +4 or doubling a decision" in plan.reason


def test_nothing_short_and_room_left_adds_nothing_and_switched_off_it_is_silent():
    calm = queued_snapshot([0.5] * 4)
    assert sized(SizeToDemand(), calm) is None
    off = SIZED.model_copy(update={"size_from_demand": False})
    assert sized(SizeToDemand(), short_cluster(), off) is None
    # off, the default met sizes by MET's marks again
    assert decide(short_cluster(), off, DONE).reason.startswith("scale out")


def test_at_max_nodes_it_holds_with_the_bounds_reason():
    plan = decide(short_cluster(), SIZED.model_copy(update={"max_nodes": 4}), QUEUED)
    assert plan.is_empty and "no node added (4 active nodes >= max_nodes 4" in plan.reason


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.05, 1.0), min_size=1, max_size=8), st.floats(1.0, 4.0),
       st.integers(1, 40))
def test_the_size_chosen_carries_the_demand_at_u_max_unless_a_limit_binds(cpus, factor, max_nodes):
    snap = queued_snapshot(cpus, [600.0 * (factor - 1)] * len(cpus), latency_ms=1000.0)
    policy = SIZED.model_copy(update={"max_nodes": max(max_nodes, len(cpus))})
    ctx = context(snap, policy, queues_grew(snap), observers=(Measure(),))
    view = ctx.view
    assert view is not None
    target, _ = demand_target(ctx, view)
    demand = view.out_demand
    limit = min(len(cpus) + max(4, len(cpus)), policy.max_nodes)
    if target < limit:
        assert target * view.u_max >= demand - 1e-9  # it carries the demand
        assert target == 1 or (target - 1) * view.u_max < demand + 1e-9  # and no more
    else:
        assert target == limit and math.ceil(demand / view.u_max - 1e-9) >= limit


def test_latency_while_a_plan_moves_data_teaches_nothing_about_a_nodes_speed():
    # a calm cluster teaches its service time; while a plan runs (regions moving, caches
    # cold) its requests take 8x as long at the same CPU: that is the plan, not the nodes
    calm = queued_snapshot([0.5] * 4, latency_ms=5.0)
    memory = watched(calm, SIZED)
    cold = later(queued_snapshot([0.5] * 4, latency_ms=40.0), 30.0)

    def u_max(memory):
        return context(cold, SIZED, memory, observers=(Measure(),)).view.u_max

    before = context(later(calm, 30.0), SIZED, memory, observers=(Measure(),)).view.u_max
    assert u_max(memory.with_plan_in_flight(6)) == before
    assert u_max(memory) < before  # the same latency with no plan running is the nodes'
