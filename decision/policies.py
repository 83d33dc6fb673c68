"""Which policy decides: the `Policy` protocol and the registry `decide()` looks policies up in.

A policy is a pure function (snapshot, config, memory) -> Plan whose plan carries the memory
to keep. The registry maps a policy's key to it; `policy_key` reads the key from the config
(`policy.name`, and `paper_faithful` for MET as the paper writes it). A new policy is a module
of its own under decision/ with such a function, its name in PolicyConfig.name, and one line
in POLICIES.
"""
from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from decision.holds import health_or_hold, no_action_plan
from decision.met_paper import decide_met_paper
from decision.model import ClusterSnapshot, DecisionMemory, Plan, Sizing
from decision.policy import PolicyConfig
from decision.rules import decide_met
from decision.target_tracking import decide_target_tracking
from decision.tiramola import decide_tiramola


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


POLICIES: Mapping[str, Policy] = MappingProxyType({
    "met": decide_met,              # the default: MET's health, then rules (decision/rules/)
    "met-paper": decide_met_paper,  # MET as the paper writes it (paper_faithful: true)
    "tiramola": decide_tiramola,    # tiramola's CPU thresholds, HBase's balancer places
    "target-tracking": decide_target_tracking,  # mean CPU at target_cpu (HPA), balancer places
    "static": decide_static,        # never acts
    # a new policy: its module under decision/, its name in PolicyConfig.name, a line here
})


def policy_key(config: PolicyConfig) -> str:
    """The registry key of the policy `config` selects."""
    if config.name == "met" and config.paper_faithful:
        return "met-paper"
    return config.name


def policy_for(config: PolicyConfig) -> Policy:
    return POLICIES[policy_key(config)]


__all__ = ["Policy", "POLICIES", "policy_key", "policy_for", "decide_static"]
