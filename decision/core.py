"""`decide(snapshot, policy, memory) -> Plan`: the one entry point of the decision core.

Tables the policy excludes are taken out of the snapshot and the nodes holding them kept as
they are; the policy the config selects (decision/policies.py: the default rules, MET as the
paper writes it, tiramola, target-tracking, static) plans the rest. Pure: the same inputs
always give the same plan.
"""
from __future__ import annotations

from common.cyclic_gc import cyclic_gc_paused
from decision.model import ClusterSnapshot, DecisionMemory, Plan
from decision.policies import policy_for
from decision.policy import PolicyConfig
from decision.protection import excluded_tables, keep_nodes, without_tables


def decide(snapshot: ClusterSnapshot, policy: PolicyConfig, memory: DecisionMemory) -> Plan:
    """The plan for this snapshot under `policy`, and the memory to persist (Plan.memory)."""
    with cyclic_gc_paused():  # common/cyclic_gc.py: ~40 % of planning time otherwise
        # policy.tables: excluded tables' partitions are taken out of the decision, and the
        # nodes holding them are kept as they are (never restarted, drained or terminated)
        snapshot, keep = without_tables(snapshot, excluded_tables(policy.tables))
        return keep_nodes(policy_for(policy)(snapshot, policy, memory), keep)


__all__ = ["decide"]
