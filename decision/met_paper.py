"""MET as the paper writes it (`policy: {name: met, paper_faithful: true}`, Cruz et al.,
EuroSys 2013): Stage A health; a healthy cluster does nothing and resets `step`; otherwise
Algorithm 1 sizes the cluster (decision/sizing.py) and Stages C-D re-place every partition,
reconfigure and compact (decision/stages.py) at every decision."""
from __future__ import annotations

from decision.holds import health_or_hold, no_action_plan
from decision.model import ClusterSnapshot, DecisionMemory, Plan
from decision.policy import PolicyConfig
from decision.sizing import healthy_sizing, size_cluster
from decision.stages import met_plan


def decide_met_paper(snapshot: ClusterSnapshot, policy: PolicyConfig,
                     memory: DecisionMemory) -> Plan:
    health, held = health_or_hold(snapshot, policy, memory)
    if held is not None:
        return held
    active = sum(n.state == "active" for n in snapshot.nodes)
    if health.healthy:
        sizing, new_memory = healthy_sizing(active, memory)
        return no_action_plan("met", health, sizing, snapshot, new_memory,
                              "cluster healthy: no action, step reset to 1")
    sizing, new_memory = size_cluster(health, active, policy, memory)
    return met_plan(snapshot, policy, health, sizing, new_memory,
                    first=not memory.first_decision_done)


__all__ = ["decide_met_paper"]
