"""Which partitions move where, and whether a move pays (move_only_what_pays).

Load is weighed in utilisation (1.0 = a node at its overload mark): each partition carries its
share of its node's utilisation, so a node bound by disk is relieved by the partitions that
cause its io_wait, not by request count. A move pays (move_gain_vs_cost) when the load it takes
off the hotter of its two nodes, kept for move_payback_s, beats the partition's share served
cold while its data comes back (size_mb / move_mb_s) plus its offline time (move_offline_s).
Pure numpy over a SnapshotArrays.
"""
from __future__ import annotations

import heapq

import numpy as np

from decision.arrays import SnapshotArrays
from decision.policy import PolicyConfig
from decision.rules.diagnose import utilisation

Move = tuple[int, int, str]  # (partition index, destination node index, words for its reason)


def node_loads(arrays: SnapshotArrays) -> np.ndarray:
    """Requests/s each active node serves."""
    on = arrays.node_of >= 0
    return np.bincount(arrays.node_of[on], weights=arrays.load[on],
                       minlength=len(arrays.active))


def costs(arrays: SnapshotArrays, policy: PolicyConfig) -> tuple[np.ndarray, np.ndarray]:
    """Each active node's utilisation and each partition's share of it (its requests' part of
    its node's utilisation): the bottleneck, CPU or disk, in one unit. A node with
    utilisation but no requests spreads it evenly over its partitions."""
    util = np.array([utilisation(n.metrics.cpu, n.metrics.io_wait, policy)
                     if n.metrics is not None else 0.0 for n in arrays.active])
    loads = node_loads(arrays)
    on = arrays.node_of >= 0
    counts = np.bincount(arrays.node_of[on], minlength=len(arrays.active))
    cost = np.zeros(len(arrays.ids))
    src = arrays.node_of[on]
    # The partition's fraction of its node's requests times the node's utilisation, in this
    # order: util / load first overflows for a node whose load is a few requests per century.
    share = np.divide(arrays.load[on], loads[src], out=np.zeros(len(src)), where=loads[src] > 0)
    even = np.divide(util, counts, out=np.zeros_like(util), where=counts > 0)
    cost[on] = np.where(loads[src] > 0, share * util[src], even[src])
    return util, cost


def move_pays(policy: PolicyConfig, w: float, size_mb: float, source: float,
              dest: float, wait_s: float = 0.0) -> tuple[bool, float, float]:
    """Whether moving a partition with utilisation share `w` and `size_mb` of data from a node at
    `source` to one at `dest` pays: (pays, relief, cost), relief the load it takes off the
    hotter of the two (what the hot node sheds, less what the destination rises above it)
    over what is left of move_payback_s once the destination has taken in the `wait_s` seconds
    of data this plan already sends it, cost its share served cold while its data comes back
    plus its offline time, both in node-seconds."""
    relief = float(move_relief(policy, w, source, dest, wait_s))
    cost = w * (size_mb / policy.move_mb_s + policy.move_offline_s)
    return relief > 0 and relief > cost, relief, cost


def move_relief(policy: PolicyConfig, w: float, source: float, dest, wait_s):
    """move_pays' relief in node-seconds; `dest` and `wait_s` may be arrays (one per candidate
    destination)."""
    return (source - np.maximum(source - w, dest + w)) * np.maximum(policy.move_payback_s - wait_s,
                                                                    0.0)


class _Destinations:
    """The nodes a plan's moves may go to: their loads as the moves so far leave them, the
    least loaded one at hand, and the seconds of data each already takes in from this plan
    (one node reads, or is streamed, its new partitions' data at move_mb_s in all, so the
    tenth 3 GB region sent to a new node starts relieving its source 20 minutes later)."""

    def __init__(self, loads: np.ndarray, dest: list[int]):
        self.loads = loads
        self.ix = np.asarray(dest, dtype=np.int64)
        self.intake_s = np.zeros(len(loads))
        self.heap = [(float(loads[i]), i) for i in dest]
        heapq.heapify(self.heap)

    def least(self) -> tuple[float, int]:
        while self.heap and self.heap[0][0] != self.loads[self.heap[0][1]]:  # stale entry
            _, i = heapq.heappop(self.heap)
            heapq.heappush(self.heap, (float(self.loads[i]), i))
        return self.heap[0]

    def soonest_relief(self, policy: PolicyConfig, w: float, source: float,
                       cap: float) -> int | None:
        """The node where a move relieves its source most soonest, among those it leaves under
        `cap`, under the source and under the overload mark (moving load onto a node
        overloaded itself only moves the overload); ties: the least loaded."""
        d_load = self.loads[self.ix]
        fits = (d_load + w <= cap) & (d_load + w < source) & (d_load + w < 1.0)
        if not fits.any():
            return None
        relief_at = np.where(fits, move_relief(policy, w, source, d_load, self.intake_s[self.ix]),
                             -np.inf)
        best = np.flatnonzero(relief_at >= relief_at.max() * (1 - 1e-9))
        return int(self.ix[best[int(np.argmin(d_load[best]))]])


def _weighed(arrays: SnapshotArrays, policy: PolicyConfig, p: int, w: float, s: int, d: int,
             dests: _Destinations, cap: float) -> tuple[int, str] | None:
    """move_gain_vs_cost: where moving partition `p` (share `w`) off node `s` pays, starting
    from the least loaded node `d`, and the words that say why; None when nowhere does."""
    loads, size = dests.loads, float(arrays.size_mb[p])
    pays, relief, spent = move_pays(policy, w, size, float(loads[s]), float(loads[d]),
                                    wait_s=float(dests.intake_s[d]))
    if not pays and dests.intake_s[d] > 0 and \
            policy.move_payback_s > size / policy.move_mb_s + policy.move_offline_s:
        # The least loaded node's intake queue is long (a few hundred small partitions would
        # all go to it and queue for hours): the node where it relieves most soonest instead.
        found = dests.soonest_relief(policy, w, float(loads[s]), cap)
        if found is None:
            return None
        d = found
        pays, relief, spent = move_pays(policy, w, size, float(loads[s]), float(loads[d]),
                                        wait_s=float(dests.intake_s[d]))
    if not pays:
        return None
    queued = (f", after {dests.intake_s[d]:.0f} s of this plan's earlier data to its node"
              if dests.intake_s[d] >= 1 else "")
    dests.intake_s[d] += size / policy.move_mb_s
    return d, (f"; takes {relief:.0f} node-s off the hot node over move_payback_s "
               f"{policy.move_payback_s:g}{queued} > {spent:.0f} node-s of warm-up and "
               f"offline time ({size:.0f} MiB)")


def greedy_moves(arrays: SnapshotArrays, loads: np.ndarray, sources: list[int],
                 dest: list[int], target_load: float, cap: float, policy: PolicyConfig,
                 cost: np.ndarray | None = None, stay: frozenset[str] = frozenset(),
                 waking: np.ndarray | None = None) -> tuple[list[Move], np.ndarray]:
    """Move partitions off `sources` (heaviest node first; per node, its largest partitions
    that fit first; idle partitions and those in `stay` never; `waking`: idle now but expected
    to carry load) while the source stays above `target_load`, each onto the least loaded node
    of `dest` if it stays at or under `cap`, with move_gain_vs_cost only when that pays
    (move_pays), else onto the node where it takes most off the hot node soonest if that
    pays. Returns (partition, destination index, why) and the loads after."""
    loads = loads.copy()
    moves: list[Move] = []
    if not dest:  # a caller that filtered every node out (all short, all draining): nowhere to go
        return moves, loads
    cost = arrays.load if cost is None else cost
    busy = np.flatnonzero(((arrays.load > 0) if waking is None else (arrays.load > 0) | waking)
                          & (cost > 0))
    if stay:
        busy = busy[[arrays.ids[p] not in stay for p in busy.tolist()]]
    dests = _Destinations(loads, dest)
    # Heaviest first; a saturated CPU reads 1.0 however far demand is over it, so among equal
    # utilisations the node asked for more requests goes first.
    requests = np.bincount(arrays.node_of[arrays.node_of >= 0],
                           weights=arrays.load[arrays.node_of >= 0], minlength=len(loads))
    for s in sorted(sources, key=lambda i: (-loads[i], -requests[i])):
        mine = busy[arrays.node_of[busy] == s]
        for p in mine[np.argsort(-cost[mine], kind="stable")].tolist():
            if loads[s] <= target_load:
                break
            w = float(cost[p])
            least, d = dests.least()
            # A move pays only when it lowers the hotter of the two nodes...
            if least + w > cap or least + w >= loads[s]:
                continue  # not even the least loaded node has room
            why = ""
            if policy.move_gain_vs_cost:
                # ...and, weighed, when what it takes off the hot node outweighs its warm-up.
                found = _weighed(arrays, policy, p, w, s, d, dests, cap)
                if found is None:
                    continue
                d, why = found
            moves.append((p, d, why))
            loads[s] -= w
            loads[d] += w
            heapq.heappush(dests.heap, (float(loads[d]), d))
    return moves, loads


def idle_by_count(arrays: SnapshotArrays, cost: np.ndarray, moves: list[Move], nodes: int,
                  new: range) -> list[Move]:
    """Ahead of a predicted load, the idle partitions the last cycle did not see wake may wake
    too (they weigh nothing now): give each new node its share of the partition count in them,
    taken from the nodes holding most, as HBase's own balancer evens counts."""
    where = arrays.node_of.copy()
    for p, d, _ in moves:
        where[p] = d
    count = np.bincount(where[where >= 0], minlength=nodes)
    moved = {p for p, _, _ in moves}
    idle: dict[int, list[int]] = {}
    for p in np.flatnonzero((where >= 0) & (arrays.load <= 0) & (cost <= 0)).tolist():
        if p not in moved:
            idle.setdefault(int(where[p]), []).append(p)
    share = int(count.sum()) // max(nodes, 1)
    out: list[Move] = []
    for d in new:
        while count[d] < share:
            donors = [i for i in idle if idle[i] and count[i] > share]
            if not donors:
                return out
            s = max(donors, key=lambda i: (count[i], -i))
            out.append((idle[s].pop(), d,
                        "; idle now, spread by count ahead of the predicted load"))
            count[s] -= 1
            count[d] += 1
    return out


__all__ = ["Move", "node_loads", "costs", "move_pays", "move_relief", "greedy_moves",
           "idle_by_count"]
