"""Scale in (always on; the rule by `scale_in_on_headroom`): remove one node when none is
overloaded (busy nodes that serve in time excepted: `scale_in_while_within_slo`) and the rest
have room for its load.

    headroom  scale_in_on_headroom: at least one node underloaded and the mean CPU over one
              node fewer under cpu_high x scale_in_headroom; with a latency objective, every
              node also at or under latency_slo_ms x scale_in_latency_fraction. Off: MET's
              rule (remove_fraction of the nodes underloaded as well).
    pinned    above max_nodes (an operator lowered it): one node a decision while one node
              fewer would not be overloaded on average, whatever the switch.
    refused   by an earlier rule (bounds; prediction: a peak just ahead): said in the hold.
    place     the least utilised node goes; only its partitions move: the busy ones largest
              first to the least utilised of the rest, the idle ones each to the node holding
              fewest partitions (HBase's own balancer evens counts); then drain and terminate.
              move_only_what_pays off: MET's full re-placement at the smaller size.

MET's step resets to 1; a no_gain verdict is forgotten (the nodes it kept are given back).
"""
from __future__ import annotations

import heapq
import math
from dataclasses import replace

import numpy as np

from decision.model import DecisionMemory, Plan, Sizing
from decision.rules.bounds import forbid_removal
from decision.rules.diagnose import latency_slo
from decision.rules.moves import Move, costs, node_loads
from decision.rules.plans import build, full_replacement
from decision.rules.rule import Carry, Change, Context, Rule


def may_remove(ctx: Context) -> tuple[bool, str]:
    """Whether one node may go by the cluster's load alone (earlier rules not asked), and the
    rule's words with its figures. Only meaningful while no node is overloaded."""
    policy, current, health = ctx.policy, ctx.current, ctx.health
    active = ctx.arrays.active
    ids = {n.id for n in active}
    underloaded = sum(v.verdict == "underloaded" for v in health.nodes if v.node in ids)
    cpu_total = sum(n.metrics.cpu for n in active if n.metrics is not None)
    spread = cpu_total / (current - 1) if current > 1 else math.inf
    if current > policy.max_nodes and spread < policy.cpu_high:
        return True, (f"{current} active nodes > max_nodes {policy.max_nodes}, mean cpu over "
                      f"{current - 1} nodes {spread:.2f} < cpu_high {policy.cpu_high:.2f}")
    if not policy.scale_in_on_headroom:
        return health.remove, "MET's rule: " + health.reason
    limit = policy.cpu_high * policy.scale_in_headroom
    fits = spread < limit
    may = current > 1 and underloaded >= 1 and fits
    # the words state each comparison as it came out: a hold must not read "0.64 < 0.48"
    rule = (f"{underloaded} underloaded, mean cpu spread over one node fewer ({current - 1}) "
            f"{spread:.2f} {'<' if fits else '>='} {limit:.2f}")
    slowest = max((n.metrics.rpc_latency_ms for n in active if n.metrics is not None
                   and n.metrics.rpc_latency_ms is not None), default=None)
    slo = latency_slo(policy)
    if may and slo is not None and slowest is not None:
        bound = slo * policy.scale_in_latency_fraction
        may = slowest <= bound
        rule += (f", slowest node {slowest:.1f} ms {'<=' if may else '>'} {bound:g} ms "
                 "(latency_slo_ms x scale_in_latency_fraction)")
    return may, rule


class ScaleIn(Rule):
    name = "scale_in"

    def propose(self, ctx: Context) -> Plan | Carry | None:
        if forbid_removal(ctx) or (ctx.view is not None and ctx.policy.scale_in_on_forecast):
            return None  # never while a node is short of time; sized from demand: rules/shrink.py
        policy, current = ctx.policy, ctx.current
        may, rule = may_remove(ctx)
        if may:
            refused = ctx.veto(Change("remove"))
            if refused is not None:
                may, rule = False, f"{rule}; {refused.reason}"
        if may and current > policy.min_nodes:
            memory = replace(ctx.memory.acted(ctx.now), no_gain_requests=None)
            sizing = Sizing(current, current - 1, -1, 1, "scale in on headroom: " + rule)
            if not policy.move_only_what_pays:
                return full_replacement(ctx, sizing, ctx.remember(memory, 1))
            return scale_in_plan(ctx, sizing, ctx.remember(memory, 1))
        if may:
            return None  # at min_nodes: nothing to say
        return Carry(note=rule if policy.scale_in_on_headroom else "no scale-in")


def _spread_off(ctx: Context, gone: int, util: np.ndarray, cost: np.ndarray) -> list[Move]:
    """The removed node's partitions: busy ones largest first to the least utilised of the rest
    (in the removed node's utilisation units), idle ones each to the node holding fewest
    partitions (by utilisation they weigh nothing: all would land on one node, which takes all
    their load when they wake)."""
    arrays, current = ctx.arrays, ctx.current
    rest = [i for i in range(current) if i != gone]
    mine = np.flatnonzero(arrays.node_of == gone)
    mine = mine[np.lexsort((mine, -arrays.load[mine], -cost[mine]))]
    after = util.copy()
    moves: list[Move] = []
    heap = [(float(after[i]), i) for i in rest]
    heapq.heapify(heap)
    if ctx.policy.data_placement == "store":
        mine = mine[:0]  # a store that places its data streams the removed node's share itself
    idle = (arrays.load[mine] <= 0) & (cost[mine] <= 0)
    for p in mine[~idle].tolist():
        _, d = heapq.heappop(heap)
        moves.append((p, d, ""))
        after[d] += cost[p]
        heapq.heappush(heap, (float(after[d]), d))
    count = np.bincount(arrays.node_of[arrays.node_of >= 0], minlength=current)
    for _, d, _ in moves:
        count[d] += 1
    fewest = [(int(count[i]), float(after[i]), i) for i in rest]
    heapq.heapify(fewest)
    for p in mine[idle].tolist():
        n, u, d = heapq.heappop(fewest)
        moves.append((p, d, ""))
        heapq.heappush(fewest, (n + 1, u, d))
    return moves


def scale_in_plan(ctx: Context, sizing: Sizing, memory: DecisionMemory) -> Plan:
    """Remove the least utilised node (ties: fewer requests, then first listed), moving only
    its partitions."""
    util, cost = costs(ctx.arrays, ctx.policy)
    loads = node_loads(ctx.arrays)
    gone = int(np.lexsort((np.arange(ctx.current), loads, util))[0])
    ids = [n.id for n in ctx.arrays.active]
    return build(ctx, sizing, memory, ids, [n.profile for n in ctx.arrays.active],
                 _spread_off(ctx, gone, util, cost), "scale_in",
                 "moves off the node being removed (scale in)", [], ids[gone])


__all__ = ["ScaleIn", "may_remove", "scale_in_plan"]
