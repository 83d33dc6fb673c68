"""Stage D — match Stage C's target partition sets ("slots") to the current nodes.

The objective is lexicographic: first keep as many partitions where they are as possible
(fewest moves), then keep as many node profiles as possible (fewest restarts). Encoded as one
weight per (node, slot) pair, W = K x retained + same_profile with K > the most profile keeps
possible, an optimal assignment is optimal on moves, hence never moves more than MET's greedy
matching (Algorithm 3, kept here as `match_greedy`, the baseline for tests and benchmarks).

Two exact-in-moves solvers:
  * dense (nodes x slots <= DENSE_LIMIT cells): scipy's linear_sum_assignment over W — optimal
    in moves and then in restarts;
  * sparse (bigger clusters; a dense 10,000 x 10,000 matrix would take 800 MB): only pairs that
    share partitions are edges (built with np.unique from the partition -> node / slot arrays),
    plus one zero-value "stay unmatched" edge per node, solved by scipy's
    min_weight_full_bipartite_matching. Still optimal in moves; nodes and slots left over share
    no partition, so they are paired profile by profile — restarts are then near-optimal, not
    guaranteed optimal.

Inputs are arrays: `node_of[p]` the current node index of partition p (-1: not on an active
node), `slot_of[p]` its target slot, and profile codes of nodes and slots. Output: for each
slot, the node index it goes to, or -1 for a node to launch.
"""
from __future__ import annotations

import numpy as np

DENSE_LIMIT = 4_000_000  # nodes x slots cells (32 MB of float64) for the dense solver


def overlap_pairs(node_of: np.ndarray, slot_of: np.ndarray, nodes: int,
                  slots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(node, slot, partitions shared) for every pair that shares at least one partition."""
    on = node_of >= 0
    key = node_of[on].astype(np.int64) * slots + slot_of[on]
    uniq, count = np.unique(key, return_counts=True)
    return uniq // slots, uniq % slots, count


def retained(node_of: np.ndarray, slot_of: np.ndarray, node_for_slot: np.ndarray) -> int:
    """How many partitions stay on their node under a matching (the rest move)."""
    on = node_of >= 0
    return int(np.count_nonzero(node_for_slot[slot_of[on]] == node_of[on]))


def match_optimal(node_of: np.ndarray, slot_of: np.ndarray, node_profile: np.ndarray,
                  slot_profile: np.ndarray, dense_limit: int = DENSE_LIMIT) -> np.ndarray:
    """The optimal matching (see module doc). Returns node index per slot, -1 = new node."""
    nodes, slots = len(node_profile), len(slot_profile)
    node_for_slot = np.full(slots, -1, dtype=np.int64)
    if nodes == 0 or slots == 0:
        return node_for_slot
    rows, cols, shared = overlap_pairs(node_of, slot_of, nodes, slots)
    big = min(nodes, slots) + 1  # one more retained partition beats every profile keep
    if nodes * slots <= dense_limit:
        weight = (np.asarray(node_profile)[:, None] == np.asarray(slot_profile)[None, :]) \
            .astype(np.float64)
        weight[rows, cols] += big * shared
        # scipy is imported where it is used: its import costs ~0.4 s, more than the default
        # met's whole decision at 1,000 x 100,000, which never reconciles.
        from scipy.optimize import linear_sum_assignment  # noqa: PLC0415 (see above)
        r, c = linear_sum_assignment(weight, maximize=True)
        node_for_slot[c] = r
        return node_for_slot
    same = (np.asarray(node_profile)[rows] == np.asarray(slot_profile)[cols]).astype(np.float64)
    # Every value is offset by +1 because the sparse solver treats a zero entry as no edge;
    # every node takes exactly one edge, so the offset changes no choice.
    data = np.concatenate([1.0 + big * shared + same, np.ones(nodes)])
    r_idx = np.concatenate([rows, np.arange(nodes)])
    c_idx = np.concatenate([cols, slots + np.arange(nodes)])
    # scipy where it is used (see above)
    from scipy.sparse import csr_matrix  # noqa: PLC0415
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching  # noqa: PLC0415
    graph = csr_matrix((data, (r_idx, c_idx)), shape=(nodes, slots + nodes))
    r, c = min_weight_full_bipartite_matching(graph, maximize=True)
    real = c < slots
    node_for_slot[c[real]] = r[real]
    _pair_leftovers(node_for_slot, node_profile, slot_profile)
    return node_for_slot


def _pair_leftovers(node_for_slot: np.ndarray, node_profile: np.ndarray,
                    slot_profile: np.ndarray) -> None:
    """Give unmatched slots to unmatched nodes: same profile first, then in index order."""
    used = np.zeros(len(node_profile), dtype=bool)
    used[node_for_slot[node_for_slot >= 0]] = True
    free_nodes = [int(i) for i in np.flatnonzero(~used)]
    free_slots = [int(t) for t in np.flatnonzero(node_for_slot < 0)]
    if not free_nodes or not free_slots:
        return
    by_profile: dict[object, list[int]] = {}
    for i in free_nodes:
        by_profile.setdefault(node_profile[i], []).append(i)
    taken: set[int] = set()
    rest: list[int] = []
    for t in free_slots:
        pool = by_profile.get(slot_profile[t])
        if pool:
            i = pool.pop(0)
            node_for_slot[t] = i
            taken.add(i)
        else:
            rest.append(t)
    remaining = [i for i in free_nodes if i not in taken]
    for t, i in zip(rest, remaining):
        node_for_slot[t] = i


def match_greedy(node_of: np.ndarray, slot_of: np.ndarray, node_profile: np.ndarray,
                 slot_profile: np.ndarray) -> np.ndarray:
    """MET's best-effort matching (Algorithm 3): each current node in turn takes the remaining
    slot most similar to what it holds (most shared partitions, then same profile, then lowest
    slot index). Returns node index per slot, -1 = new node."""
    nodes, slots = len(node_profile), len(slot_profile)
    node_for_slot = np.full(slots, -1, dtype=np.int64)
    rows, cols, shared = overlap_pairs(node_of, slot_of, nodes, slots)
    same = np.asarray(node_profile)[rows] == np.asarray(slot_profile)[cols]
    # Candidates per node, best first: np.lexsort sorts by the last key first.
    order = np.lexsort((cols, ~same, -shared, rows))
    cols_s = cols[order].tolist()
    starts = np.searchsorted(rows[order], np.arange(nodes + 1)).tolist()
    free = np.ones(slots, dtype=bool)
    by_profile: dict[object, list[int]] = {}
    for t in range(slots - 1, -1, -1):  # stacks, lowest slot index on top
        by_profile.setdefault(slot_profile[t], []).append(t)
    all_slots = list(range(slots - 1, -1, -1))
    left = slots
    for i in range(nodes):
        if left == 0:
            break
        pick = -1
        for k in range(starts[i], starts[i + 1]):
            if free[cols_s[k]]:
                pick = cols_s[k]
                break
        if pick < 0:
            stack = by_profile.get(node_profile[i], [])
            while stack and not free[stack[-1]]:
                stack.pop()
            if stack:
                pick = stack.pop()
            else:
                while not free[all_slots[-1]]:
                    all_slots.pop()
                pick = all_slots.pop()
        free[pick] = False
        node_for_slot[pick] = i
        left -= 1
    return node_for_slot


__all__ = ["DENSE_LIMIT", "overlap_pairs", "retained", "match_optimal", "match_greedy"]
