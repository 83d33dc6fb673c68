"""Size to demand (`size_from_demand`): scale out to the smallest size that carries the demand
now and its forecast over the scale-out lead time, each node at most at u_max (its capacity at
the SLO with slo_headroom; rules/view.py), before the queue forms.

    size      ceil(max(demand now, forecast over the lead) / u_max); at most the larger of +4
              nodes and doubling in one decision (Kubernetes' HPA scale-up limit: a guard
              against a wrong estimate), at most max_nodes; an extension of a plan in flight
              (rules/extend.py) also at most as many nodes booting as serving, or 5
              (`pending_limit`, Ray's autoscaler)
    refused   by an earlier rule (bounds: max_nodes; verify: no gain while no node is short):
              nothing here; the later rules (even out, hold) say what happens
    place     the new nodes take busy partitions off the hottest nodes until the load is even
              within even_tolerance, each move only when it pays (rules/even.py); a new node
              that would receive nothing is not launched

Remembered: the scale-out for verify after acting, its decision time for the lead time
(rules/measure.py), the demand it was sized for. MET's step is left as it is.
"""
from __future__ import annotations

from dataclasses import replace

from decision.model import Action, Plan, Sizing
from decision.rules.even import relief_moves
from decision.rules.memory import PendingScaleOut
from decision.rules.plans import build
from decision.rules.rule import Carry, Change, Context, Rule
from decision.rules.view import DemandView


# Ray's autoscaler (upscaling_speed 1.0, its default) lets as many nodes be pending as are
# running, and at least 5 when scaling up: a cluster grows at most 100 % per boot. A plan that a
# forecast keeps extending otherwise compounds the per-decision limit (doubling every 30 s) on
# the very estimate that limit guards against.
MIN_PENDING = 5


def pending_limit(serving: int) -> int:
    """The most nodes a plan may lead to while the nodes it launched still boot: as many
    booting as serving, or MIN_PENDING."""
    return serving + max(MIN_PENDING, serving)


def demand_target(ctx: Context, view: DemandView) -> tuple[int, str]:
    """The size the demand asks for, within the scale-up limit and max_nodes, and why."""
    current, policy = ctx.current, ctx.policy
    want = view.nodes_for(view.out_demand)
    limit = current + max(4, current)
    target = min(want, limit, policy.max_nodes)
    short = (f"; short now: {', '.join(view.short[:3])}"
             f"{f' and {len(view.short) - 3} more' if len(view.short) > 3 else ''}"
             if view.short else "")
    capped = (f" (at most {target}: " + ("max_nodes" if target == policy.max_nodes
                                         else "+4 or doubling a decision") + ")"
              if target < want else "")
    return target, (f"{view.words()}; {want} nodes carry {view.out_demand:.2f} node-loads at "
                    f"{view.u_max:.0%} each{capped}{short}")


class SizeToDemand(Rule):
    name = "size_to_demand"
    switch = "size_from_demand"

    def propose(self, ctx: Context) -> Plan | Carry | None:
        view = ctx.view
        if view is None:
            return None
        current = ctx.current
        target, why = demand_target(ctx, view)
        if target <= current:
            if view.nodes_for(view.out_demand) > current:  # max_nodes binds: say so
                return Carry(note=f"no node added ({current} active nodes >= max_nodes "
                             f"{ctx.policy.max_nodes}: {why})")
            return None
        refused = ctx.veto(Change("add", target - current))
        if refused is not None:
            return Carry(note=f"no node added ({refused.cause}: {refused.reason})")
        return self.plan(ctx, view, target, "scale out: " + why)

    @staticmethod
    def plan(ctx: Context, view: DemandView, target: int, why: str) -> Plan | Carry | None:
        current, policy = ctx.current, ctx.policy
        k = target - current
        ids = [n.id for n in ctx.arrays.active] + [f"new-{j + 1}" for j in range(k)]
        profiles = [n.profile for n in ctx.arrays.active] + [view.profile] * k
        memory = replace(ctx.memory.acted(ctx.now), scale_out=PendingScaleOut(
            ctx.now, ctx.served, k / max(current, 1)), demand=replace(
            ctx.memory.demand, lead_from=ctx.now, sized_for=view.out_demand))
        if policy.data_placement == "store":
            moves, used = [], list(range(current, target))
        else:
            growth = view.out_demand / view.forecast.now if view.forecast.now > 0 else 1.0
            moves = relief_moves(ctx, view, target, growth)
            used = sorted({d for _, d, _ in moves if d >= current})
        if not used:
            return Carry(note=f"{why}; no busy partition pays its move onto a new node: new "
                         "nodes would serve nothing")
        renumber = {d: current + j for j, d in enumerate(used)}
        moves = [(p, renumber.get(d, d), w) for p, d, w in moves]
        k = len(used)
        sizing = Sizing(current, current + k, k, ctx.step, why + (
            f"; {k} new node(s) receive partitions" if current + k < target else ""))
        # the store streams each new node its share as it joins: nothing for metctl to move
        joins = ("; the data store gives it its share of the data as it joins"
                 if policy.data_placement == "store" else "")
        launches = [Action(op="launch", node=ids[current + j], profile=view.profile,
                           cause="scale_out", reason=f"scale out: new {view.profile} node "
                           f"{j + 1} of {k}{joins}") for j in range(k)]
        return build(ctx, sizing, ctx.remember(memory, ctx.step), ids[:current + k],
                     profiles[:current + k], moves, "scale_out",
                     "scale out: moves off a hot node to a new one", launches, None)


__all__ = ["SizeToDemand", "demand_target", "pending_limit", "MIN_PENDING"]
