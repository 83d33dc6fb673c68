"""While a plan is carried out (the control loop asks the policy at every sample meanwhile and
says so in the memory: DecisionMemory.plan_in_flight), the rules observe as at any decision
(capacity, demand, lead time keep learning) and only three things may happen, as an extension
of that plan (`extend_plans`, with size_from_demand; the executor adds them while the plan still
launches):
  - a node over its capacity by one hot partition gets the split at once (rules/split_fit.py);
  - when the demand's forecast over the lead time has outgrown the size the plan in flight
    leads to, more nodes are launched at once (at most as many booting as serving, or 5:
    rules/size.py, pending_limit), their boot not waiting for the plan's moves,
    and busy partitions move onto them off the nodes the forecast finds over their capacity
    (rules/even.py), each move starting once its node registers. They are chosen on the
    placement the plan in flight leads to: the partitions it moves onto its new nodes
    (remembered, DemandMemory.queued) stay out until they land and their load counts as gone
    from their nodes (a move onto a node already serving starts at once and, landed, is that
    node's), so the extension relieves the nodes that plan left hot instead of picking its
    sources again; a node that registered since that plan was decided and that none of them
    has reached yet is one of its new nodes, still to take them in, and gets no more;
  - otherwise a serving node beyond its capacity sheds busy partitions onto cooler serving
    nodes (`even_out`): a plan that a ramp keeps extending can run for half an hour, and the
    partitions it moved at its start, sized for the demand then, may have made a node hot
    since. Once landed they are that node's and may move on. In the first half of the lead
    time after the last scale-out, while the serving nodes have room on average, a hot node's
    partitions still waiting for a booting node may go to a serving node now instead (the
    executor re-targets their moves, Executor.extend): minutes of a saturated node cost more
    windows than a new node that comes up lighter.
Every other change waits for the plan's end. A scale-out asked for while a scale-in runs cannot
extend it (it launches nothing): the control loop cuts that scale-in short instead (its pending
steps cancelled, Executor.cut_short) and the next round decides the scale-out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from decision.model import Action, Plan, Sizing
from decision.rules.engine import observed
from decision.rules.even import even_plan, even_words, hot_nodes, normalised, relief_moves
from decision.rules.split_fit import too_hot
from decision.rules.splits import hot_splits, with_splits
from decision.rules.memory import PendingScaleOut
from decision.rules.plans import build, hold
from decision.rules.size import MIN_PENDING, pending_limit
from decision.rules.rule import Change, Context, Rule


def during_plan(rules: Sequence[Rule], ctx: Context, target: int) -> Plan:
    """The decision while a plan leading to `target` nodes runs: an extension or a hold."""
    ctx = observed(rules, ctx)
    view, policy = ctx.view, ctx.policy
    if view is None or not policy.size_from_demand or not policy.extend_plans:
        return hold(ctx, "plan_in_flight", f"a plan to {target} nodes is being carried out")
    if policy.split_hot_partitions and policy.data_placement == "metctl":
        hot = too_hot(ctx)
        splits, _, memory = hot_splits(ctx, hot) if hot else ([], [], ctx.memory)
        if splits:
            return with_splits(replace(ctx, memory=memory), None, splits, (
                f"while a plan to {target} nodes is carried out: {len(hot)} node(s) over "
                f"capacity by one hot partition ({hot[0].node}: {hot[0].reason})"))
    asked = view.nodes_for(view.out_demand)
    # the nodes still booting have not served yet: the estimate that bought them is untested
    want = min(asked, target + max(4, target), pending_limit(ctx.current), policy.max_nodes)
    if want <= target or ctx.veto(Change("add", want - target)) is not None:
        evened = even_during_plan(ctx, target) if policy.even_out else None
        return evened or hold(ctx, "plan_in_flight", f"a plan to {target} nodes is being "
                              f"carried out; {view.words()}")
    k = want - target
    capped = (f" (at most {want} while {target - ctx.current} launched node(s) still boot: "
              f"as many booting as serving, or {MIN_PENDING})"
              if want == pending_limit(ctx.current) < min(asked, policy.max_nodes) else "")
    why = (f"extend the plan in flight to {want} nodes (+{k}): {view.words()}; {asked} nodes "
           f"carry {view.out_demand:.2f} node-loads at {view.u_max:.0%} each{capped}")
    memory = replace(ctx.memory.acted(ctx.now), scale_out=PendingScaleOut(
        ctx.now, ctx.served, k / max(target, 1)), demand=replace(
        ctx.memory.demand, sized_for=view.out_demand, lead_from=ctx.now))
    current = ctx.current
    # the nodes the plan still boots are not here yet: the extension's own take the relief
    nodes = current + k
    # the new nodes take load off the nodes the forecast finds over their capacity (the
    # nodes the plan still boots are not counted: each of these takes at most its share)
    growth = view.out_demand / view.forecast.now if view.forecast.now > 0 else 1.0
    in_flight = ctx.memory.demand
    moves = (relief_moves(ctx, view, nodes, growth, in_flight.queued, in_flight.plan_nodes)
             if policy.data_placement == "metctl" else [])
    ids = [n.id for n in ctx.arrays.active] + [f"new-{j + 1}" for j in range(k)]
    profiles = [n.profile for n in ctx.arrays.active] + [view.profile] * k
    launches = [Action(op="launch", node=ids[current + j], profile=view.profile,
                       cause="scale_out", reason=f"scale out (extending the plan in flight): "
                       f"new {view.profile} node {j + 1} of {k}") for j in range(k)]
    return build(ctx, Sizing(target, want, k, ctx.step, why), ctx.remember(memory, ctx.step),
                 ids, profiles, moves, "scale_out",
                 "scale out (extending the plan in flight): moves off a hot node", launches,
                 None)


def even_during_plan(ctx: Context, target: int) -> Plan | None:
    """Busy partitions off a serving node beyond its capacity at the SLO onto cooler serving
    nodes, while a plan leading to `target` nodes runs (a plan that a ramp keeps extending can
    last half an hour, and a node left hot by it loses its tenants' windows all that time). The
    partitions the plan moves stay out, and the nodes still taking them in take no more; early
    in the boot (above) the ones still waiting for a new node may go to a serving node."""
    view = ctx.view
    assert view is not None
    load, _ = normalised(view)
    over = hot_nodes(view, load, ctx.policy.even_tolerance)
    if not over:
        return None
    in_flight = ctx.memory.demand
    # Early in the boot a partition waiting for a new node may go to a serving node with room
    # instead (the executor re-targets its move): late in it, the new node is nearly up.
    early = in_flight.lead_from is not None and ctx.now - in_flight.lead_from < view.lead.seconds / 2
    moves = relief_moves(ctx, view, ctx.current, 1.0, in_flight.queued, in_flight.plan_nodes,
                         retarget=early and bool(load.mean() < 1.0))
    if not moves:
        return None
    return even_plan(ctx, target, f"even out while a plan to {target} nodes is carried out: "
                     f"{even_words(ctx, view, load, moves)}", moves)


__all__ = ["during_plan", "even_during_plan"]
