"""Even out (`even_out`, with size_from_demand): busy partitions move off a node beyond its
capacity at the SLO to the coolest nodes until it is back under, each move only when it pays
(rules/moves.py: the load it takes off the hotter node over move_payback_s outweighs its
warm-up and offline time). Idle partitions stay put. The same moves place a scale-out's new
nodes (rules/size.py).

It acts only where a tenant is losing its SLO now: a node beyond its capacity (or short:
requests queue or are dropped) with room elsewhere. An uneven cluster that serves every tenant
in time is left alone: every busy partition moved is a cold cache and a moment offline for its
tenant, which the SLO windows count.

Load here is in units of a node's capacity at the SLO (demand / u_max): 1.0 is a full node.
"""
from __future__ import annotations

import numpy as np

from decision.arrays import SnapshotArrays
from decision.model import Plan, Sizing
from decision.rules.moves import Move, greedy_moves
from decision.rules.plans import build
from decision.rules.rule import Context, Rule
from decision.rules.view import DemandView


def normalised(view: DemandView) -> tuple[np.ndarray, np.ndarray]:
    """Each active node's and each partition's demand in node capacities (demand / u_max)."""
    return view.demands.node_demand() / view.u_max, view.demands.partition / view.u_max


def requests_load(view: DemandView, arrays: SnapshotArrays) -> np.ndarray | None:
    """Each active node's load in node capacities as its partitions' requests cost at the
    learned cost per request of the profile new nodes take (0 for a node of another profile,
    whose cost is not that one), or None before that cost is learned."""
    if view.capacity is None:
        return None
    get, mutation, scan = view.capacity.cost
    cost = arrays.reads * get + arrays.writes * mutation + arrays.scans * scan
    on = arrays.node_of >= 0
    load = np.bincount(arrays.node_of[on], weights=cost[on], minlength=len(arrays.active))
    same = np.array([n.profile == view.profile for n in arrays.active], dtype=bool)
    return np.where(same, load, 0.0) / view.u_max


def relief_moves(ctx: Context, view: DemandView, nodes: int, growth: float = 1.0,
                 queued: frozenset[str] = frozenset(),
                 plan_nodes: frozenset[str] = frozenset(), retarget: bool = False) -> list[Move]:
    """Moves that bring every node of `nodes` (the active ones, then new ones with nothing yet)
    under its capacity at the SLO with the demand grown by `growth` (the forecast over the
    lead time over today's), hottest first, each onto the coolest node where it pays. A node
    already under is left alone: every busy partition moved is a cold cache and a moment
    offline for its tenant. `queued`: partitions a plan in flight moves onto the nodes it
    launches: until they land they stay out, and their load counts as gone from their nodes,
    so the nodes that plan left hot are the ones relieved, not the same sources again; once
    landed (on a node not in `plan_nodes`, the nodes active when that plan was decided) they
    are their new node's like any other, and may move on if it is hot (a plan that a ramp
    keeps extending lasts long enough for that). A node the plan launched that holds nothing
    yet, while some of them still wait to leave, reads low while it waits for them: it takes
    no more. One that holds a partition, whatever brought it, or that nothing is on its way to
    any more (its moves went to serving nodes while it booted), is a node like any other: a
    node left out as "arriving" for as long as a ramp keeps extending its plan served one
    partition at a tenth of its CPU for twenty minutes beside nodes at their capacity
    (open-big-ramp, seed 1). `retarget`: the
    partitions still waiting to leave count on their nodes and may be sent to a serving node
    instead (the executor re-targets a move that waits for a booting node)."""
    load, cost = normalised(view)
    arrays = ctx.arrays
    leaving_ids: frozenset[str] = frozenset()
    waiting = False  # some queued partition still sits on a node of the plan
    if queued:
        # A queued partition still on a node of the plan is leaving it (it stays put here); one
        # already on a node that plan launched has landed and is that node's load like any other.
        placed = arrays.node_of >= 0
        is_queued = np.fromiter((pid in queued for pid in arrays.ids), bool, len(arrays.ids)) & placed
        of_plan = np.array([not plan_nodes or n.id in plan_nodes for n in arrays.active] + [False])
        on_plan = of_plan[arrays.node_of]  # node_of -1 (unplaced) reads the appended False
        leaving = np.flatnonzero(is_queued & on_plan)
        waiting = leaving.size > 0
        if retarget:
            leaving = leaving[:0]  # still here, serving: theirs is this node's load
        leaving_ids = frozenset(arrays.ids[i] for i in leaving.tolist())
        if leaving.size:
            load = np.maximum(load - np.bincount(arrays.node_of[leaving], weights=cost[leaving],
                                                 minlength=len(load)), 0.0)
    holding = set(arrays.node_of[arrays.node_of >= 0].tolist())
    arriving = {i for i, n in enumerate(arrays.active)
                if waiting and plan_nodes and n.id not in plan_nodes and i not in holding}
    load = np.concatenate([load * growth, np.zeros(nodes - len(load))])
    cost = cost * growth
    mean = float(load.sum()) / max(nodes, 1)
    top = max(1.0, mean)
    sources = [i for i in range(len(view.demands.nodes)) if load[i] > top]
    if not sources:
        return []
    # A node takes partitions by the load it reads, and one that just took some reads the CPU
    # of before: the monitor's smoothing follows a step a sample or two late, while the
    # partitions bring their smoothed rates along (monitor/collector.py keeps a partition's
    # series across a move). Read cool, it was sent more in the next decisions and ran
    # saturated (business-day seed 1: rs9 read 0.18 CPU with four partitions of 864 requests/s
    # each, took five more and answered in 752 ms). So a destination carries at least what its
    # partitions' requests cost, those still waiting to leave for a booting node included
    # (they leave when it is up; what is sent now arrives now); a source keeps the load that
    # made it one.
    floor = requests_load(view, arrays)
    if floor is not None:
        taking = np.ones(len(load), dtype=bool)
        taking[sources] = False
        least = np.concatenate([floor * growth, np.zeros(len(load) - len(floor))])
        load = np.where(taking, np.maximum(load, least), load)
    # a node that reads hot already is hot, whatever else is on its way: it is a source too
    moves, _ = greedy_moves(arrays, load, sources, [d for d in range(nodes) if d not in arriving],
                            target_load=top, cap=top, policy=ctx.policy, cost=cost,
                            stay=leaving_ids)
    return moves


def hot_nodes(view: DemandView, load: np.ndarray, tolerance: float) -> list[int]:
    """The active nodes (indices) beyond their capacity at the SLO (`load`, normalised) by more
    than `tolerance`, or short of it now (requests queue or are dropped)."""
    short = set(view.short)
    return [i for i, n in enumerate(view.demands.nodes) if load[i] > 1.0 + tolerance or n.node in short]


def even_words(ctx: Context, view: DemandView, load: np.ndarray, moves: list[Move]) -> str:
    """The hottest node the moves leave (not the hottest of the nodes that set the even-out
    off: a node slow at little load may, and the moves then come off another), its load, the
    mean."""
    hottest = max({int(ctx.arrays.node_of[p]) for p, _, _ in moves}, key=lambda i: load[i])
    return (f"{view.demands.nodes[hottest].node} carries {load[hottest]:.0%} of a node's "
            f"capacity at the SLO, the mean {load.mean():.0%}; {len(moves)} busy partition(s) "
            "move to cooler nodes")


def even_plan(ctx: Context, target: int, why: str, moves: list[Move]) -> Plan:
    """The plan that makes the even-out's `moves` between serving nodes, the size staying
    `target` (the current one, or the one a plan in flight leads to)."""
    active = ctx.arrays.active
    return build(ctx, Sizing(target, target, 0, ctx.step, why),
                 ctx.remember(ctx.memory.acted(ctx.now), ctx.step), [n.id for n in active],
                 [n.profile for n in active], moves, "rebalance", "even out: moves off a hot node",
                 [], None)


class EvenOut(Rule):
    name = "even_out"
    switch = "even_out"

    def enabled(self, policy) -> bool:
        return policy.even_out and policy.size_from_demand and policy.data_placement == "metctl"

    def propose(self, ctx: Context) -> Plan | None:
        view = ctx.view
        if view is None:
            return None
        load, _ = normalised(view)
        over = hot_nodes(view, load, ctx.policy.even_tolerance)
        if load.size == 0 or not over or load.mean() >= 1.0:
            return None
        moves = relief_moves(ctx, view, len(load))
        if not moves:
            return None
        return even_plan(ctx, ctx.current, f"even out: {even_words(ctx, view, load, moves)}", moves)


__all__ = ["EvenOut", "even_plan", "even_words", "hot_nodes", "relief_moves", "normalised"]
