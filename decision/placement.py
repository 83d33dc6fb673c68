"""Stage C — classify partitions by access pattern, share the target nodes among the groups,
and balance each group's partitions over its nodes with LPT under a per-node partition cap.

Everything works on numpy arrays (one entry per partition) so a million partitions classify
in milliseconds; only LPT walks the partitions one by one (a heap of nodes, O(n log m)).
"""
from __future__ import annotations

import heapq
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from decision.model import GROUPS
from decision.policy import PolicyConfig

# Group codes used in arrays: the index in GROUPS ("read", "write", "read_write", "scan").
READ, WRITE, READ_WRITE, SCAN = (GROUPS.index(g) for g in ("read", "write", "read_write", "scan"))


def classify(reads: np.ndarray, writes: np.ndarray, scans: np.ndarray,
             policy: PolicyConfig) -> np.ndarray:
    """Group code (index into GROUPS) of each partition, MET §5 with strict thresholds:

    (reads + scans) / total > read_threshold -> scan if scans / (reads + scans) > scan_threshold,
    else read; elif writes / total > write_threshold -> write; else read_write. A partition
    without requests is read_write. Exactly at a threshold is *not* over it.
    """
    reads, writes, scans = (np.asarray(a, dtype=np.float64) for a in (reads, writes, scans))
    total = reads + writes + scans
    read_like_req = reads + scans
    with np.errstate(divide="ignore", invalid="ignore"):
        # 0/0 gives NaN, and NaN > x is False: idle partitions fall through to read_write.
        read_like = read_like_req / total > policy.read_threshold
        scan = read_like & (scans / read_like_req > policy.scan_threshold)
        write = ~read_like & (writes / total > policy.write_threshold)
    codes = np.full(total.shape, READ_WRITE, dtype=np.int8)
    codes[write] = WRITE
    codes[read_like] = READ
    codes[scan] = SCAN
    return codes


def classify_one(reads: float, writes: float, scans: float, policy: PolicyConfig) -> str:
    """The group name of one partition (the same rule as `classify`)."""
    code = classify(np.array([reads]), np.array([writes]), np.array([scans]), policy)[0]
    return GROUPS[int(code)]


def merge_groups(counts: Mapping[str, int], measure: Mapping[str, float],
                 nodes: int) -> dict[str, str]:
    """With fewer nodes than non-empty groups, fold the smallest groups (by `measure`, then by
    partition count, then GROUPS order) into read_write until every group can have a node.
    Returns {merged group: "read_write"}."""
    counts, measure = dict(counts), dict(measure)
    merged: dict[str, str] = {}
    nonempty = [g for g in GROUPS if counts.get(g, 0) > 0]
    while len(nonempty) > max(nodes, 1):
        candidates = [g for g in nonempty if g != "read_write"]
        smallest = min(candidates, key=lambda g: (measure[g], counts[g], GROUPS.index(g)))
        merged[smallest] = "read_write"
        counts["read_write"] = counts.get("read_write", 0) + counts.pop(smallest)
        measure["read_write"] = measure.get("read_write", 0) + measure.pop(smallest)
        nonempty = [g for g in GROUPS if counts.get(g, 0) > 0]
    return merged


def share_nodes(counts: Mapping[str, int], measure: Mapping[str, float],
                nodes: int) -> dict[str, int]:
    """Nodes per non-empty group by largest remainder over quota = share of `measure` x nodes.

    Each group first gets max(1, floor(quota)); spare nodes go one at a time to the largest
    quota - given (ties: more partitions, then GROUPS order); an overshoot (from the minimum of
    one) is taken back one at a time from the smallest quota - given among groups holding more
    than one. The caller merges groups first so there are at most `nodes` of them.
    """
    groups = [g for g in GROUPS if counts.get(g, 0) > 0]
    if not groups:
        return {}
    if len(groups) > nodes:
        raise ValueError(f"{len(groups)} groups for {nodes} nodes: merge first")
    total = sum(measure[g] for g in groups)
    if total <= 0:  # nothing measured (e.g. no requests at all): share by partition count
        measure, total = counts, sum(counts[g] for g in groups)
    # Exact rationals when the measure is integral, so equal remainders really tie.
    exact = all(isinstance(measure[g], int) for g in groups)
    quota = {g: (Fraction(int(measure[g]) * nodes, int(total)) if exact else measure[g] * nodes / total)
             for g in groups}
    given = {g: max(1, math.floor(quota[g])) for g in groups}
    while sum(given.values()) < nodes:
        g = max(groups, key=lambda g: (quota[g] - given[g], counts[g], -GROUPS.index(g)))
        given[g] += 1
    while sum(given.values()) > nodes:
        g = min((g for g in groups if given[g] > 1),
                key=lambda g: (quota[g] - given[g], counts[g], -GROUPS.index(g)))
        given[g] -= 1
    return given


def lpt(loads: np.ndarray, nodes: int, cap: int | None = None,
        preferred: np.ndarray | None = None, tolerance: float = 0.0) -> np.ndarray:
    """Longest Processing Time first with an optional per-node job cap (MET Algorithm 2).

    Jobs in decreasing load (ties: lower index first) each go to the least loaded node (ties:
    lower node index) that holds fewer than `cap` jobs. Returns the node index of each job.
    Without a cap the makespan is within 4/3 - 1/(3m) of the optimum; the cap trades some of
    that balance for an even partition count.

    Sticky variant (`preferred` given and `tolerance` > 0): a job whose preferred node (where
    it is now; -1 for none) is not full and carries at most `tolerance` x (mean node load)
    more than the least loaded node goes there instead — each choice costs at most that much
    balance, and small load drifts no longer reshuffle everything.
    """
    loads = np.asarray(loads, dtype=np.float64)
    n = loads.shape[0]
    if nodes < 1:
        raise ValueError("lpt needs at least one node")
    if cap is not None and cap * nodes < n:
        raise ValueError(f"cap {cap} x {nodes} nodes cannot hold {n} jobs")
    order = np.argsort(-loads, kind="stable")
    weights = loads[order].tolist()
    limit = cap if cap is not None else n + 1
    if preferred is not None and tolerance > 0:
        chosen = _sticky_lpt(weights, np.asarray(preferred)[order].tolist(), nodes, limit,
                             tolerance * float(loads.sum()) / nodes)
    else:
        chosen = [0] * n
        heap = [(0.0, i) for i in range(nodes)]  # sorted, hence already a heap
        held = [0] * nodes
        replace, pop = heapq.heapreplace, heapq.heappop
        for k, w in enumerate(weights):
            load, i = heap[0]
            chosen[k] = i
            held[i] += 1
            if held[i] >= limit:
                pop(heap)
            else:
                replace(heap, (load + w, i))
    result = np.empty(n, dtype=np.int64)
    result[order] = chosen
    return result


def _sticky_lpt(weights: list[float], prefs: list[int], nodes: int, limit: int,
                slack: float) -> list[int]:
    """LPT over jobs already in decreasing order, keeping a job on its preferred node when
    that costs at most `slack` of balance. Heap entries go stale when a node takes a job out
    of heap order; a stale or full entry is dropped when it reaches the top."""
    chosen = [0] * len(weights)
    heap = [(0.0, i) for i in range(nodes)]
    held = [0] * nodes
    node_load = [0.0] * nodes
    push, pop = heapq.heappush, heapq.heappop
    for k, w in enumerate(weights):
        while True:
            load, top = heap[0]
            if held[top] < limit and load == node_load[top]:
                break
            pop(heap)
        pref = prefs[k]
        i = pref if (0 <= pref < nodes and held[pref] < limit
                     and node_load[pref] <= load + slack) else top
        chosen[k] = i
        held[i] += 1
        node_load[i] += w
        if held[i] < limit:
            push(heap, (node_load[i], i))  # the old entry of i is now stale
    return chosen


@dataclass(frozen=True)
class Placement:
    """Stage C's output: the target partition sets ("slots"), grouped by profile."""

    codes: np.ndarray  # classified group code per partition (before merging)
    slot_of: np.ndarray  # target slot per partition
    slot_group: tuple[str, ...]  # group (= profile) of each slot, slots ordered as GROUPS
    group_nodes: dict[str, int]  # nodes per final group
    group_partitions: dict[str, int]  # partitions per final group
    merged: dict[str, str]  # group -> group it was merged into


def place(reads: np.ndarray, writes: np.ndarray, scans: np.ndarray, nodes: int,
          policy: PolicyConfig, preferred_slot: np.ndarray | None = None,
          fixed_group: np.ndarray | None = None) -> Placement:
    """Classify, share `nodes` among the groups, and LPT each group onto its nodes.

    `preferred_slot` (per partition, -1 for none) feeds the sticky LPT when
    policy.keep_tolerance > 0: the slot its current node was matched to in a first pass.
    Slots are laid out by group in GROUPS order, so the same loads give the same layout.
    `fixed_group` (per partition, group code or -1) overrides the classification: the
    partitions of a table with a fixed profile (policy.tables)."""
    codes = classify(reads, writes, scans, policy)
    if fixed_group is not None:
        fixed = np.asarray(fixed_group)
        codes = np.where(fixed >= 0, fixed, codes).astype(np.int8)
    load = np.asarray(reads, np.float64) + np.asarray(writes, np.float64) + np.asarray(scans)
    final = codes.copy()
    counts = {g: int(c) for g, c in zip(GROUPS, np.bincount(codes, minlength=len(GROUPS)))}
    load_by = np.bincount(codes, weights=load, minlength=len(GROUPS))
    measure: dict[str, float] = (
        dict(counts) if policy.grouping == "count"
        else {g: float(v) for g, v in zip(GROUPS, load_by)})
    merged = merge_groups(counts, measure, nodes)
    for g, into in merged.items():
        final[codes == GROUPS.index(g)] = GROUPS.index(into)
        counts[into] = counts.get(into, 0) + counts.pop(g)
        measure[into] = measure.get(into, 0) + measure.pop(g)
    if not any(counts.get(g, 0) for g in GROUPS):
        # No partitions at all: every node is a read_write node (idle partitions' class).
        return Placement(codes, np.zeros(0, dtype=np.int64), ("read_write",) * nodes,
                         {"read_write": nodes}, {"read_write": 0}, merged)
    given = share_nodes(counts, measure, nodes)
    slot_of = np.empty(codes.shape[0], dtype=np.int64)
    slot_group: list[str] = []
    for g in GROUPS:
        m = given.get(g, 0)
        if not m:
            continue
        members = np.flatnonzero(final == GROUPS.index(g))
        cap = -(-members.shape[0] // m)  # ceil(partitions / nodes), MET's per-node maximum
        if policy.partition_cap_slack > 0:
            cap = math.ceil(cap * (1 + policy.partition_cap_slack))
        first = len(slot_group)
        pref = None
        if preferred_slot is not None and policy.keep_tolerance > 0:
            local = np.asarray(preferred_slot)[members] - first
            pref = np.where((local >= 0) & (local < m), local, -1)
        slot_of[members] = first + lpt(load[members], m, cap, pref, policy.keep_tolerance)
        slot_group.extend([g] * m)
    return Placement(codes, slot_of, tuple(slot_group), given,
                     {g: counts[g] for g in given}, merged)


__all__ = ["READ", "WRITE", "READ_WRITE", "SCAN", "classify", "classify_one", "merge_groups",
           "share_nodes", "lpt", "Placement", "place"]
