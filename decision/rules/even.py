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

from decision.model import Plan, Sizing
from decision.rules.moves import Move, greedy_moves
from decision.rules.plans import build
from decision.rules.rule import Context, Rule
from decision.rules.view import DemandView


def normalised(view: DemandView) -> tuple[np.ndarray, np.ndarray]:
    """Each active node's and each partition's demand in node capacities (demand / u_max)."""
    return view.demands.node_demand() / view.u_max, view.demands.partition / view.u_max


def relief_moves(ctx: Context, view: DemandView, nodes: int, growth: float = 1.0,
                 queued: frozenset[str] = frozenset(),
                 plan_nodes: frozenset[str] = frozenset()) -> list[Move]:
    """Moves that bring every node of `nodes` (the active ones, then new ones with nothing yet)
    under its capacity at the SLO with the demand grown by `growth` (the forecast over the
    lead time over today's), hottest first, each onto the coolest node where it pays. A node
    already under is left alone: every busy partition moved is a cold cache and a moment
    offline for its tenant. `queued`: partitions a plan in flight already moves (to nodes
    still booting): they stay out, and their load counts as gone from their nodes, so the
    nodes that plan left hot are the ones relieved, not the same sources again. `plan_nodes`:
    the nodes active when that plan was decided; a node that registered since is one of its
    new nodes, whose queued partitions are still arriving (its load reads low): it takes no
    more."""
    load, cost = normalised(view)
    arrays = ctx.arrays
    leaving = np.array([i for i, pid in enumerate(arrays.ids) if pid in queued and arrays.node_of[i] >= 0],
                       dtype=np.int64)
    if leaving.size:
        load = load - np.bincount(arrays.node_of[leaving], weights=cost[leaving], minlength=len(load))
        load = np.maximum(load, 0.0)
    load = np.concatenate([load * growth, np.zeros(nodes - len(load))])
    cost = cost * growth
    mean = float(load.sum()) / max(nodes, 1)
    top = max(1.0, mean)
    sources = [i for i in range(len(view.demands.nodes)) if load[i] > top]
    if not sources:
        return []
    arriving = {i for i, n in enumerate(arrays.active) if plan_nodes and n.id not in plan_nodes}
    moves, _ = greedy_moves(arrays, load, [i for i in sources if i not in arriving],
                            [d for d in range(nodes) if d not in arriving],
                            target_load=top, cap=top, policy=ctx.policy, cost=cost, stay=queued)
    return moves


class EvenOut(Rule):
    name = "even_out"
    switch = "even_out"

    def enabled(self, policy) -> bool:
        return policy.even_out and policy.size_from_demand and policy.data_placement == "metctl"

    def propose(self, ctx: Context) -> Plan | None:
        view = ctx.view
        if view is None:
            return None
        tol = ctx.policy.even_tolerance
        load, _ = normalised(view)
        short = {n for n in view.short}
        over = [i for i, n in enumerate(view.demands.nodes)
                if load[i] > 1.0 + tol or n.node in short]
        if load.size == 0 or not over or load.mean() >= 1.0:
            return None
        moves = relief_moves(ctx, view, len(load))
        if not moves:
            return None
        hottest = max(over, key=lambda i: load[i])
        why = (f"even out: {view.demands.nodes[hottest].node} carries {load[hottest]:.0%} of a "
               f"node's capacity at the SLO, the mean {load.mean():.0%}; {len(moves)} busy "
               "partition(s) move to cooler nodes")
        ids = [n.id for n in ctx.arrays.active]
        sizing = Sizing(ctx.current, ctx.current, 0, ctx.step, why)
        return build(ctx, sizing, ctx.remember(ctx.memory.acted(ctx.now), ctx.step), ids,
                     [n.profile for n in ctx.arrays.active], moves, "rebalance",
                     "even out: moves off a hot node", [], None)


__all__ = ["EvenOut", "relief_moves", "normalised"]
