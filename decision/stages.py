"""MET's Stages C and D for a decided target size: classify every partition, group and place
them (LPT), match the target sets to the nodes (optimal assignment), and turn that into ordered
actions (launch, reconfigure, move, compact, drain, terminate). MET as the paper writes it plans
this way at every decision; the default policy does only with `move_only_what_pays: false`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from decision.actions import build_plan
from decision.arrays import SnapshotArrays
from decision.model import GROUPS, ClusterSnapshot, DecisionMemory, GroupPlan, Health, Plan, Sizing
from decision.placement import Placement, classify, place
from decision.policy import PolicyConfig
from decision.reconcile import DENSE_LIMIT, match_optimal

# Profile codes for the Stage D arrays (a node with a profile outside these matches nothing).
PROFILE_CODE = {p: i for i, p in enumerate(("read", "write", "read_write", "scan", "default"))}


def fixed_groups(arrays: SnapshotArrays, policy: PolicyConfig) -> np.ndarray | None:
    """Per partition, the group code its table's fixed profile imposes (-1: none)."""
    fixed = {t: GROUPS.index(r.profile) for t, r in policy.tables.items() if r.profile}
    if not fixed:
        return None
    return np.fromiter((fixed.get(p.table, -1) for p in arrays.partitions), np.int64,
                       len(arrays.partitions))


RECLASSIFY = "met.reclassify:"  # + partition id: plans in a row its rates named another class


def held_classes(arrays: SnapshotArrays, policy: PolicyConfig,
                 memory: DecisionMemory) -> tuple[np.ndarray | None, DecisionMemory]:
    """Classification hysteresis (policy.reclassify_after): per partition, the class of the
    node it is on while its rates have named another class at fewer than reclassify_after
    plans in a row (-1: classify by rates), and the memory with those counts. A partition on
    a node without a class (profile `default`) is classified at once."""
    after = 1 if policy.paper_faithful else policy.reclassify_after
    kept = tuple(h for h in memory.history if not h[0].startswith(RECLASSIFY))
    if after <= 1 or not len(arrays.ids):
        return None, replace(memory, history=kept) if kept != memory.history else memory
    node_class = np.array([GROUPS.index(n.profile) if n.profile in GROUPS else -1
                           for n in arrays.active] + [-1], dtype=np.int64)
    current = node_class[arrays.node_of]  # node_of -1 (not on an active node) -> -1
    rated = classify(arrays.reads, arrays.writes, arrays.scans, policy)
    differs = np.flatnonzero((current >= 0) & (rated != current))
    seen = {k[len(RECLASSIFY):]: v for k, v in memory.history if k.startswith(RECLASSIFY)}
    held = np.full(len(arrays.ids), -1, dtype=np.int64)
    counts = []
    for p in differs.tolist():
        pid = arrays.ids[p]
        n = int(seen.get(pid, 0)) + 1
        if n < after:
            held[p] = current[p]
            counts.append((RECLASSIFY + pid, float(n)))
    return (held if counts else None), replace(memory, history=kept + tuple(counts))


def plan_targets(arrays: SnapshotArrays, target: int, policy: PolicyConfig,
                 dense_limit: int = DENSE_LIMIT,
                 held: np.ndarray | None = None) -> tuple[Placement, np.ndarray, np.ndarray,
                                                          np.ndarray]:
    """Stage C and the Stage D matching: (placement, node profile codes, slot profile codes,
    node index per slot with -1 for a node to launch). `held`: per partition a class kept by
    hysteresis (-1: none); a table's fixed profile still wins."""
    fixed = fixed_groups(arrays, policy)
    if held is not None:
        fixed = held if fixed is None else np.where(fixed >= 0, fixed, held)
    placement = place(arrays.reads, arrays.writes, arrays.scans, target, policy,
                      fixed_group=fixed)
    node_profile = np.array([PROFILE_CODE.get(n.profile, -1) for n in arrays.active],
                            dtype=np.int64)
    slot_profile = np.array([PROFILE_CODE[g] for g in placement.slot_group], dtype=np.int64)
    node_for_slot = match_optimal(arrays.node_of, placement.slot_of, node_profile,
                                  slot_profile, dense_limit=dense_limit)
    if policy.keep_tolerance > 0 and len(arrays.active):
        # Second pass: each partition prefers the slot its current node was matched to.
        slot_for_node = np.full(len(arrays.active), -1, dtype=np.int64)
        matched = node_for_slot >= 0
        slot_for_node[node_for_slot[matched]] = np.flatnonzero(matched)
        preferred = np.where(arrays.node_of >= 0, slot_for_node[arrays.node_of], -1)
        placement = place(arrays.reads, arrays.writes, arrays.scans, target, policy,
                          preferred_slot=preferred, fixed_group=fixed)
        node_for_slot = match_optimal(arrays.node_of, placement.slot_of, node_profile,
                                      slot_profile, dense_limit=dense_limit)
    return placement, node_profile, slot_profile, node_for_slot


def met_plan(snapshot: ClusterSnapshot, policy: PolicyConfig, health: Health, sizing: Sizing,
             memory: DecisionMemory, *, first: bool = False,
             dense_limit: int = DENSE_LIMIT) -> Plan:
    """Stages C and D for a decided target size: the placement, matching and actions."""
    arrays = SnapshotArrays(snapshot)
    held, memory = held_classes(arrays, policy, memory)
    placement, _, _, node_for_slot = plan_targets(arrays, sizing.target, policy, dense_limit,
                                                  held)
    groups = tuple(GroupPlan(g, placement.group_partitions.get(g, 0),
                             placement.group_nodes.get(g, 0))
                   for g in GROUPS if placement.group_nodes.get(g, 0))
    built = build_plan(snapshot, arrays, placement, node_for_slot, policy, first=first)
    reason = sizing.reason
    if placement.merged:
        reason += "; merged into read_write for lack of nodes: " + ", ".join(placement.merged)
    return Plan(policy="met", health=health, sizing=sizing, groups=groups,
                assignment=built.assignment, actions=built.actions, summary=built.summary,
                memory=memory, reason=reason)


__all__ = ["met_plan", "plan_targets", "held_classes", "fixed_groups", "PROFILE_CODE", "RECLASSIFY"]
