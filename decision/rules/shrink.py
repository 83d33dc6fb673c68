"""Shrink to demand (`scale_in_on_forecast`, with size_from_demand): scale in promptly when the
demand fits fewer nodes with room to spare, and only then.

    fits      the most of the demand now risen as far as it may within a lead time (`rise`),
              its forecast over the scale-out lead time and its peak over scale_in_window_s
              (a forecast keeps nodes, never removes them) fits fewer nodes at u_max x
              (1 - scale_in_band); a peak already seen is not risen again
    never     while a node is short (requests queue, are dropped or miss the SLO) or answers
              slower than latency_slo_ms x scale_in_latency_fraction; below min_nodes; when an
              earlier rule refuses (prediction: a peak just ahead)
    how many  one node; more only when the demand still fits at u_max x (1 - 2 x
              scale_in_band) and the busy partitions on them stream within
              scale_in_move_budget_s at move_mb_s; at most half the nodes (their data then
              shares half as many caches), never below the floor a scale-in that left a node
              short set (rules/measure.py)
    place     the least loaded nodes go; their busy partitions, largest first, to the least
              loaded of the rest, their idle ones each to the node holding fewest (HBase's
              balancer evens counts: idle ones all on one node would take all their load when
              they wake); then drain and terminate

MET's step resets to 1; a no_gain verdict is forgotten.
"""
from __future__ import annotations

import heapq
from dataclasses import replace

import numpy as np

from decision.model import Plan, Sizing
from decision.rules.demand_memory import ScaleIn
from decision.rules.even import normalised
from decision.rules.moves import Move
from decision.rules.plans import build
from decision.rules.rule import Carry, Change, Context, Rule
from decision.rules.view import DemandView


def how_many(ctx: Context, view: DemandView, gone_order: list[int]) -> tuple[int, str]:
    """Nodes the demand lets go (0: none), and the words with the figures."""
    policy, current = ctx.policy, ctx.current
    band = policy.scale_in_band
    room = view.room(view.peak)
    fit = view.nodes_for(room, band)
    floor = ctx.memory.demand.floor or 0
    need = max(fit, policy.min_nodes, floor, current - current // 2)
    cycle = view.forecast.cycle
    by_cycle = f" by {cycle.words()}" if cycle is not None and view.forecast.by_cycle else ""
    words = (f"{view.in_demand:.2f} node-loads (the most of now {view.forecast.now:.2f}, "
             f"forecast {view.forecast.ahead:.2f}{by_cycle}, peak {view.peak:.2f}), with room to rise "
             f"x{view.rise:.2f} within a lead time ({room:.2f}), fit {fit} node(s) at "
             f"{view.u_max * (1 - band):.0%}")
    if floor > fit:
        words += (f"; not below {floor} before {ctx.memory.demand.floor_until:.0f} (the last "
                  "scale-in below it left a node short)")
    if need >= current:
        return 0, words
    k = 1
    budget_mb = policy.scale_in_move_budget_s * policy.move_mb_s
    arrays = ctx.arrays
    busy = arrays.load > 0
    for more in range(2, current - need + 1):
        if room > (current - more) * view.u_max * (1 - 2 * band):
            break
        gone = np.isin(arrays.node_of, gone_order[:more])
        if float(arrays.size_mb[gone & busy].sum()) > budget_mb:
            break
        k = more
    if k < policy.scale_in_min_fraction * current and \
            view.room(view.peak_long) > (current - k) * view.u_max * (1 - band):
        return 0, words + (f"; {k} node(s) of {current} wait until the demand has fit for "
                           f"{2 * policy.scale_in_window_s:.0f} s")
    return k, words


def spread_off(ctx: Context, view: DemandView, gone: list[int]) -> list[Move]:
    """The removed nodes' partitions onto the rest: busy ones largest first to the least
    loaded, idle ones each to the node holding fewest."""
    arrays = ctx.arrays
    load, cost = normalised(view)
    rest = [i for i in range(ctx.current) if i not in gone]
    mine = np.flatnonzero(np.isin(arrays.node_of, gone))
    mine = mine[np.lexsort((mine, -arrays.load[mine], -cost[mine]))]
    idle = (arrays.load[mine] <= 0) & (cost[mine] <= 0)
    if ctx.policy.data_placement == "store":
        mine, idle = mine[:0], idle[:0]  # the store streams the removed nodes' share itself
    heap = [(float(load[i]), i) for i in rest]
    heapq.heapify(heap)
    moves: list[Move] = []
    for p in mine[~idle].tolist():
        u, d = heapq.heappop(heap)
        moves.append((p, d, ""))
        heapq.heappush(heap, (u + float(cost[p]), d))
    count = np.bincount(arrays.node_of[arrays.node_of >= 0], minlength=ctx.current)
    for _, d, _ in moves:
        count[d] += 1
    fewest = [(int(count[i]), i) for i in rest]
    heapq.heapify(fewest)
    for p in mine[idle].tolist():
        n, d = heapq.heappop(fewest)
        moves.append((p, d, ""))
        heapq.heappush(fewest, (n + 1, d))
    return moves


class ShrinkToDemand(Rule):
    name = "shrink_to_demand"
    switch = "scale_in_on_forecast"

    def enabled(self, policy) -> bool:
        return policy.scale_in_on_forecast and policy.size_from_demand

    def propose(self, ctx: Context) -> Plan | Carry | None:
        view, policy = ctx.view, ctx.policy
        if view is None or ctx.current <= policy.min_nodes:
            return None
        seen = ctx.memory.demand.recent.samples
        if not seen or ctx.now - seen[0][0] < policy.scale_in_window_s:
            return Carry(note=f"not scaling in: the demand was not seen for scale_in_window_s "
                         f"{policy.scale_in_window_s:g} s yet")
        if view.short or view.slow:
            which = view.short or view.slow
            return Carry(note=f"not scaling in: {which[0]} "
                         + ("is short (requests queue, are dropped or miss the SLO)" if view.short
                            else "answers slower than latency_slo_ms x "
                                 "scale_in_latency_fraction"))
        load, _ = normalised(view)
        order = [int(i) for i in np.lexsort((np.arange(ctx.current), load))]
        k, words = how_many(ctx, view, order)
        if k == 0:
            return Carry(note=f"not scaling in: {words}")
        refused = ctx.veto(Change("remove", k))
        if refused is not None:
            return Carry(note=f"not scaling in ({words}): {refused.reason}")
        gone = sorted(order[:k])
        memory = replace(ctx.memory.acted(ctx.now), no_gain_requests=None, demand=replace(
            ctx.memory.demand, shrunk=ScaleIn(ctx.current, ctx.now, view.forecast.now)))
        sizing = Sizing(ctx.current, ctx.current - k, -k, 1, f"scale in: {words}; {view.words()}")
        ids = [n.id for n in ctx.arrays.active]
        return build(ctx, sizing, ctx.remember(memory, 1), ids,
                     [n.profile for n in ctx.arrays.active], spread_off(ctx, view, gone),
                     "scale_in", "moves off a node being removed (scale in)", [],
                     tuple(ids[g] for g in gone))


__all__ = ["ShrinkToDemand", "how_many", "spread_off"]
