"""Measure (`size_from_demand`; observes only): every decision, before any rule proposes, learn
what the snapshot teaches and build the demand view the sizing rules read (rules/view.py).

    demand     each node's CPU, scaled by asked / served where its call queue grows or calls
               are dropped (decision/demand.py; the queues are remembered for the next one)
    capacity   per profile, the CPU a request of each class costs and a request's time on an
               idle node, learned from every active node's served rates, CPU and latency
               (decision/capacity.py; no latency is learned from while a plan runs or
               within warmup_s after it, nor from a node over latency_slo_ms); a node may
               run at the utilisation whose predicted p99 stays under latency_slo_ms x
               (1 - slo_headroom), within [min_utilisation, max_utilisation]
    lead time  the last scale-out's decision to the end of its plan (the control loop records
               the end), learned (decision/lead_time.py); scale_out_lead_s until then
    forecast   the least-squares slope of the demand of the last trend_window_s, over the lead
               time and the time to the next decision (decision/forecast.py), at least what
               the last cycle had over that stretch when the demand has one (predict_cycle_s,
               or found with detect_cycle: decision/demand_cycle.py), and the peak of the last
               scale_in_window_s
    floor      a scale-in after which a node turned short within warmup_s at the same demand
               was one node too many: no scale-in below its size for scale_in_floor_s
    short      nodes whose requests queue or are dropped, or whose requests take longer than
               latency_slo_ms; slow: longer than latency_slo_ms x scale_in_latency_fraction
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from decision.capacity import Sample, capacity, learn_all
from decision.demand import Demands, demands, queues_seen
from decision.demand_cycle import MAX_STEPS, CycleAhead, DemandRecord, find_period, last_cycle_ahead
from decision.forecast import forecast, skill
from decision.lead_time import LeadTime
from decision.policy import PolicyConfig
from decision.rules.demand_memory import DemandMemory
from decision.rules.diagnose import latency_slo
from decision.rules.memory import warming_up
from decision.rules.rule import Context, Rule
from decision.rules.view import DemandView


def _samples(ctx: Context, d: Demands, warming: bool) -> list[Sample]:
    """Every active node that served something, as capacity.learn reads it. Its latency is
    left out while caches warm after a plan (`warming`) and where it is over the latency
    objective: a node that slow is waiting on something a CPU queue does not explain (a read
    tenant that just arrived misses a cold cache on every get: 1,140 ms at 45 % CPU without
    a call queue, daily-peaks at 930 s), and read as a service time it said a request takes
    600 ms idle, so every node might run at min_utilisation only and plans bought 20 nodes for
    a peak of 5.9 node-loads. Such a node is short; the scale-out rules act on that."""
    arrays = ctx.arrays
    slo = latency_slo(ctx.policy)
    on = arrays.node_of >= 0
    k = len(arrays.active)
    per = [np.bincount(arrays.node_of[on], weights=r[on], minlength=k)
           for r in (arrays.reads, arrays.writes, arrays.scans)]
    out = []
    for i, (node, nd) in enumerate(zip(arrays.active, d.nodes)):
        if node.metrics is None or nd.served <= 0:
            continue
        late = slo is not None and nd.latency_ms is not None and nd.latency_ms > slo
        out.append(Sample(node.profile, float(per[0][i]), float(per[1][i]), float(per[2][i]),
                          node.metrics.cpu, None if warming or late else nd.latency_ms,
                          nd.queued))
    return out


def new_node_profile(d: Demands) -> str:
    """New nodes take the profile that serves most of the cluster's requests."""
    by: dict[str, float] = {}
    for n in d.nodes:
        by[n.profile] = by.get(n.profile, 0.0) + n.served
    return max(sorted(by), key=lambda p: by[p]) if by else "default"


def _lead(memory: DemandMemory, ctx: Context) -> DemandMemory:
    """The lead time, measured once the scale-out it waits for has ended."""
    lead = memory.lead or LeadTime(ctx.policy.scale_out_lead_s)
    ended = ctx.base.plan_ended_at()
    if memory.lead_from is not None and ended is not None and ended > memory.lead_from:
        return replace(memory, lead=lead.learn(ended - memory.lead_from), lead_from=None)
    return replace(memory, lead=lead)


def _rise(memory: DemandMemory, policy, now: float, lead_s: float) -> DemandMemory:
    """The largest rise of the demand within one lead time: today's over the least of the
    last lead time, or the one remembered, faded by half every rise_memory_s, if larger."""
    low = min((v for t, v in memory.recent.samples if t >= now - lead_s), default=0.0)
    now_demand = memory.recent.samples[-1][1] if memory.recent.samples else 0.0
    ratio = now_demand / low if low > 0.05 else 1.0
    kept = 1.0
    if memory.rise is not None and memory.rise_at is not None:
        kept = 1.0 + (memory.rise - 1.0) * 0.5 ** ((now - memory.rise_at) / policy.rise_memory_s)
    return replace(memory, rise=max(kept, ratio), rise_at=now)


def _scale_in_plan(ctx: Context, memory: DemandMemory) -> tuple[float, float] | None:
    """From the last scale-in's decision to its plan's end (now, while it runs), while that
    scale-in is not proved safe yet (DemandMemory.shrunk)."""
    s = memory.shrunk
    if s is None:
        return None
    ended = ctx.base.plan_ended_at()
    in_flight = ctx.base.plan_in_flight() is not None
    return s.at, ctx.now if in_flight or ended is None or ended < s.at else ended


def _verify_scale_in(memory: DemandMemory, ctx: Context, short: bool,
                     demand: float) -> DemandMemory:
    """The last scale-in judged once warmup_s after its plan: a node short meanwhile at about
    the demand it saw sets the floor; none, and it is forgotten. An old floor lapses."""
    policy, now = ctx.policy, ctx.now
    if memory.floor_until is not None and now >= memory.floor_until:
        memory = replace(memory, floor=None, floor_until=None)
    s = memory.shrunk
    if s is None:
        return memory
    if short and demand <= s.demand * (1.0 + policy.scale_in_band) * 1.1:
        return replace(memory, shrunk=None, floor=s.nodes_before,
                       floor_until=now + policy.scale_in_floor_s)
    if not warming_up(ctx.base, s.at, now, policy.warmup_s):
        return replace(memory, shrunk=None)
    return memory


CYCLE_STEP_S = 30.0  # the demand record's finest step: a decision's pace (loop.sample_interval_s)


def cycle_keep_s(policy: PolicyConfig) -> float:
    """How much of the demand the cycle record keeps: the operator's period and half again (the
    stretch ahead is read one period back), or two of the longest periods looked for (one is
    found by the one before it); nothing when neither."""
    if policy.predict_cycle_s is not None:
        return 1.5 * policy.predict_cycle_s
    return 2.0 * policy.max_cycle_s if policy.detect_cycle else 0.0


def cycle_step_s(keep_s: float) -> float:
    """The record's step: CYCLE_STEP_S, or a whole number of them that keeps it in MAX_STEPS."""
    return CYCLE_STEP_S * max(1, math.ceil(keep_s / (MAX_STEPS * CYCLE_STEP_S) - 1e-9))


def _cycle(record: DemandRecord, policy: PolicyConfig, now: float, demand: float,
           horizon_s: float) -> tuple[DemandRecord, CycleAhead | None]:
    """The record with the demand now, and what its cycle says of the next `horizon_s`."""
    keep = cycle_keep_s(policy)
    if keep <= 0:
        return DemandRecord(), None
    step = cycle_step_s(keep)
    record = (record if record.step_s == step else DemandRecord(step)).add(now, demand, keep)
    period, found = policy.predict_cycle_s, False
    if period is None:
        seen = find_period(record, min_s=policy.min_cycle_s, max_s=policy.max_cycle_s,
                           match=policy.cycle_match, swing=policy.cycle_swing)
        period, found = (seen.period_s, True) if seen is not None else (None, False)
    if period is None:
        return record, None
    return record, last_cycle_ahead(record, now, period, horizon_s, policy.trend_window_s,
                                    found=found)


class Measure(Rule):
    name = "measure"
    switch = "size_from_demand"

    def observe(self, ctx: Context) -> Context:
        policy = ctx.policy
        if not policy.size_from_demand:
            return ctx
        now = ctx.now
        d = demands(ctx.arrays, ctx.memory.demand.queues, now)
        mem = replace(_lead(ctx.memory.demand, ctx), queues=queues_seen(d, now))
        last = ctx.memory.last_action_at
        # a plan in flight is moving data and booting nodes: latency then is cold caches and
        # moves, not the nodes' service time (its end starts the warm-up)
        warming = ctx.base.plan_in_flight() is not None or warming_up(
            ctx.base, last, now, policy.warmup_s)
        learned = learn_all(mem.capacity, _samples(ctx, d, warming), now,
                            half_life_s=policy.capacity_half_life_s)
        profile = new_node_profile(d)
        slo = latency_slo(policy)
        cap = capacity(learned.get(profile), slo, policy.slo_headroom,
                       ceiling=policy.max_utilisation, floor=policy.min_utilisation)
        u_max = cap.max_utilisation if cap is not None else policy.max_utilisation
        lead_time = mem.lead or LeadTime(policy.scale_out_lead_s)
        lead = lead_time.seconds
        # the forecasts judged need their own trend window and a horizon after them
        judging = (policy.forecast_skill_window_s + policy.trend_window_s + 60.0
                   if policy.forecast_skill else 0.0)
        recent = mem.recent.add(now, d.total, max(2 * policy.scale_in_window_s,
                                                  policy.trend_window_s, lead + 60.0 + judging))
        # sized for the demand when the nodes arrive and until the next decision can add more
        horizon = lead + 2 * max(recent.gap(), 30.0)
        trend = dict(window_s=policy.trend_window_s, max_growth=policy.forecast_max_growth,
                     persistence_s=policy.trend_persistence_s)
        judged_s = min(horizon, policy.forecast_skill_horizon_s or horizon)
        record = skill(recent, judged_s, since=now - judged_s - policy.forecast_skill_window_s,
                       prior_rise=policy.forecast_skill_prior, held=_scale_in_plan(ctx, mem),
                       **trend) \
            if policy.forecast_skill else (1.0, 0)
        cycle, ahead_of_cycle = _cycle(mem.cycle, policy, now, d.total, horizon)
        ahead = forecast(recent, d.total, horizon, skill=record[0], judged=record[1],
                         significance=policy.trend_significance,
                         **trend).with_cycle(ahead_of_cycle)
        short = tuple(n.node for n in d.nodes if n.queued or (
            slo is not None and n.latency_ms is not None and n.latency_ms > slo))
        slow = tuple(n.node for n in d.nodes if slo is not None and n.latency_ms is not None
                     and n.latency_ms > slo * policy.scale_in_latency_fraction)
        mem = _rise(replace(mem, capacity=learned, recent=recent, cycle=cycle), policy, now, lead)
        rise = max(1.0 + policy.scale_in_growth, mem.rise or 1.0)
        view = DemandView(d, profile, cap, u_max, ahead, lead_time,
                          recent.peak(since=now - policy.scale_in_window_s),
                          recent.peak(since=now - 2 * policy.scale_in_window_s), rise, short,
                          slow, policy.slo_headroom)
        mem = _verify_scale_in(mem, ctx, bool(short), d.total)
        return replace(ctx, view=view, memory=replace(ctx.memory, demand=mem))


__all__ = ["Measure", "new_node_profile"]
