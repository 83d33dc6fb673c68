"""What the default policy's rules remember between decisions, typed, and its form on disk.

The rules read and return a `RulesMemory`; the state file (and `Plan.memory`) keeps it in
`DecisionMemory.history` as the `met.*` keys the default policy has always written, one float
each. Because the keys did not change, a state file written before the rules existed is read as
it always was, and one written now is read by an older daemon: upgrading or rolling back in
place keeps the memory. The keys are spelt here and nowhere else.

A key this version does not read (a newer version's, or MET's re-placement's
`met.reclassify:<partition>`) is kept as it was. A record missing one of the keys it is always
written with (only a hand-edited file has one) is forgotten rather than guessed at; except
what an older version never wrote, read as that version meant it: a split recorded before the
streak was kept (commit bb940e0) starts a streak of 0, a scale-out before its size was kept
(e779129) is judged without it.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from decision.model import DecisionMemory
from decision.rules.demand_memory import DemandMemory, demand_pairs, read_demand

PREFIX = "met."  # the part of DecisionMemory.history the default policy owns

LAST_ACTION_AT = "met.last_action_at"     # taken_at (epoch s) of the last plan with actions
OUT_BEFORE = "met.out_requests_before"    # requests served just before the last scale-out
OUT_AT = "met.out_at"                     # taken_at of the last scale-out
OUT_ADDED = "met.out_added"               # nodes that scale-out added / nodes before it
NO_GAIN = "met.no_gain_requests"          # requests served when a scale-out did not pay
PREDICT_UNTIL = "met.predict_until"       # taken_at until which the last cycle's peak reaches
# + table
SPLIT_LOAD = "met.split_load:"            # requests/s the table's last split partition served
SPLIT_AT = "met.split_at:"                # taken_at of that split
SPLIT_STREAK = "met.split_streak:"        # splits in a row that did not spread its load
# + slot of the cycle
CYCLE_NEED = "met.cycle_need:"            # nodes the demand asked for in that slot
CYCLE_AT = "met.cycle_at:"                # taken_at of the slot's last write
# + partition
PEAK_COST = "met.peak_cost:"              # its share of a node's utilisation while short
PEAK_AT = "met.peak_at:"                  # when it first woke in that peak


@dataclass(frozen=True)
class PendingScaleOut:
    """A scale-out not judged yet (verify after acting)."""

    at: float                # taken_at of the decision that planned it
    requests_before: float   # requests/s served just before it
    added: float | None      # nodes it added / nodes before it (None: written before this was kept)


@dataclass(frozen=True)
class SplitRecord:
    """A table's last split of a hot partition."""

    load: float   # requests/s the split partition served
    at: float     # taken_at of the split
    streak: int   # splits in a row that left one half with (nearly) all the load


@dataclass(frozen=True)
class CycleSlot:
    """One slot of the load's cycle (predictive scale-out)."""

    need: int     # nodes the load asked for in the slot's last visit (0: capacity was enough)
    at: float     # taken_at of the slot's last write


@dataclass(frozen=True)
class PeakPartition:
    """A partition that carried a peak while capacity was short (predictive scale-out)."""

    cost: float   # its share of a node's utilisation then (the largest in that peak)
    at: float     # when it first woke in that peak


@dataclass(frozen=True)
class RulesMemory:
    """Everything the default policy's rules carry from one decision to the next."""

    last_action_at: float | None = None       # taken_at of the last plan with actions
    scale_out: PendingScaleOut | None = None  # the last scale-out, until verify judges it
    no_gain_requests: float | None = None     # requests/s served when a scale-out did not pay
    predict_until: float | None = None        # taken_at until which a predicted peak reaches
    splits: Mapping[str, SplitRecord] = field(default_factory=dict)      # by table
    cycle: Mapping[int, CycleSlot] = field(default_factory=dict)         # by slot
    peaks: Mapping[str, PeakPartition] = field(default_factory=dict)     # by partition id
    demand: DemandMemory = DemandMemory()     # sizing from demand (rules/demand_memory.py)
    kept: tuple[tuple[str, float], ...] = ()  # met.* keys this version does not read

    def acted(self, at: float) -> RulesMemory:
        """This memory after a plan with actions decided at `at` (warm-up counts from it)."""
        return replace(self, last_action_at=at)


def _by_suffix(pairs: Mapping[str, float], prefix: str) -> dict[str, float]:
    return {k[len(prefix):]: v for k, v in pairs.items() if k.startswith(prefix)}


def _slot(suffix: str) -> int | None:
    """The slot number a key's suffix spells, when it spells one exactly as it is written."""
    return int(suffix) if suffix.isdigit() and str(int(suffix)) == suffix else None


def read_memory(history: Iterable[tuple[str, float]]) -> RulesMemory:
    """The rules' memory in a DecisionMemory.history (the `met.*` keys; others are ignored)."""
    mine = {k: float(v) for k, v in history if k.startswith(PREFIX)}
    used: set[str] = set()

    def take(*keys: str) -> None:
        used.update(keys)

    scale_out = None
    if OUT_AT in mine and OUT_BEFORE in mine:
        scale_out = PendingScaleOut(mine[OUT_AT], mine[OUT_BEFORE], mine.get(OUT_ADDED))
    take(OUT_AT, OUT_BEFORE, OUT_ADDED)
    splits = {}
    loads, ats, streaks = (_by_suffix(mine, p) for p in (SPLIT_LOAD, SPLIT_AT, SPLIT_STREAK))
    for table in loads.keys() | ats.keys() | streaks.keys():
        if table in loads and table in ats:  # no streak: written before it was kept
            splits[table] = SplitRecord(loads[table], ats[table], int(streaks.get(table, 0.0)))
        take(SPLIT_LOAD + table, SPLIT_AT + table, SPLIT_STREAK + table)
    cycle = {}
    needs, ats = _by_suffix(mine, CYCLE_NEED), _by_suffix(mine, CYCLE_AT)
    for suffix in needs.keys() | ats.keys():
        slot = _slot(suffix)
        if slot is None:
            continue  # not a slot this version wrote: kept as it is
        if suffix in needs and suffix in ats:
            cycle[slot] = CycleSlot(int(needs[suffix]), ats[suffix])
        take(CYCLE_NEED + suffix, CYCLE_AT + suffix)
    peaks = {}
    costs, ats = _by_suffix(mine, PEAK_COST), _by_suffix(mine, PEAK_AT)
    for pid in costs.keys() | ats.keys():
        if pid in costs and pid in ats:
            peaks[pid] = PeakPartition(costs[pid], ats[pid])
        take(PEAK_COST + pid, PEAK_AT + pid)
    take(LAST_ACTION_AT, NO_GAIN, PREDICT_UNTIL)
    demand, read = read_demand(mine)
    take(*read)
    return RulesMemory(
        last_action_at=mine.get(LAST_ACTION_AT), scale_out=scale_out,
        no_gain_requests=mine.get(NO_GAIN), predict_until=mine.get(PREDICT_UNTIL),
        splits=splits, cycle=cycle, peaks=peaks, demand=demand,
        kept=tuple(sorted((k, v) for k, v in mine.items() if k not in used)))


def memory_pairs(memory: RulesMemory) -> tuple[tuple[str, float], ...]:
    """`memory` as `met.*` history pairs, sorted by key (the state file's order, as ever)."""
    out: dict[str, float] = dict(memory.kept)
    for key, value in ((LAST_ACTION_AT, memory.last_action_at), (NO_GAIN, memory.no_gain_requests),
                       (PREDICT_UNTIL, memory.predict_until)):
        if value is not None:
            out[key] = value
    if memory.scale_out is not None:
        out[OUT_AT], out[OUT_BEFORE] = memory.scale_out.at, memory.scale_out.requests_before
        if memory.scale_out.added is not None:
            out[OUT_ADDED] = memory.scale_out.added
    for table, s in memory.splits.items():
        out[SPLIT_LOAD + table], out[SPLIT_AT + table] = s.load, s.at
        out[SPLIT_STREAK + table] = float(s.streak)
    for slot, c in memory.cycle.items():
        out[CYCLE_NEED + str(slot)], out[CYCLE_AT + str(slot)] = float(c.need), c.at
    for pid, p in memory.peaks.items():
        out[PEAK_COST + pid], out[PEAK_AT + pid] = p.cost, p.at
    out.update(demand_pairs(memory.demand))
    return tuple(sorted(out.items()))


def settled_since(base: DecisionMemory, acted_at: float) -> float:
    """When a plan decided at `acted_at` took effect: the end of that plan when the control
    loop recorded it (a scale-out's plan can outlast several warm-up windows), else acted_at."""
    ended = base.plan_ended_at()
    return max(acted_at, ended) if ended is not None else acted_at


def warming_up(base: DecisionMemory, acted_at: float | None, now: float, warmup_s: float) -> bool:
    """Whether `now` falls within `warmup_s` of when the plan decided at `acted_at` took effect
    (settled_since): caches are still cold there, so what the nodes show is not their capacity."""
    return acted_at is not None and now - settled_since(base, acted_at) < warmup_s


def with_rules_memory(base: DecisionMemory, memory: RulesMemory, step: int) -> DecisionMemory:
    """`base` after a decision of the default policy: its step, the first decision made, and
    the rules' memory in place of the `met.*` history (other owners' keys kept, first)."""
    other = tuple(h for h in base.history if not h[0].startswith(PREFIX))
    return replace(base, step=step, first_decision_done=True,
                   history=other + memory_pairs(memory))


__all__ = ["warming_up", "RulesMemory", "PendingScaleOut", "SplitRecord", "CycleSlot", "PeakPartition",
           "read_memory", "memory_pairs", "with_rules_memory", "settled_since"]
