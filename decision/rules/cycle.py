"""Predictive scale-out's memory of the load's cycle: what capacity each slot of the last cycle
asked for, and what the slots just ahead of now ask for (policy.predict_cycle_s; opt-in).

The cycle is cut into slots of predict_bucket_s. While capacity is short (or a predicted
scale-out is carrying the load), a decision writes the nodes the demand asks for into the
current slot, keeping the largest seen in this visit of the slot; the first write in a new
cycle replaces the last cycle's value. Every decision writes its slot (0 when capacity was not
short), so a slot ahead of now holds the last cycle in which a decision fell in it: it is read
when written between half a cycle and two and a half cycles ago (a slot the last cycle spent
inside one long plan keeps the cycle before); older memories and this cycle's writes do not
predict. While short, the busiest partitions (two per node) are remembered too, with their
share of a node's utilisation then (forgotten after two and a half cycles): a predicted
scale-out gives the new nodes the partitions the last peak woke, weighed as they were then,
instead of a blind share. Pure: memories in, memories out.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from decision.policy import PolicyConfig
from decision.rules.memory import CycleSlot, PeakPartition


@dataclass(frozen=True)
class Prediction:
    nodes: int          # the most nodes a slot ahead asked for in the last cycle
    starts_in_s: float  # seconds from now to the first such slot
    until_s: float      # seconds from now to the end of the last such slot


def slot_of(at: float, policy: PolicyConfig) -> int:
    """The slot of the cycle that time `at` (epoch s) falls in."""
    cycle = float(policy.predict_cycle_s or 0.0)
    return int(math.floor((at % cycle) / policy.predict_bucket_s))


def record_need(cycle: Mapping[int, CycleSlot], now: float, need: int,
                policy: PolicyConfig) -> dict[int, CycleSlot]:
    """`cycle` told that at `now` the demand asked for `need` nodes (0: capacity was enough)."""
    slot = slot_of(now, policy)
    old = cycle.get(slot)
    same_visit = old is not None and 0 <= now - old.at < float(policy.predict_cycle_s or 0.0) / 2
    kept = old.need if same_visit and old is not None else 0
    return {**cycle, slot: CycleSlot(max(kept, need), now)}


def predicted_need(cycle: Mapping[int, CycleSlot], now: float,
                   policy: PolicyConfig) -> Prediction | None:
    """What the last cycle's slots starting within the next predict_lead_s asked for; None
    when none of them was short (or prediction is off)."""
    length = float(policy.predict_cycle_s or 0.0)
    if length <= 0:
        return None
    found: Prediction | None = None
    # From the start of the next slot: the current one is this cycle's own (the reactive rules
    # see it now).
    phase = now % length
    ahead = (math.floor(phase / policy.predict_bucket_s) + 1) * policy.predict_bucket_s - phase
    while ahead <= policy.predict_lead_s:
        seen = cycle.get(slot_of(now + ahead, policy))
        if seen is not None and seen.need and length / 2 < now - seen.at < 2.5 * length:
            end = ahead + policy.predict_bucket_s
            found = (Prediction(max(seen.need, found.nodes), found.starts_in_s, end) if found
                     else Prediction(seen.need, ahead, end))
        ahead += policy.predict_bucket_s
    return found


def record_hot(peaks: Mapping[str, PeakPartition], now: float, hot: Mapping[str, float],
               policy: PolicyConfig) -> dict[str, PeakPartition]:
    """`peaks` told which partitions carried the load while capacity was short (id -> share of
    its node's utilisation), so the next cycle's predicted scale-out can give the new nodes the
    partitions the peak wakes; what is older than two and a half cycles is forgotten."""
    length = float(policy.predict_cycle_s or 0.0)
    out = {pid: p for pid, p in peaks.items() if not now - p.at > 2.5 * length}
    for pid, cost in hot.items():
        old = out.get(pid)
        if old is not None and 0 <= now - old.at < length / 2:
            # the same peak: its largest share, from when it first woke (the next cycle must
            # have it in place by then)
            out[pid] = PeakPartition(max(cost, old.cost), old.at)
        else:
            out[pid] = PeakPartition(cost, now)
    return out


def expected_hot(peaks: Mapping[str, PeakPartition], now: float,
                 policy: PolicyConfig) -> dict[str, float]:
    """The partitions the last cycle's load woke between now and predict_lead_s ahead, with
    their share of a node's utilisation then."""
    length = float(policy.predict_cycle_s or 0.0)
    return {pid: p.cost for pid, p in peaks.items()
            if length / 2 < now - p.at < 2.5 * length
            and (p.at - now) % length <= policy.predict_lead_s + policy.predict_bucket_s}


__all__ = ["Prediction", "slot_of", "record_need", "predicted_need", "record_hot", "expected_hot"]
