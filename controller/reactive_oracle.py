"""The reactive oracle: the least a policy that learns of demand only when it arrives could spend
to meet the SLO, beside the (clairvoyant) oracle of controller/cost.py.

The oracle sums, per minute, the smallest node count serving that minute's load: it has its
nodes the minute demand rises, which no policy that reads the cluster can, since a node
launched now serves only a lead time later (boot + RegionServer join). The reactive oracle
knows each minute's need the moment the minute starts (no policy learns it sooner without a
forecast) and sizes for it plus `headroom` nodes, launching what is short — those nodes serve
from `lead_minutes` later — and releasing what is over at once, booting nodes first. A minute
is met when the nodes ready in it reach its need. Everything else is in its favour: no
moves, no cold caches, no decision cadence, scale-in without risk.

`least_headroom` finds the fewest spare nodes with which it meets the target share of minutes,
and what that costs. When its node-minutes are close to the smallest static size meeting the
SLO, no policy without a forecast can save much on that scenario: the bar of "savings captured"
is then a bar on forecasting, not on reacting. Pure: per-minute needs in, figures out.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from controller.cost import meets


@dataclass(frozen=True)
class Follow:
    """One run of the reactive oracle, per minute: nodes billed (ready and booting), nodes
    ready, and whether the ready ones reached the minute's need."""

    billed: tuple[int, ...]
    ready: tuple[int, ...]
    met: tuple[bool, ...]

    @property
    def node_minutes(self) -> float:
        return float(sum(self.billed))

    @property
    def attainment(self) -> float:
        return sum(self.met) / len(self.met) if self.met else 1.0


@dataclass(frozen=True)
class LeastHeadroom:
    headroom: int         # spare nodes above each minute's need
    lead_minutes: int
    node_minutes: float
    attainment: float     # share of minutes met


def follow(needed: Sequence[int], lead_minutes: int, headroom: int) -> Follow:
    """The reactive oracle over per-minute needs; it starts with its first minute's need plus
    headroom, ready."""
    if lead_minutes < 0 or headroom < 0:
        raise ValueError(f"lead_minutes and headroom must be >= 0, got {lead_minutes}, {headroom}")
    ready = (int(needed[0]) + headroom) if len(needed) else 0
    booting: list[int] = []  # the minute each booting node becomes ready, oldest launch first
    billed, ready_at, met = [], [], []
    for m, need in enumerate(needed):
        ready += sum(1 for r in booting if r <= m)
        booting = [r for r in booting if r > m]
        target = int(need) + headroom
        short = target - ready - len(booting)
        if short > 0:
            if lead_minutes == 0:
                ready += short
            else:
                booting += [m + lead_minutes] * short
        elif short < 0:
            over = -short
            cancel = min(over, len(booting))  # the last launched are the furthest from serving
            booting = booting[:len(booting) - cancel]
            ready -= over - cancel
        billed.append(ready + len(booting))
        ready_at.append(ready)
        met.append(ready >= int(need))
    return Follow(tuple(billed), tuple(ready_at), tuple(met))


def start_ceiling(needed: Sequence[int], lead_minutes: int, initial_nodes: int) -> float:
    """The most minutes any policy that starts with the scenario's `initial_nodes` can meet: a
    node it launches in the first minute serves from minute `lead_minutes`, so every earlier
    minute that needs more than `initial_nodes` is lost whatever it does (1.0 for a scenario
    that starts with enough; every later minute counted as met)."""
    if not len(needed):
        return 1.0
    lost = sum(1 for need in needed[:max(lead_minutes, 0)] if int(need) > initial_nodes)
    return 1.0 - lost / len(needed)


def least_headroom(needed: Sequence[int], lead_minutes: int, target: float) -> LeastHeadroom:
    """The fewest spare nodes with which the reactive oracle meets `target` of the minutes (a
    headroom of the largest need always does: it never has fewer ready nodes than that)."""
    top = max((int(n) for n in needed), default=0)
    for h in range(top + 1):
        run = follow(needed, lead_minutes, h)
        if meets(run.attainment, target):
            break
    return LeastHeadroom(h, lead_minutes, run.node_minutes, run.attainment)
