"""Plans that change nothing, shared by the policies: the hold every policy but tiramola makes
while an active node has no usable metrics (the core never decides on guessed numbers), and
the plan of a decision that leaves the cluster as it is."""
from __future__ import annotations

import numpy as np

from decision.arrays import SnapshotArrays, current_assignment, load_ratio
from decision.health import assess_health, unknown_active
from decision.model import ClusterSnapshot, DecisionMemory, Health, Plan, Sizing, Summary
from decision.policy import PolicyConfig


def no_action_plan(policy: str, health: Health, sizing: Sizing, snapshot: ClusterSnapshot,
                   memory: DecisionMemory, reason: str,
                   arrays: SnapshotArrays | None = None) -> Plan:
    """The cluster as it is, under `reason`, with `memory` to keep."""
    assignment = current_assignment(snapshot, arrays)
    ratio = load_ratio(np.array([a.load for a in assignment]))
    return Plan(policy=policy, health=health, sizing=sizing, groups=(), assignment=assignment,
                actions=(), summary=Summary(0, 0, 0, 0, ratio), memory=memory, reason=reason)


def health_or_hold(snapshot: ClusterSnapshot, policy: PolicyConfig,
                   memory: DecisionMemory) -> tuple[Health, Plan | None]:
    """Stage A's verdicts, and the hold (memory unchanged) to make instead of deciding when no
    node is active or an active one has no usable metrics (None: the decision can go on)."""
    health = assess_health(snapshot.nodes, policy)
    active = [n for n in snapshot.nodes if n.state == "active"]
    if active and not unknown_active(snapshot.nodes):
        return health, None
    current = len(active)
    sizing = Sizing(current, current, 0, memory.step, "hold: " + health.reason)
    return health, no_action_plan(policy.name, health, sizing, snapshot, memory,
                                  "hold: " + health.reason)


__all__ = ["no_action_plan", "health_or_hold"]
