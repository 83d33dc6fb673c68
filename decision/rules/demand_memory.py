"""What sizing from demand remembers between decisions, typed, and its `met.*` keys: the
capacity each profile taught (decision/capacity.py), the demand's trend (decision/forecast.py),
the demand of the last few decisions (the scale-in window), the demand at fixed steps over its
last cycles (decision/demand_cycle.py), the scale-out lead time
(decision/lead_time.py), the scale-out whose lead is still to be measured, and the partitions
the plan in flight moves (an extension plans on the placement that plan leads to), and each
node's call queue at the last decision (its growth is demand, decision/demand.py).

Read from and written to DecisionMemory.history through rules/memory.py, beside the rules'
other keys; a record missing one of its keys is forgotten, never guessed at.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from decision.capacity import Learned
from decision.demand import QueueSeen
from decision.demand_cycle import MAX_STEPS, MISSING, DemandRecord
from decision.forecast import Recent
from decision.lead_time import LeadTime

CAP = "met.cap:"            # + profile + ":" + field of Learned
RECENT_AT = "met.recent_at:"  # + index: taken_at of a recent decision
RECENT_D = "met.recent_d:"    # + index: its demand (node-loads)
LEAD_S = "met.lead_s"       # the lead time estimate, s
LEAD_N = "met.lead_n"       # scale-outs it was measured on
LEAD_FROM = "met.lead_from"  # taken_at of the scale-out whose lead is not measured yet
SIZED_FOR = "met.sized_for"  # demand (node-loads) the last scale-out was sized for
SHRUNK = "met.shrunk_"      # + from | at | demand: the last scale-in, until it proved safe
RISE = "met.rise"           # the largest demand rise within a lead time remembered (a factor)
RISE_AT = "met.rise_at"     # taken_at it was last updated
FLOOR = "met.floor"         # nodes a scale-in may not go below (one that left nodes short)
FLOOR_UNTIL = "met.floor_until"  # taken_at until which the floor holds
QUEUED = "met.queued:"      # + partition id: moved by the plan in flight (value: its decision)
PLAN_NODES = "met.plan_nodes:"  # + node id: active when the plan in flight was decided
QUEUE = "met.queue:"        # + node id: calls in its RPC queue at the last decision
QUEUE_AT = "met.queue_at"   # taken_at of that decision
CYCLE_STEP = "met.demand_step_s"  # the demand record's step, s
CYCLE_START = "met.demand_start"  # taken_at its first step starts
CYCLE_D = "met.demand_d:"   # + step index: the most demand (node-loads) measured in it

_LEARNED = ("xx0", "xx1", "xx2", "xx3", "xx4", "xx5", "xy0", "xy1", "xy2", "yy", "weight",
            "service_ms", "at")


@dataclass(frozen=True)
class ScaleIn:
    """A scale-in not proved safe yet: the size before it, when, and the demand it saw."""

    nodes_before: int
    at: float
    demand: float


@dataclass(frozen=True)
class DemandMemory:
    capacity: Mapping[str, Learned] = field(default_factory=dict)  # by profile
    recent: Recent = Recent()
    lead: LeadTime | None = None
    lead_from: float | None = None
    sized_for: float | None = None
    shrunk: ScaleIn | None = None
    floor: int | None = None
    floor_until: float | None = None
    rise: float | None = None
    rise_at: float | None = None
    queued: frozenset[str] = frozenset()  # partitions the plan in flight moves
    plan_nodes: frozenset[str] = frozenset()  # nodes active when that plan was decided
    queues: Mapping[str, QueueSeen] = field(default_factory=dict)  # by node, last decision
    cycle: DemandRecord = DemandRecord()  # the demand at fixed steps, for its cycle


def _learned_values(x: Learned) -> dict[str, float | None]:
    return {**{f"xx{i}": v for i, v in enumerate(x.xx)}, **{f"xy{i}": v for i, v in enumerate(x.xy)},
            "yy": x.yy, "weight": x.weight, "service_ms": x.service_ms, "at": x.at}


def read_demand(mine: Mapping[str, float]) -> tuple[DemandMemory, set[str]]:
    """The demand memory in the `met.*` pairs `mine`, and the keys it read."""
    used: set[str] = set()
    capacity: dict[str, Learned] = {}
    by_profile: dict[str, dict[str, float]] = {}
    for key, value in mine.items():
        if key.startswith(CAP):
            profile, _, name = key[len(CAP):].rpartition(":")
            if profile and name in _LEARNED:
                by_profile.setdefault(profile, {})[name] = value
                used.add(key)
    for profile, v in by_profile.items():
        need = [n for n in _LEARNED if n not in ("service_ms", "at")]
        if all(n in v for n in need):
            capacity[profile] = Learned(
                xx=tuple(v[f"xx{i}"] for i in range(6)),
                xy=(v["xy0"], v["xy1"], v["xy2"]), yy=v["yy"], weight=v["weight"],
                service_ms=v.get("service_ms"), at=v.get("at"))
    shrunk = None
    names = [SHRUNK + n for n in ("from", "at", "demand")]
    if all(n in mine for n in names):
        shrunk = ScaleIn(int(mine[names[0]]), mine[names[1]], mine[names[2]])
    used.update(names)
    floor = int(mine[FLOOR]) if FLOOR in mine and FLOOR_UNTIL in mine else None
    used.update((FLOOR, FLOOR_UNTIL, RISE, RISE_AT))
    rise = (mine[RISE], mine[RISE_AT]) if RISE in mine and RISE_AT in mine else (None, None)
    samples = []
    for key, at in mine.items():
        if key.startswith(RECENT_AT):
            i = key[len(RECENT_AT):]
            used.update((key, RECENT_D + i))
            if RECENT_D + i in mine:
                samples.append((at, mine[RECENT_D + i]))
    used.update(k for k in mine if k.startswith(RECENT_D))
    lead = LeadTime(mine[LEAD_S], int(mine.get(LEAD_N, 0))) if LEAD_S in mine else None
    used.update((LEAD_S, LEAD_N, LEAD_FROM, SIZED_FOR))
    queued = frozenset(k[len(QUEUED):] for k in mine if k.startswith(QUEUED) and len(k) > len(QUEUED))
    plan_nodes = frozenset(k[len(PLAN_NODES):] for k in mine
                           if k.startswith(PLAN_NODES) and len(k) > len(PLAN_NODES))
    used.update(k for k in mine if k.startswith((QUEUED, PLAN_NODES, QUEUE)))
    used.add(QUEUE_AT)
    queues = {k[len(QUEUE):]: QueueSeen(mine[QUEUE_AT], v) for k, v in mine.items()
              if k.startswith(QUEUE) and len(k) > len(QUEUE) and QUEUE_AT in mine}
    cycle, cycle_keys = _read_cycle(mine)
    used.update(cycle_keys)
    return DemandMemory(capacity, Recent(tuple(sorted(samples))), lead, mine.get(LEAD_FROM),
                        mine.get(SIZED_FOR), shrunk, floor,
                        mine.get(FLOOR_UNTIL) if floor is not None else None, rise[0], rise[1],
                        queued, plan_nodes, queues, cycle), used


def _read_cycle(mine: Mapping[str, float]) -> tuple[DemandRecord, set[str]]:
    """The demand record, and its keys. Steps are read from the first on while they follow
    each other; a record without its step or start, or with none of its steps, is empty."""
    keys = {k for k in mine if k.startswith(CYCLE_D)} | {CYCLE_STEP, CYCLE_START}
    step, start = mine.get(CYCLE_STEP), mine.get(CYCLE_START)
    if step is None or start is None or not (math.isfinite(step) and step > 0 and math.isfinite(start)):
        return DemandRecord(), keys
    values: list[float] = []
    while f"{CYCLE_D}{len(values)}" in mine and len(values) < MAX_STEPS:
        v = mine[f"{CYCLE_D}{len(values)}"]
        values.append(v if math.isfinite(v) and v >= 0 else MISSING)
    return (DemandRecord(step, start, tuple(values)) if values else DemandRecord(step)), keys


def demand_pairs(memory: DemandMemory) -> dict[str, float]:
    out: dict[str, float] = {}
    for profile, learned in memory.capacity.items():
        for name, value in _learned_values(learned).items():
            if value is not None:
                out[f"{CAP}{profile}:{name}"] = float(value)
    if memory.shrunk is not None:
        out[SHRUNK + "from"] = float(memory.shrunk.nodes_before)
        out[SHRUNK + "at"], out[SHRUNK + "demand"] = memory.shrunk.at, memory.shrunk.demand
    if memory.rise is not None and memory.rise_at is not None:
        out[RISE], out[RISE_AT] = memory.rise, memory.rise_at
    if memory.floor is not None and memory.floor_until is not None:
        out[FLOOR], out[FLOOR_UNTIL] = float(memory.floor), memory.floor_until
    for i, (at, d) in enumerate(memory.recent.samples):
        out[f"{RECENT_AT}{i}"], out[f"{RECENT_D}{i}"] = at, d
    if memory.lead is not None:
        out[LEAD_S], out[LEAD_N] = memory.lead.seconds, float(memory.lead.measured)
    if memory.lead_from is not None:
        out[LEAD_FROM] = memory.lead_from
    if memory.sized_for is not None:
        out[SIZED_FOR] = memory.sized_for
    for partition in sorted(memory.queued):
        out[QUEUED + partition] = 1.0
    for node in sorted(memory.plan_nodes):
        out[PLAN_NODES + node] = 1.0
    for node, seen in sorted(memory.queues.items()):
        out[QUEUE + node], out[QUEUE_AT] = seen.queue, seen.at
    if memory.cycle.start_at is not None and memory.cycle.values:
        out[CYCLE_STEP], out[CYCLE_START] = memory.cycle.step_s, memory.cycle.start_at
        for i, v in enumerate(memory.cycle.values):
            out[f"{CYCLE_D}{i}"] = v
    return out


__all__ = ["DemandMemory", "ScaleIn", "read_demand", "demand_pairs"]
