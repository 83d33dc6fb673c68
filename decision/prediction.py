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
share of a node's utilisation then (`met.peak_cost:` / `met.peak_at:`, forgotten after two and a
half cycles): a predicted scale-out gives the new nodes the partitions the last peak woke,
weighed as they were then, instead of a blind share. Pure: the memo dict is
DecisionMemory.history's `met.*` part.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from decision.policy import PolicyConfig

CYCLE_NEED = "met.cycle_need:"  # + slot: nodes the demand asked for while capacity was short
CYCLE_AT = "met.cycle_at:"      # + slot: taken_at (epoch s) of that slot's last write
PREDICT_UNTIL = "met.predict_until"  # taken_at until which the last cycle's short slots reach
PEAK_COST = "met.peak_cost:"    # + partition: its share of a node's utilisation while short
PEAK_AT = "met.peak_at:"        # + partition: taken_at of that


@dataclass(frozen=True)
class Prediction:
    nodes: int          # the most nodes a slot ahead asked for in the last cycle
    starts_in_s: float  # seconds from now to the first such slot
    until_s: float      # seconds from now to the end of the last such slot


def slot_of(at: float, policy: PolicyConfig) -> int:
    """The slot of the cycle that time `at` (epoch s) falls in."""
    cycle = float(policy.predict_cycle_s or 0.0)
    return int(math.floor((at % cycle) / policy.predict_bucket_s))


def record_need(memo: dict[str, float], now: float, need: int, policy: PolicyConfig) -> None:
    """Remember that at `now` the demand asked for `need` nodes while capacity was short."""
    slot = slot_of(now, policy)
    at = memo.get(CYCLE_AT + str(slot))
    same_visit = at is not None and 0 <= now - at < float(policy.predict_cycle_s) / 2
    kept = memo.get(CYCLE_NEED + str(slot), 0.0) if same_visit else 0.0
    memo[CYCLE_NEED + str(slot)] = float(max(kept, need))
    memo[CYCLE_AT + str(slot)] = now


def predicted_need(memo: dict[str, float], now: float, policy: PolicyConfig) -> Prediction | None:
    """What the last cycle's slots starting within the next predict_lead_s asked for; None
    when none of them was short (or prediction is off)."""
    cycle = float(policy.predict_cycle_s or 0.0)
    if cycle <= 0:
        return None
    found: Prediction | None = None
    # From the start of the next slot: the current one is this cycle's own (the reactive rules
    # see it now).
    phase = now % cycle
    ahead = (math.floor(phase / policy.predict_bucket_s) + 1) * policy.predict_bucket_s - phase
    while ahead <= policy.predict_lead_s:
        slot = slot_of(now + ahead, policy)
        need, at = memo.get(CYCLE_NEED + str(slot)), memo.get(CYCLE_AT + str(slot))
        if need and at is not None and cycle / 2 < now - at < 2.5 * cycle:
            end = ahead + policy.predict_bucket_s
            found = (Prediction(max(int(need), found.nodes), found.starts_in_s, end) if found
                     else Prediction(int(need), ahead, end))
        ahead += policy.predict_bucket_s
    return found


def record_hot(memo: dict[str, float], now: float, hot: dict[str, float],
               policy: PolicyConfig) -> None:
    """Remember the partitions that carried the load while capacity was short (id -> share of
    its node's utilisation), so the next cycle's predicted scale-out can give the new nodes the
    partitions the peak wakes; forget what is older than two and a half cycles."""
    cycle = float(policy.predict_cycle_s or 0.0)
    for key in [k for k in memo if k.startswith(PEAK_AT)]:
        if now - memo[key] > 2.5 * cycle:
            pid = key[len(PEAK_AT):]
            memo.pop(key)
            memo.pop(PEAK_COST + pid, None)
    for pid, cost in hot.items():
        at = memo.get(PEAK_AT + pid)
        same_visit = at is not None and 0 <= now - at < cycle / 2
        memo[PEAK_COST + pid] = max(cost, memo.get(PEAK_COST + pid, 0.0)) if same_visit else cost
        # when it first woke in this visit: the next cycle must have it in place by then
        memo[PEAK_AT + pid] = at if same_visit else now


def expected_hot(memo: dict[str, float], now: float, policy: PolicyConfig) -> dict[str, float]:
    """The partitions the last cycle's load woke between now and predict_lead_s ahead, with
    their share of a node's utilisation then."""
    cycle = float(policy.predict_cycle_s or 0.0)
    out = {}
    for key, at in memo.items():
        if not key.startswith(PEAK_AT) or not cycle / 2 < now - at < 2.5 * cycle:
            continue
        if (at - now) % cycle <= policy.predict_lead_s + policy.predict_bucket_s:
            pid = key[len(PEAK_AT):]
            out[pid] = memo.get(PEAK_COST + pid, 0.0)
    return out
