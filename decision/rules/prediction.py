"""Predictive scale-out by MET's marks (opt-in, `predict_cycle_s` with size_from_demand: false;
sized from demand, the last cycle is in the demand's forecast instead: rules/measure.py): before
a time of the cycle that was short of nodes the last cycle, add them, the new nodes taking the
partitions that load woke; and no scale-in then.

    observe   every decision writes into its slot of the cycle what that time asked for
              (rules/cycle.py): while short of capacity, the nodes the demand asks for (at
              least one more) and the busiest partitions; inside a predicted peak, the nodes it
              has; otherwise 0. Then it reads the slots starting within predict_lead_s.
    propose   when one asks for more nodes than the cluster has and no node is overloaded,
              scale out to that size (at most doubling; MET's step left as it is). Not judged
              by verify after acting. Inside a predicted peak with no node overloaded, the slot
              is rewritten with the nodes held (one fewer when scale-in would remove one, so a
              shrinking peak is predicted smaller next cycle).
    veto      a scale-in while a slot ahead asks for at least the current size.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from decision.model import Plan, Sizing
from decision.policy import PolicyConfig
from decision.rules.cycle import expected_hot, predicted_need, record_hot, record_need
from decision.rules.moves import costs
from decision.rules.rule import Carry, Change, Context, Rule, Veto
from decision.rules.scale_in import may_remove
from decision.rules.scale_out import scale_out_plan


class PredictedScaleOut(Rule):
    name = "prediction"
    switch = "predict_cycle_s"

    def enabled(self, policy: PolicyConfig) -> bool:
        # sized from demand, the cycle is in the demand's forecast instead (rules/measure.py)
        return policy.predict_cycle_s is not None and not policy.size_from_demand

    def observe(self, ctx: Context) -> Context:
        if not self.enabled(ctx.policy):
            return ctx
        policy, memory, now, current = ctx.policy, ctx.memory, ctx.now, ctx.current
        carried = (memory.predict_until if memory.predict_until is not None
                   else -math.inf) >= now
        # What this time of the cycle asks for, for the next cycle: short of capacity now, the
        # nodes the demand asks for; busy inside a predicted peak (warming, in time), all it
        # has; otherwise nothing (said, so an older cycle's peak stops predicting).
        need = (max(math.ceil(ctx.demand / policy.target_utilisation - 1e-9), current + 1)
                if ctx.needs else current if ctx.overloaded and carried else 0)
        memory = replace(memory, cycle=record_need(memory.cycle, now, need, policy))
        if ctx.needs:
            # and which partitions carried it: the busiest, two per node at most
            _, cost = costs(ctx.arrays, policy)
            top = np.argsort(-cost, kind="stable")[:2 * current]
            memory = replace(memory, peaks=record_hot(memory.peaks, now, {
                ctx.arrays.ids[p]: float(cost[p]) for p in top.tolist() if cost[p] > 0}, policy))
        prediction = predicted_need(memory.cycle, now, policy)
        if prediction is not None:
            until = memory.predict_until if memory.predict_until is not None else now
            memory = replace(memory, predict_until=max(until, now + prediction.until_s))
        return replace(ctx, memory=memory, prediction=prediction, carried=carried)

    def propose(self, ctx: Context) -> Plan | Carry | None:
        ahead = ctx.prediction
        if ahead is not None and ahead.nodes > ctx.current and ctx.policy.move_only_what_pays \
                and ctx.veto(Change("add", ahead.nodes - ctx.current, predicted=True)) is None:
            plan = predicted_scale_out(ctx)
            if plan is not None:
                return plan
        if ctx.carried and not ctx.overloaded:
            # Carried by a predicted scale-out: what this slot needs is what it holds, one node
            # fewer when headroom says so (the next cycle then predicts one fewer).
            need = ctx.current - 1 if may_remove(ctx)[0] else ctx.current
            return Carry(memory=replace(ctx.memory, cycle=record_need(
                ctx.memory.cycle, ctx.now, need, ctx.policy)))
        return None

    def veto(self, ctx: Context, change: Change) -> Veto | None:
        ahead = ctx.prediction
        if change.kind != "remove" or ahead is None or ahead.nodes < ctx.current:
            return None
        return Veto("predicted", f"not scaling in: at this time of the last cycle (predict_cycle_s "
                    f"{ctx.policy.predict_cycle_s:g}) the load asked for {ahead.nodes} nodes "
                    f"{ahead.starts_in_s:.0f} s from now")


def predicted_scale_out(ctx: Context) -> Plan | None:
    """Scale out ahead of a load the last cycle brought at this time: toward the nodes it asked
    for (at most doubling), the new nodes taking the partitions that load woke (weighed as they
    were then) off the nodes above the mean they leave. None when no move pays."""
    policy, current, now = ctx.policy, ctx.current, ctx.now
    ahead = ctx.prediction
    assert ahead is not None
    # The size is one the load asked for before, not an estimate MET's step must feel its way
    # to; at most doubling the cluster in one decision all the same. The step is left as it
    # is: a reactive scale-out after this one starts small.
    target = min(ahead.nodes, 2 * current, policy.max_nodes)
    sizing = Sizing(current, target, target - current, ctx.step, (
        f"predicted scale-out: at this time of the last cycle (predict_cycle_s "
        f"{policy.predict_cycle_s:g}) the load asked for {ahead.nodes} nodes from "
        f"{ahead.starts_in_s:.0f} s from now; adding {target - current} now (predict_lead_s "
        f"{policy.predict_lead_s:g}: boot and warm-up; at most doubling)"))
    woke = expected_hot(ctx.memory.peaks, now, policy)
    return scale_out_plan(ctx, sizing, ctx.remember(ctx.memory.acted(now), ctx.step), spread=True,
                          expected={i: woke[pid] for i, pid in enumerate(ctx.arrays.ids)
                                    if pid in woke})


__all__ = ["PredictedScaleOut", "predicted_scale_out"]
