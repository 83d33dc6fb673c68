"""Split to fit (`split_hot_partitions`, with size_from_demand): a node over its capacity at
the SLO because of one partition gets a split, not a node: more nodes cannot help a partition
that alone takes split_load_fraction of a node's capacity, and moving it only moves the
overload. Its hottest partition is split at the store's own split point (both halves stay on
the node; rules/splits.py keeps the table's streak of splits that did not spread its load), and
the node's other busy partitions move to nodes with room in the same plan when that pays. Once
in two, a later decision can move a half away.

Hot partitions are split before nodes are added for them: this rule comes before size to
demand.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from decision.model import Plan, Sizing
from decision.rules.diagnose import Diagnosis
from decision.rules.even import normalised
from decision.rules.moves import greedy_moves
from decision.rules.plans import build
from decision.rules.rule import Carry, Context, Rule
from decision.rules.splits import hot_splits, with_splits


def too_hot(ctx: Context) -> list[Diagnosis]:
    """Nodes over their capacity whose busiest partition alone takes split_load_fraction of a
    node's capacity and at least half the node's load, busiest first."""
    view = ctx.view
    if view is None:
        return []
    load, cost = normalised(view)
    arrays, frac = ctx.arrays, ctx.policy.split_load_fraction
    out = []
    for i in np.argsort(-load, kind="stable").tolist():
        if load[i] <= 1.0:
            break
        mine = np.flatnonzero(arrays.node_of == i)
        if mine.size == 0:
            continue
        top = float(cost[mine].max())
        # one partition makes the overload: it alone takes split_load_fraction of a node and
        # at least half of this one's load (many busy partitions are a case for more nodes)
        if top >= frac and top >= 0.5 * load[i]:
            out.append(Diagnosis(view.demands.nodes[i].node, "hot_partition", (
                f"{load[i]:.0%} of its capacity at the SLO, one partition {top:.0%} of a "
                f"node's (>= split_load_fraction {frac:.2f}): more nodes would not help")))
    return out


class SplitToFit(Rule):
    name = "split_to_fit"
    switch = "split_hot_partitions"

    def enabled(self, policy) -> bool:
        return policy.split_hot_partitions and policy.size_from_demand \
            and policy.data_placement == "metctl"

    def propose(self, ctx: Context) -> Plan | Carry | None:
        hot, view = too_hot(ctx), ctx.view
        if not hot or view is None:
            return None
        splits, refused, memory = hot_splits(ctx, hot)
        if not splits:
            return Carry(note="; ".join(refused)) if refused else None
        ctx = replace(ctx, memory=memory)
        why = f"{len(hot)} node(s) over capacity by one hot partition ({hot[0].node}: {hot[0].reason})"
        if refused:
            why += "; " + "; ".join(refused)
        load, cost = normalised(view)
        index = {n.id: i for i, n in enumerate(ctx.arrays.active)}
        moves, _ = greedy_moves(ctx.arrays, load, [index[d.node] for d in hot],
                                list(range(ctx.current)), target_load=1.0, cap=1.0,
                                policy=ctx.policy, cost=cost,
                                stay=frozenset(a.partition or "" for a in splits))
        plan = None
        if moves:
            ids = [n.id for n in ctx.arrays.active]
            plan = build(ctx, Sizing(ctx.current, ctx.current, 0, ctx.step, "rebalance: " + why),
                         ctx.remember(ctx.memory.acted(ctx.now), ctx.step), ids,
                         [n.profile for n in ctx.arrays.active], moves, "rebalance",
                         "moves off a node one hot partition overloads", [], None)
        return with_splits(ctx, plan, splits, why)


__all__ = ["SplitToFit", "too_hot"]
