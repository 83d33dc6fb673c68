"""Small hand-built plans (model dataclasses only) for telemetry and log tests."""
from __future__ import annotations

from decision.model import (Action, DecisionMemory, GroupPlan, Health, NodeHealth, Plan, Sizing,
                            Summary)


def plan_of(verdicts: dict[str, str], groups: dict[str, tuple[int, int]], current: int,
            target: int, actions: tuple[Action, ...] = (), reason: str = "") -> Plan:
    return Plan(
        policy="met",
        health=Health(tuple(NodeHealth(n, v) for n, v in verdicts.items()),
                      suboptimal=0.0, remove=False, healthy=False),
        sizing=Sizing(current=current, target=target, delta=target - current, step=1,
                      reason="sizing reason"),
        groups=tuple(GroupPlan(g, p, n) for g, (p, n) in groups.items()),
        assignment=(),
        actions=actions,
        summary=Summary(0, 0, 0, 0, 1.0),
        memory=DecisionMemory(),
        reason=reason,
    )
