"""`decide(snapshot, policy, memory) -> Plan`: the one entry point of the decision core.

MET: Stage A health -> (healthy: nothing, step reset) -> Stage B sizing -> Stage C placement ->
Stage D reconciliation -> ordered actions (launch, reconfigure, move, compact, drain,
terminate) with reasons and a summary. `tiramola` and `static` live beside it. Pure: the same
inputs always give the same plan.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from common.cyclic_gc import cyclic_gc_paused
from decision.actions import build_plan
from decision.arrays import SnapshotArrays, current_assignment, load_ratio
from decision.guarded import decide_guarded
from decision.health import assess_health, unknown_active
from decision.model import (
    GROUPS, ClusterSnapshot, DecisionMemory, GroupPlan, Health, Plan, Sizing, Summary,
)
from decision.placement import Placement, classify, place
from decision.policy import PolicyConfig
from decision.protection import excluded_tables, keep_nodes, without_tables
from decision.reconcile import DENSE_LIMIT, match_optimal
from decision.sizing import healthy_sizing, size_cluster
from decision.target_tracking import decide_target_tracking
from decision.tiramola import decide_tiramola


def _no_action_plan(policy: str, health: Health, sizing: Sizing, snapshot: ClusterSnapshot,
                    memory: DecisionMemory, reason: str,
                    arrays: SnapshotArrays | None = None) -> Plan:
    assignment = current_assignment(snapshot, arrays)
    ratio = load_ratio(np.array([a.load for a in assignment]))
    return Plan(policy=policy, health=health, sizing=sizing, groups=(), assignment=assignment,
                actions=(), summary=Summary(0, 0, 0, 0, ratio), memory=memory, reason=reason)


def _hold(policy: PolicyConfig, snapshot: ClusterSnapshot, memory: DecisionMemory,
          health: Health) -> Plan:
    current = sum(n.state == "active" for n in snapshot.nodes)
    sizing = Sizing(current, current, 0, memory.step, "hold: " + health.reason)
    return _no_action_plan(policy.name, health, sizing, snapshot, memory,
                           "hold: " + health.reason)


# Profile codes for the Stage D arrays (a node with a profile outside these matches nothing).
PROFILE_CODE = {p: i for i, p in enumerate(("read", "write", "read_write", "scan", "default"))}


def decide(snapshot: ClusterSnapshot, policy: PolicyConfig, memory: DecisionMemory) -> Plan:
    """The plan for this snapshot under `policy`, and the memory to persist (Plan.memory)."""
    with cyclic_gc_paused():  # common/cyclic_gc.py: ~40 % of planning time otherwise
        # policy.tables: excluded tables' partitions are taken out of the decision, and the
        # nodes holding them are kept as they are (never restarted, drained or terminated)
        snapshot, keep = without_tables(snapshot, excluded_tables(policy.tables))
        return keep_nodes(_decide(snapshot, policy, memory), keep)


def _decide(snapshot: ClusterSnapshot, policy: PolicyConfig, memory: DecisionMemory) -> Plan:
    if policy.name == "tiramola":
        return decide_tiramola(snapshot, policy, memory)
    if policy.name == "target-tracking":
        return decide_target_tracking(snapshot, policy, memory)
    health = assess_health(snapshot.nodes, policy)
    active = [n for n in snapshot.nodes if n.state == "active"]
    if not active or unknown_active(snapshot.nodes):
        return _hold(policy, snapshot, memory, health)
    if policy.name == "static":
        sizing = Sizing(len(active), len(active), 0, memory.step, "static policy: never acts")
        return _no_action_plan("static", health, sizing, snapshot, memory,
                               "static policy: never acts")
    if not policy.paper_faithful:
        return decide_guarded(
            snapshot, policy, memory, health,
            lambda sizing, mem: met_plan(snapshot, policy, health, sizing, mem,
                                         first=not memory.first_decision_done))
    if health.healthy:
        sizing, new_memory = healthy_sizing(len(active), memory)
        return _no_action_plan("met", health, sizing, snapshot, new_memory,
                               "cluster healthy: no action, step reset to 1")
    sizing, new_memory = size_cluster(health, len(active), policy, memory)
    return met_plan(snapshot, policy, health, sizing, new_memory,
                    first=not memory.first_decision_done)


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


__all__ = ["decide", "met_plan", "plan_targets", "PROFILE_CODE", "current_assignment", "SnapshotArrays"]
