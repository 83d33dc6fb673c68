"""Split a hot partition (`split_hot_partitions`; moving the node's other partitions off:
`move_only_what_pays`): a node one partition overloads gets no node.

More nodes would not help a node whose overload is one partition, and moving that partition
only moves the overload. Instead it is split in two at the store's own split point (both halves
stay on the node) and the node's *other* busy partitions move to nodes with room in the same
plan. After the warm-up each half is an ordinary partition: one can move away, or, still too
hot, be split again (a split halves the data, not the load). A table whose splits keep leaving
one half with resplit_load_fraction of the load resplit_tries times in a row (ordered inserts)
is left whole for resplit_after_s, and a later hold says so.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from decision.model import Action, Plan
from decision.policy import PolicyConfig
from decision.rules.diagnose import Diagnosis
from decision.rules.memory import RulesMemory, SplitRecord
from decision.rules.plans import hold, rebalance
from decision.rules.rule import Carry, Context, Rule


def hot_splits(ctx: Context, hot: list[Diagnosis]) -> tuple[list[Action], list[str], RulesMemory]:
    """A split of the busiest partition of each node in `hot`, why a table is not split (its
    last splits left one half with the load), and the memory with the splits recorded."""
    arrays, policy, now = ctx.arrays, ctx.policy, ctx.now
    index = {n.id: i for i, n in enumerate(arrays.active)}
    splits = dict(ctx.memory.splits)
    actions, refused = [], []
    for d in hot:
        mine = np.flatnonzero(arrays.node_of == index[d.node])
        if mine.size == 0:
            continue
        p = int(mine[np.argmax(arrays.load[mine])])
        table, load = arrays.partitions[p].table, float(arrays.load[p])
        last = splits.get(table)
        at = last.at if last is not None else -math.inf
        kept = last is not None and load >= policy.resplit_load_fraction * last.load
        streak = last.streak + 1 if kept and last is not None else 0
        if streak >= policy.resplit_tries and now - at < policy.resplit_after_s:
            refused.append(f"{table} not split again: after {streak - 1:.0f} split(s) in a row "
                           f"its hottest partition still serves {load:.0f}/s of the "
                           f"{last.load if last else 0:.0f}/s the last split partition served "
                           "(keys that do not spread, e.g. ordered inserts)")
            continue
        if kept and now - at >= policy.resplit_after_s:
            streak = 0  # left alone long enough: its workload may have changed
        splits[table] = SplitRecord(load, now, streak)
        actions.append(Action(op="split", node=d.node, partition=arrays.ids[p],
                              cause="hot_partition", reason=(
                                  f"split ({load:.0f} requests/s): {d.reason}; "
                                  "as two halves, one can move away")))
    return actions, refused, replace(ctx.memory, splits=splits)


def with_splits(ctx: Context, plan: Plan | None, splits: list[Action], why: str) -> Plan:
    """`plan` (or a hold) with the splits in front (the plan moves none of them) and the
    context's memory, which records them."""
    memory = ctx.memory.acted(ctx.now)
    if plan is None:
        plan = hold(ctx, "split", "", memory=memory)
        plan = replace(plan, sizing=replace(plan.sizing, reason="split: " + why))
    else:
        plan = replace(plan, memory=ctx.remember(memory, ctx.step))
    reason = f"{plan.sizing.reason}; split {len(splits)} hot partition(s)"
    return replace(plan, actions=tuple(splits) + plan.actions, reason=reason,
                   sizing=replace(plan.sizing, reason=reason),
                   summary=replace(plan.summary, splits=len(splits)))


class SplitHot(Rule):
    name = "split"
    switch = "split_hot_partitions"

    def enabled(self, policy: PolicyConfig) -> bool:
        # the split itself, or (split_hot_partitions off) the moves off the hot node alone;
        # sized from demand, rules/split_fit.py judges hot partitions by their demand instead
        return (policy.split_hot_partitions or policy.move_only_what_pays) \
            and not policy.size_from_demand

    def propose(self, ctx: Context) -> Plan | Carry | None:
        hot, policy = ctx.hot, ctx.policy
        if not hot:
            return None
        splits, refused, memory = (hot_splits(ctx, hot) if policy.split_hot_partitions
                                   else ([], [], ctx.memory))
        ctx = replace(ctx, memory=memory)
        why = (f"{len(hot)} node(s) overloaded by one hot partition "
               f"({hot[0].node}: {hot[0].reason})")
        if refused:
            why += "; " + "; ".join(refused)
        # Moving the node's other partitions away lowers it toward the hot one's own load (the
        # floor); the hot one stays (moving it only moves the overload) and, split, can leave
        # half by half later.
        plan = (rebalance(ctx, hot, why, stay=frozenset(a.partition or "" for a in splits))
                if policy.move_only_what_pays else None)
        if splits:
            plan = with_splits(ctx, plan, splits, why)
        if plan is not None:
            return plan
        return Carry(note="; ".join(refused) if refused else None)


__all__ = ["SplitHot", "hot_splits", "with_splits"]
