"""Which policy decides: the `Policy` protocol and the registry `decide()` looks policies up in.

A policy is a pure function (snapshot, config, memory) -> Plan whose plan carries the memory
to keep. The registry maps a policy's key to it and to what the daemon needs to know of it
(the config fields that select it, whether it places partitions itself, the history keys it
reads, how often it is asked); `policy_key` finds the key from the config (`policy.name`, and
`paper_faithful` for MET as the paper writes it). Nothing else looks at a policy's name. A new
policy is a module of its own under decision/ with such a function, its name in
PolicyConfig.name, and one line in POLICIES.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from decision.holds import health_or_hold, no_action_plan
from decision.met_paper import decide_met_paper
from decision.model import (
    PLAN_ENDED_AT, PLAN_IN_FLIGHT, ClusterSnapshot, DecisionMemory, Plan, Sizing,
)
from decision.policy import PolicyConfig
from decision.rules import decide_met
from decision.rules.memory import PREFIX
from decision.rules.memory import read_memory as read_rules_memory
from decision.stages import RECLASSIFY
from decision.target_tracking import decide_target_tracking, target_tracking_key
from decision.tiramola import decide_tiramola, tiramola_key


class Policy(Protocol):
    """A way of deciding. Pure: the same snapshot, config and memory give the same plan."""

    def __call__(self, snapshot: ClusterSnapshot, config: PolicyConfig,
                 memory: DecisionMemory, /) -> Plan: ...


def decide_static(snapshot: ClusterSnapshot, config: PolicyConfig,
                  memory: DecisionMemory) -> Plan:
    """`static`: never acts (a baseline for comparisons); holds on missing metrics like met."""
    health, held = health_or_hold(snapshot, config, memory)
    if held is not None:
        return held
    active = sum(n.state == "active" for n in snapshot.nodes)
    sizing = Sizing(active, active, 0, memory.step, "static policy: never acts")
    return no_action_plan("static", health, sizing, snapshot, memory, "static policy: never acts")


def _met_key(key: str) -> bool:
    """A key the default rules (decision/rules/memory.py) or MET's re-placement
    (decision/stages.py) read."""
    if key.startswith(RECLASSIFY):
        return True
    return key.startswith(PREFIX) and not read_rules_memory(((key, 0.0),)).kept


@dataclass(frozen=True)
class Registered:
    """A policy in the registry and what the daemon around it needs to know of it."""

    decide: Policy
    selects: Mapping[str, object]  # the PolicyConfig fields that select it (name, ...)
    # It places partitions itself: the store's own balancer is off while it runs (it would
    # undo the moves; an operator sets hbase.balancer.period high). False: the store's
    # balancer gives new nodes their data (tiramola, target-tracking; static is plain HBase).
    places_partitions: bool
    reads: Callable[[str], bool] = lambda key: False  # the history keys it reads
    # Samples per decision when loop.decision_interval_samples is null: MET as the paper
    # writes it and tiramola decide every 6 (MET §6.1); the default met and target-tracking
    # are asked at every sample: they smooth over every sample since the last plan either way
    # (the history is kept until an actuation) and hold by their own rules (warm-up, scale-in
    # stabilisation, target-tracking's window), so asking more often only acts sooner.
    pace: Callable[[PolicyConfig], int] = lambda config: 1
    # Asked at every sample while a plan runs, to extend a scale-out whose demand grew (the
    # others wait for the plan's end).
    during_plans: Callable[[PolicyConfig], bool] = lambda config: False


POLICIES: Mapping[str, Registered] = MappingProxyType({
    # the default: MET's health, then rules (decision/rules/)
    "met": Registered(decide_met, {"name": "met", "paper_faithful": False}, True, _met_key,
                      during_plans=lambda config: config.size_from_demand
                      and config.extend_plans),
    # MET as the paper writes it
    "met-paper": Registered(decide_met_paper, {"name": "met", "paper_faithful": True}, True,
                            _met_key, pace=lambda config: 6),
    # tiramola's CPU thresholds, HBase's balancer places
    "tiramola": Registered(decide_tiramola, {"name": "tiramola"}, False, tiramola_key,
                           pace=lambda config: 6),
    # mean CPU at target_cpu (HPA), HBase's balancer places
    "target-tracking": Registered(decide_target_tracking, {"name": "target-tracking"}, False,
                                  target_tracking_key),
    # never acts
    "static": Registered(decide_static, {"name": "static"}, False),
    # a new policy: its module under decision/, its name in PolicyConfig.name, a line here
})

# PolicyConfig.name's values, in the registry's order (a policy is run by its name)
POLICY_NAMES: tuple[str, ...] = tuple(dict.fromkeys(str(r.selects["name"])
                                                    for r in POLICIES.values()))


def policy_key(config: PolicyConfig) -> str:
    """The registry key of the policy `config` selects."""
    for key, entry in POLICIES.items():
        if all(getattr(config, field) == value for field, value in entry.selects.items()):
            return key
    raise ValueError(f"no policy in the registry for name {config.name!r}")


def policy_of(config: PolicyConfig) -> Registered:
    """The registry entry of the policy `config` selects."""
    return POLICIES[policy_key(config)]


def policy_for(config: PolicyConfig) -> Policy:
    """The decide function of the policy `config` selects."""
    return policy_of(config).decide


def unread_history(memory: DecisionMemory) -> tuple[str, ...]:
    """The keys of `memory.history` no policy of this version reads: an older or newer
    metctl's, or a hand edit's. Nothing misreads them: the default policy keeps them as they
    are (a rollback finds them again); the daemon says once that they are there."""
    def read(key: str) -> bool:
        return key in (PLAN_ENDED_AT, PLAN_IN_FLIGHT) or \
            any(entry.reads(key) for entry in POLICIES.values())
    return tuple(key for key, _ in memory.history if not read(key))


__all__ = ["Policy", "Registered", "POLICIES", "POLICY_NAMES", "policy_key", "policy_of",
           "policy_for", "decide_static", "unread_history"]
