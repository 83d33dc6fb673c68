"""From a matching of target slots to nodes, the plan's ordered actions, the resulting
assignment and the summary.

Order: launch, reconfigure, move, compact, drain, terminate. A node to remove is drained and
terminated only once every partition it holds has a move off it in this plan; moves cut by
`max_moves` (the least valuable — fewest requests per second brought into place — go first)
leave their partition where it is, and a node that keeps a partition is not terminated.
Compaction follows MET §5: a node whose size-weighted data locality after the plan is under
compact_locality_write (write nodes) or compact_locality_other (all others) gets its
partitions below that mark major-compacted. A moved partition is assumed to have locality 0
on its new node (HDFS may keep a replica there, but nothing tells metctl which).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decision.model import (
    GROUPS, Action, ClusterSnapshot, NodeAssignment, Summary,
)
from decision.placement import Placement
from decision.policy import PolicyConfig


@dataclass(frozen=True)
class Built:
    assignment: tuple[NodeAssignment, ...]
    actions: tuple[Action, ...]
    summary: Summary


def build_plan(snapshot: ClusterSnapshot, arrays, placement: Placement,
               node_for_slot: np.ndarray, policy: PolicyConfig, *, first: bool) -> Built:
    active = arrays.active
    slots = len(placement.slot_group)
    n_parts = len(arrays.ids)

    # Slot -> node id: matched current node or a placeholder for a node to launch.
    slot_node: list[str] = []
    launches: list[Action] = []
    for t in range(slots):
        i = int(node_for_slot[t])
        if i >= 0:
            slot_node.append(active[i].id)
        else:
            pid = f"new-{len(launches) + 1}"
            slot_node.append(pid)
            launches.append(Action(
                op="launch", node=pid, profile=placement.slot_group[t], cause="scale_out",
                reason=f"scale out: a new {placement.slot_group[t]} node for target set "
                       f"{t + 1} of {slots}"))
    matched = set(int(i) for i in node_for_slot if i >= 0)
    removed = [i for i in range(len(active)) if i not in matched]
    removed_ids = {active[i].id for i in removed}

    # Moves wanted: every partition whose slot's node is not where it is now.
    slot_node_arr = np.array(slot_node, dtype=object)
    target_ids = slot_node_arr[placement.slot_of] if n_parts else np.zeros(0, dtype=object)
    target_index = node_for_slot[placement.slot_of] if n_parts else np.zeros(0, np.int64)
    wanted = np.flatnonzero(target_index != arrays.node_of) if n_parts else np.zeros(0, np.int64)
    # New nodes have index -1 and so do partitions on no active node: compare ids there.
    both_off = wanted[(target_index[wanted] < 0) & (arrays.node_of[wanted] < 0)]
    if both_off.size:
        current_ids = np.array(arrays.current, dtype=object)
        keep_same = both_off[target_ids[both_off] == current_ids[both_off]]
        wanted = np.setdiff1d(wanted, keep_same)
    limit = policy.move_limit(n_parts)
    # Most valuable first: most requests brought into place, then partition order.
    wanted = wanted[np.lexsort((wanted, -arrays.load[wanted]))]
    dropped = np.zeros(0, dtype=np.int64)
    if limit is not None and wanted.size > limit:
        wanted, dropped = wanted[:limit], wanted[limit:]

    # Where each partition is after the plan: final slot index (extra slots for nodes that
    # keep partitions they were meant to hand over: a removed node, or an inactive node).
    final_slot = placement.slot_of.copy() if n_parts else np.zeros(0, np.int64)
    extra_ids: list[str] = []
    extra_profile: list[str] = []
    if dropped.size:
        slot_by_node = {slot_node[t]: t for t in range(slots)}
        profile_by_id = {n.id: n.profile for n in snapshot.nodes}
        for p in dropped.tolist():
            src = arrays.current[p]
            t = slot_by_node.get(src)
            if t is None:
                t = slots + len(extra_ids) if src not in extra_ids \
                    else slots + extra_ids.index(src)
                if src not in extra_ids:
                    extra_ids.append(src)
                    extra_profile.append(profile_by_id.get(src, "default"))
            final_slot[p] = t
    kept_back = {extra_ids[k] for k in range(len(extra_ids))} & removed_ids
    all_ids = slot_node + extra_ids
    all_profile = list(placement.slot_group) + extra_profile

    # Reconfigurations of matched nodes whose profile changes.
    reconfigures = []
    for t in range(slots):
        i = int(node_for_slot[t])
        if i >= 0 and active[i].profile != placement.slot_group[t]:
            node = active[i]
            cause = "initial_reconfiguration" if first else "profile_change"
            reconfigures.append(Action(
                op="reconfigure", node=node.id, profile=placement.slot_group[t],
                from_profile=node.profile, cause=cause,
                reason=("initial reconfiguration" if first else "access pattern changed")
                + f": {node.profile} -> {placement.slot_group[t]}"))
    reconfigures.sort(key=lambda a: a.node)

    moves = []
    codes = placement.codes
    for p in wanted.tolist():
        src, dst = arrays.current[p], str(target_ids[p])
        if target_index[p] < 0:
            cause = "scale_out"
        elif src in removed_ids:
            cause = "scale_in"
        elif arrays.node_of[p] < 0:
            cause = "off_inactive"
        else:
            cause = "rebalance"
        moves.append(Action(
            op="move", partition=arrays.ids[p], source=src, target=dst, cause=cause,
            reason=f"{GROUPS[codes[p]]} partition, {arrays.load[p]:.1f} req/s: {cause}"))

    # Locality after the plan: moved partitions start at 0 on their new node.
    loc_after = arrays.locality.copy()
    if wanted.size:
        loc_after[wanted] = 0.0
    n_final = len(all_ids)
    size = arrays.size_mb
    w = np.where(size > 0, size, 1.0) if n_parts else size
    node_w = np.bincount(final_slot, weights=w, minlength=n_final)
    node_loc = np.bincount(final_slot, weights=w * loc_after, minlength=n_final)
    with np.errstate(invalid="ignore", divide="ignore"):
        node_locality = np.where(node_w > 0, node_loc / np.where(node_w > 0, node_w, 1), 1.0)
    active_ids = {n.id for n in active}
    compacts = []
    threshold = np.array([policy.compact_locality_write if pr == "write"
                          else policy.compact_locality_other for pr in all_profile])
    low_nodes = np.flatnonzero(node_locality < threshold) if n_final else np.zeros(0, np.int64)
    for s in low_nodes.tolist():
        nid = all_ids[s]
        if nid in removed_ids or not (nid in active_ids or s < slots):
            continue  # going away or not ours to plan on
        members = np.flatnonzero((final_slot == s) & (loc_after < threshold[s]))
        for p in members.tolist():
            compacts.append(Action(
                op="compact", node=nid, partition=arrays.ids[p], cause="locality",
                reason=f"node locality {node_locality[s]:.2f} < {threshold[s]:.2f} "
                       f"({all_profile[s]}); partition locality {loc_after[p]:.2f}"))

    drains, terminates = [], []
    for i in removed:
        nid = active[i].id
        if nid in kept_back:
            continue
        drains.append(Action(op="drain", node=nid, cause="scale_in",
                             reason="scale in: node not needed for the target size"))
        terminates.append(Action(op="terminate", node=nid, cause="scale_in",
                                 reason="scale in: drained, all partitions moved off"))

    # The assignment after the plan.
    loads = np.bincount(final_slot, weights=arrays.load, minlength=n_final) if n_parts \
        else np.zeros(n_final)
    order = np.argsort(final_slot, kind="stable")
    bounds = np.searchsorted(final_slot[order], np.arange(n_final + 1))
    ids_sorted = [arrays.ids[p] for p in order.tolist()]
    assignment = tuple(
        NodeAssignment(all_ids[s], all_profile[s], tuple(ids_sorted[bounds[s]:bounds[s + 1]]), float(loads[s]))
        for s in range(n_final))
    mean = loads.mean() if n_final else 0.0
    ratio = float(loads.max() / mean) if n_final and mean > 0 else 1.0
    actions = tuple(launches + reconfigures + moves + compacts + drains + terminates)
    summary = Summary(moves=len(moves), reconfigurations=len(reconfigures),
                      launches=len(launches), terminations=len(terminates),
                      max_load_ratio=ratio, compactions=len(compacts),
                      moves_dropped=int(dropped.size))
    return Built(assignment, actions, summary)


__all__ = ["Built", "build_plan"]
