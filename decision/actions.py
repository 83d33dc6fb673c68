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

from decision.arrays import SnapshotArrays, load_ratio
from decision.model import GROUPS, Action, ClusterSnapshot, NodeAssignment, Summary
from decision.placement import Placement
from decision.policy import PolicyConfig


CAUSE_WORDS = {
    "scale_out": "moves onto a new node (scale out)",
    "scale_in": "moves off a node being removed (scale in)",
    "off_inactive": "moves off a node that is not active",
    "rebalance": "moves to its group's node chosen by LPT (rebalance)",
}


@dataclass(frozen=True)
class Built:
    assignment: tuple[NodeAssignment, ...]
    actions: tuple[Action, ...]
    summary: Summary


def _slot_nodes(active: list, placement: Placement,
                node_for_slot: np.ndarray) -> tuple[list[str], list[Action]]:
    """Slot -> node id: the matched current node, or a placeholder for a node to launch; and
    the launches."""
    slots = len(placement.slot_group)
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
    return slot_node, launches


def _wanted_moves(arrays: SnapshotArrays, placement: Placement, node_for_slot: np.ndarray,
                  policy: PolicyConfig) -> tuple[np.ndarray, np.ndarray]:
    """The partitions to move, most valuable first (most requests brought into place, then
    partition order), and those max_moves leaves where they are."""
    target_index = node_for_slot[placement.slot_of]
    # A partition moves unless its slot went to the node holding it. Partitions on no active
    # node (index -1) always move: new nodes (also -1) are never where a partition is.
    wanted = np.flatnonzero((target_index != arrays.node_of) | (arrays.node_of < 0))
    limit = policy.move_limit(len(arrays.ids))
    wanted = wanted[np.lexsort((wanted, -arrays.load[wanted]))]
    dropped = np.zeros(0, dtype=np.int64)
    if limit is not None and wanted.size > limit:
        wanted, dropped = wanted[:limit], wanted[limit:]
    return wanted, dropped


def _final_slots(snapshot: ClusterSnapshot, arrays: SnapshotArrays, placement: Placement,
                 slot_node: list[str], dropped: np.ndarray
                 ) -> tuple[np.ndarray, list[str], list[str]]:
    """Where each partition is after the plan: its final slot index, with extra slots for the
    nodes that keep partitions they were meant to hand over (a removed node, or an inactive
    node); and those extra nodes' ids and profiles."""
    slots = len(placement.slot_group)
    final_slot = placement.slot_of.copy()
    extra_slot: dict[str, int] = {}  # node id -> its extra slot index
    extra_profile: list[str] = []
    if dropped.size:
        slot_by_node = {slot_node[t]: t for t in range(slots)}
        profile_by_id = {n.id: n.profile for n in snapshot.nodes}
        for p in dropped.tolist():
            src = arrays.current[p]
            t = slot_by_node.get(src)
            if t is None:
                t = extra_slot.get(src)
                if t is None:
                    t = extra_slot[src] = slots + len(extra_slot)
                    extra_profile.append(profile_by_id.get(src, "default"))
            final_slot[p] = t
    return final_slot, list(extra_slot), extra_profile


def _reconfigures(active: list, placement: Placement, node_for_slot: np.ndarray,
                  first: bool) -> list[Action]:
    """Reconfigurations of matched nodes whose profile changes, by node id."""
    out = []
    for t in range(len(placement.slot_group)):
        i = int(node_for_slot[t])
        if i >= 0 and active[i].profile != placement.slot_group[t]:
            node = active[i]
            cause = "initial_reconfiguration" if first else "profile_change"
            out.append(Action(
                op="reconfigure", node=node.id, profile=placement.slot_group[t],
                from_profile=node.profile, cause=cause,
                reason=("initial reconfiguration" if first else "access pattern changed")
                + f": {node.profile} -> {placement.slot_group[t]}"))
    out.sort(key=lambda a: a.node or "")  # a reconfiguration always names its node
    return out


def _moves(arrays: SnapshotArrays, placement: Placement, node_for_slot: np.ndarray,
           slot_node: list[str], removed: list[int], wanted: np.ndarray) -> list[Action]:
    """The moves, most valuable first, each with its cause (computed for all moves at once)."""
    target_ids = [slot_node[t] for t in placement.slot_of.tolist()]
    target_index = node_for_slot[placement.slot_of]
    removed_mask = np.zeros(len(arrays.active) + 1, dtype=bool)  # index -1 (not active) -> last
    removed_mask[removed] = True
    src_index = arrays.node_of[wanted]
    # A partition on a node that is not active moves for that reason first.
    cause_code = np.where(src_index < 0, 2,
                          np.where(target_index[wanted] < 0, 0,
                                   np.where(removed_mask[src_index], 1, 3)))
    cause_names = ("scale_out", "scale_in", "off_inactive", "rebalance")
    # One shared reason string per (group, cause): a million formatted strings cost seconds.
    why = [[f"{g} partition {CAUSE_WORDS[c]}" for c in cause_names] for g in GROUPS]
    codes = placement.codes[wanted].tolist()
    ids, current = arrays.ids, arrays.current
    return [Action(op="move", reason=why[g][c], partition=ids[p], source=current[p],
                   target=target_ids[p], cause=cause_names[c])
            for p, c, g in zip(wanted.tolist(), cause_code.tolist(), codes)]


def _compactions(arrays: SnapshotArrays, policy: PolicyConfig, wanted: np.ndarray,
                 final_slot: np.ndarray, all_ids: list[str], all_profile: list[str],
                 slots: int) -> list[Action]:
    """Locality after the plan (MET §5): moved partitions start at 0 on their new node; a node
    under its profile's mark gets its partitions under the mark compacted."""
    loc_after = arrays.locality.copy()
    loc_after[wanted] = 0.0
    n_final = len(all_ids)
    weight = np.where(arrays.size_mb > 0, arrays.size_mb, 1.0)
    node_w = np.bincount(final_slot, weights=weight, minlength=n_final)
    node_loc = np.bincount(final_slot, weights=weight * loc_after, minlength=n_final)
    node_locality = np.divide(node_loc, node_w, out=np.ones(n_final), where=node_w > 0)
    threshold = np.array([policy.compact_locality_write if pr == "write"
                          else policy.compact_locality_other for pr in all_profile])
    # Only nodes that stay and are ours to plan on: target slots, not kept-back extras.
    eligible = np.zeros(n_final, dtype=bool)
    eligible[:slots] = True
    low = eligible & (node_locality < threshold)
    to_compact = np.flatnonzero(low[final_slot] & (loc_after < threshold[final_slot]))
    to_compact = to_compact[np.argsort(final_slot[to_compact], kind="stable")]
    node_why = [f"locality on {all_profile[sl]} node {all_ids[sl]} after the plan "
                f"{node_locality[sl]:.2f} < {threshold[sl]:.2f}; this partition is under it"
                for sl in range(n_final)]
    return [Action(op="compact", reason=node_why[sl], node=all_ids[sl], partition=arrays.ids[p],
                   cause="locality")
            for p, sl in zip(to_compact.tolist(), final_slot[to_compact].tolist())]


def build_plan(snapshot: ClusterSnapshot, arrays: SnapshotArrays, placement: Placement,
               node_for_slot: np.ndarray, policy: PolicyConfig, *, first: bool) -> Built:
    active = arrays.active
    slots = len(placement.slot_group)
    slot_node, launches = _slot_nodes(active, placement, node_for_slot)
    matched = set(int(i) for i in node_for_slot if i >= 0)
    removed = [i for i in range(len(active)) if i not in matched]
    removed_ids = {active[i].id for i in removed}
    wanted, dropped = _wanted_moves(arrays, placement, node_for_slot, policy)
    final_slot, extra_ids, extra_profile = _final_slots(snapshot, arrays, placement, slot_node,
                                                        dropped)
    kept_back = set(extra_ids) & removed_ids
    all_ids = slot_node + extra_ids
    all_profile = list(placement.slot_group) + extra_profile
    reconfigures = _reconfigures(active, placement, node_for_slot, first)
    moves = _moves(arrays, placement, node_for_slot, slot_node, removed, wanted)
    compacts = _compactions(arrays, policy, wanted, final_slot, all_ids, all_profile, slots)
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
    n_final = len(all_ids)
    loads = np.bincount(final_slot, weights=arrays.load, minlength=n_final)
    order = np.argsort(final_slot, kind="stable")
    bounds = np.searchsorted(final_slot[order], np.arange(n_final + 1))
    ids_sorted = [arrays.ids[p] for p in order.tolist()]
    assignment = tuple(
        NodeAssignment(all_ids[s], all_profile[s], tuple(ids_sorted[bounds[s]:bounds[s + 1]]),
                       float(loads[s]))
        for s in range(n_final))
    actions = tuple(launches + reconfigures + moves + compacts + drains + terminates)
    summary = Summary(moves=len(moves), reconfigurations=len(reconfigures),
                      launches=len(launches), terminations=len(terminates),
                      max_load_ratio=load_ratio(loads), compactions=len(compacts),
                      moves_dropped=int(dropped.size))
    return Built(assignment, actions, summary)


__all__ = ["Built", "build_plan"]
