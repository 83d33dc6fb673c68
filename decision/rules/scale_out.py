"""Scale out (always on): nodes short of capacity (cpu, io_wait) get the nodes the demand asks
for, the new nodes taking the busiest partitions off them.

    size      proportional_sizing: ceil(sum of utilisation / target_utilisation), at least the
              current size, at most current + scale_out_ceiling (MET's step, or HPA's larger of
              +4 and doubling); off: MET's step (1, 2, 4 … after consecutive scale-outs)
    same size the overloaded nodes are rebalanced onto nodes with room; if nothing fits, +1
    refused  by an earlier rule (bounds: max_nodes; verify: no gain): rebalance, else hold
    place    move_only_what_pays: only partitions off overloaded nodes, each only when it pays
             (rules/moves.py); a new node that would receive nothing is not launched
             (`hold (nothing_moves)` when none would). Off: MET's full re-placement.

MET's step doubles after each scale-out (at most max_nodes); the scale-out is remembered for
verify after acting.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from decision.model import Action, DecisionMemory, Plan, Sizing
from decision.policy import PolicyConfig
from decision.rules.memory import PendingScaleOut
from decision.rules.moves import costs, greedy_moves, idle_by_count, node_loads
from decision.rules.plans import build, full_replacement, hold, rebalance
from decision.rules.rule import Change, Context, Rule


def scale_out_ceiling(current: int, step: int, policy: PolicyConfig) -> int:
    """The most nodes one proportional scale-out adds. MET's step grows 1, 2, 4 … because MET
    cannot tell how many nodes it needs; with a demand estimate the bound only guards against
    a wrong one, and Kubernetes' HPA default (the larger of +4 and doubling) is that guard."""
    if policy.scale_out_ceiling == "met_step":
        return step
    return max(4, current)


def proportional_size(ctx: Context) -> tuple[int, str]:
    """The size the demand asks for (proportional_sizing), and why."""
    policy, current, needs = ctx.policy, ctx.current, ctx.needs
    want = math.ceil(ctx.demand / policy.target_utilisation - 1e-9)
    ceiling = scale_out_ceiling(current, ctx.step, policy)
    target = min(max(want, current), current + ceiling, policy.max_nodes)
    return target, (f"{ctx.short_of_capacity} ({', '.join(d.bottleneck for d in needs[:3])}"
                    f"); demand {ctx.demand:.2f} node-loads / target_utilisation "
                    f"{policy.target_utilisation:.2f} -> {want} nodes (at most +{ceiling}: "
                    f"{policy.scale_out_ceiling})")


def met_step_size(ctx: Context) -> tuple[int, str]:
    """MET's Algorithm 1: `step` nodes more (proportional_sizing: false), and why."""
    return (min(ctx.current + ctx.step, ctx.policy.max_nodes),
            f"{ctx.short_of_capacity}: add {ctx.step} (MET's step)")


class ScaleOut(Rule):
    name = "scale_out"

    def propose(self, ctx: Context) -> Plan | None:
        needs, current, policy = ctx.needs, ctx.current, ctx.policy
        if not needs or ctx.view is not None:  # sized from demand: rules/size.py decides
            return None
        refused = ctx.veto(Change("add"))
        if refused is not None:
            plan = rebalance(ctx, needs + ctx.hot, f"no node may be added ({refused.cause}: "
                             f"{refused.reason})")
            return plan or hold(ctx, refused.cause,
                                f"{ctx.short_of_capacity}{refused.held}")
        target, why = (proportional_size if policy.proportional_sizing else met_step_size)(ctx)
        if target == current:
            plan = rebalance(ctx, needs, why)
            if plan is not None:
                return plan
            target = current + 1
            why += ("; add 1" if policy.data_placement == "store" else
                    "; moving off the overloaded nodes does not fit: add 1")
        next_step = min(ctx.step * 2, policy.max_nodes)
        memory = replace(ctx.memory.acted(ctx.now), scale_out=PendingScaleOut(
            ctx.now, ctx.served, (target - current) / max(current, 1)))
        new_memory = ctx.remember(memory, next_step)
        sizing = Sizing(current, target, target - current, next_step, "scale out: " + why)
        if not policy.move_only_what_pays:
            return full_replacement(ctx, sizing, new_memory)
        plan = scale_out_plan(ctx, sizing, new_memory)
        if plan is not None:
            return plan
        return hold(ctx, "nothing_moves", f"{why}; no busy partition can move off the "
                    "overloaded node(s) to a new one and lower it: new nodes would serve nothing",
                    memory=replace(ctx.memory, scale_out=None))


def _new_profile(ctx: Context, loads: np.ndarray) -> str:
    """A new node takes the profile most of the cluster's load is served with."""
    by_profile: dict[str, float] = {}
    for n, load in zip(ctx.arrays.active, loads.tolist()):
        by_profile[n.profile] = by_profile.get(n.profile, 0.0) + load
    return max(sorted(by_profile), key=lambda p: by_profile[p]) if by_profile else "default"


def _expected_costs(ctx: Context, expected: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """Node utilisation and partition costs, each partition the last cycle's peak woke weighing
    what it weighed then (at least what it weighs now), and its node carrying that."""
    arrays = ctx.arrays
    util, cost = costs(arrays, ctx.policy)
    if not expected:
        return util, cost
    at = np.fromiter(expected, np.int64, len(expected))
    then = np.maximum(np.fromiter(expected.values(), np.float64, len(expected)), cost[at])
    on = arrays.node_of[at] >= 0
    util = util + np.bincount(arrays.node_of[at][on], weights=(then - cost[at])[on],
                              minlength=len(util))
    cost = cost.copy()
    cost[at] = then
    return util, cost


def scale_out_plan(ctx: Context, sizing: Sizing, memory: DecisionMemory, spread: bool = False,
                   expected: dict[int, float] | None = None) -> Plan | None:
    """Launch the nodes `sizing` adds and move partitions onto them: off the overloaded nodes
    (or, `spread`, ahead of a predicted load: off every node above the mean, the partitions
    `expected` to wake weighed as they were, then a share of the idle ones by count). Only the
    new nodes that receive a partition are launched; None when none would."""
    arrays, policy, current = ctx.arrays, ctx.policy, ctx.current
    k = sizing.target - current
    ids = [n.id for n in arrays.active] + [f"new-{j + 1}" for j in range(k)]
    profile = _new_profile(ctx, node_loads(arrays))
    profiles = [n.profile for n in arrays.active] + [profile] * k
    if policy.data_placement == "store":
        # the store streams each new node its share as it joins: nothing for metctl to move
        launches = [Action(op="launch", node=ids[current + j], profile=profile, cause="scale_out",
                           reason=f"scale out: new {profile} node {j + 1} of {k}; the data store "
                           "gives it its share of the data as it joins") for j in range(k)]
        return build(ctx, sizing, memory, ids, profiles, [], "scale_out", "", launches, None)
    util, cost = _expected_costs(ctx, expected or {})
    util = np.concatenate([util, np.zeros(k)])
    mean = float(util.sum()) / max(sizing.target, 1)
    if spread:
        sources = [i for i in range(current) if util[i] > mean]
    else:
        sources = [i for i in range(current) if util[i] >= 1.0] or \
            ([int(np.argmax(util[:current]))] if current else [])
    waking = None
    if expected:
        waking = np.zeros(len(arrays.ids), dtype=bool)
        waking[list(expected)] = True
    moves, _ = greedy_moves(arrays, util, sources, list(range(current + k)),
                            target_load=mean, cap=max(mean, policy.target_utilisation),
                            policy=policy, cost=cost, waking=waking)
    if spread:
        moves += idle_by_count(arrays, cost, moves, current + k, range(current, current + k))
    used = sorted({d for _, d, _ in moves if d >= current})
    if not used:
        return None
    renumber = {d: current + j for j, d in enumerate(used)}
    moves = [(p, renumber.get(d, d), why) for p, d, why in moves]
    k = len(used)
    sizing = replace(sizing, target=current + k, delta=k,
                     reason=sizing.reason + (f"; {k} new node(s) receive partitions"
                                             if k < sizing.delta else ""))
    launches = [Action(op="launch", node=ids[current + j], profile=profile, cause="scale_out",
                       reason=f"scale out: new {profile} node {j + 1} of {k}") for j in range(k)]
    return build(ctx, sizing, memory, ids[:current + k], profiles[:current + k], moves,
                 "scale_out", "moves to a new node ahead of the load the last cycle brought now "
                 "(predicted scale out)" if spread else "moves off an overloaded node (scale out)",
                 launches, None)


__all__ = ["ScaleOut", "scale_out_plan", "scale_out_ceiling", "proportional_size",
           "met_step_size"]
