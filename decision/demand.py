"""Demand: what each node is asked for, in node-loads (1.0 = one node's CPU, fully busy), not
only what it manages to serve.

A node that keeps up serves what it is asked: its demand is its CPU. A saturated node serves
its capacity and the rest waits in its RPC call queue, is refused (queue full) or dropped
(its client gave up): its CPU reads at most 1.0 whatever the excess, so CPU alone under-sizes
a cluster that is short (two saturated nodes read as two node-loads when ten are asked for).
What it is asked, per second:
  - once it refuses or drops calls unanswered (`rpc_dropped_per_s`: its queue is full or its
    calls time out), what it served plus those: the excess shows there, and the queue,
    which also holds calls that will time out, is not read again;
  - otherwise (nothing dropped yet, the queue fills) what it served plus how fast its call
    queue grew since the last decision (`rpc_queue_length` then and now): what arrives is what
    leaves plus what stays. Little's law (queue / latency) was used before and read a queue
    that had just formed as far more demand than was offered (78,635 requests/s asked where
    about 56,000 were offered, business-day at 1,305 s): the latency it divides by is that
    of the calls answered, which waited in a shorter queue. A queue that stays long without
    growing asks nothing more than what is served. Without the last decision's queue (the
    first decision, a node new since), what it served.
The demand is its CPU scaled by asked / served. A node whose monitor has neither figure (an
older source) is taken at its CPU, as before.

Each partition carries its share of its node's demand (its requests' share of the node's),
which is what a move takes along.

Pure: the snapshot's arrays in, arrays and dataclasses out.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from decision.arrays import SnapshotArrays

# A queue this short is a handful of calls between two samples, not a backlog (Little's law on
# it would read noise as demand). Assumption: 2 x HBase's 30 default handlers.
QUEUE_FLOOR = 60.0


def backlogged(queue: float | None) -> bool:
    """More calls wait in a node's RPC call queue than a handful (QUEUE_FLOOR)."""
    return queue is not None and math.isfinite(queue) and queue > QUEUE_FLOOR


@dataclass(frozen=True)
class QueueSeen:
    """A node's RPC call queue at the last decision: how many calls waited, and when."""

    at: float
    queue: float


@dataclass(frozen=True)
class NodeDemand:
    """One active node's demand."""

    node: str
    profile: str
    served: float            # requests/s its partitions served
    asked: float             # requests/s asked of it: served, plus the queue's growth or drops
    cpu: float               # fraction of the node
    demand: float            # node-loads: cpu x asked / served
    latency_ms: float | None
    queue: float | None      # calls waiting in its RPC queue (None: not reported)
    dropped: float | None = None  # calls/s refused or dropped unanswered (None: not reported)

    @property
    def queued(self) -> bool:
        """Requests wait for it beyond a handful, or go unanswered: it is short, whatever its
        CPU says."""
        return backlogged(self.queue) or \
            (self.dropped is not None and self.dropped > 0 and self.asked > self.served)


@dataclass(frozen=True)
class Demands:
    """Every active node's demand and each partition's share of it."""

    nodes: tuple[NodeDemand, ...]
    partition: np.ndarray  # node-loads per partition (index as in SnapshotArrays)

    @property
    def total(self) -> float:
        return float(sum(n.demand for n in self.nodes))

    @property
    def served(self) -> float:
        return float(sum(n.served for n in self.nodes))

    @property
    def asked(self) -> float:
        return float(sum(n.asked for n in self.nodes))

    def node_demand(self) -> np.ndarray:
        return np.array([n.demand for n in self.nodes], dtype=float)


def asked_rate(served: float, queue: float | None, dropped_per_s: float | None = None,
               before: QueueSeen | None = None, now: float | None = None) -> float:
    """Requests/s asked of a node: what it served plus what it refused or dropped unanswered
    when it drops any; else what it served plus its call queue's growth since `before` (a
    queue over QUEUE_FLOOR), never less than what it served."""
    if dropped_per_s is not None and math.isfinite(dropped_per_s) and dropped_per_s > 0:
        return served + dropped_per_s
    if not backlogged(queue) or queue is None or before is None or now is None:
        return served
    elapsed = now - before.at
    if not (elapsed > 0 and math.isfinite(before.queue)):
        return served
    return served + max(0.0, (queue - before.queue) / elapsed)


def queues_seen(d: Demands, now: float) -> dict[str, QueueSeen]:
    """Each node's call queue in `d`, seen `now`, for the next decision's growth."""
    return {n.node: QueueSeen(now, n.queue) for n in d.nodes
            if n.queue is not None and math.isfinite(n.queue)}


def demands(arrays: SnapshotArrays, before: Mapping[str, QueueSeen] | None = None,
            now: float | None = None) -> Demands:
    """Each active node's demand (a node without metrics counts none: the policy holds on
    missing metrics before it sizes) and each partition's share; `before` holds the call
    queues of the last decision (`queues_seen`), `now` is this one's time."""
    before = before or {}
    on = arrays.node_of >= 0
    served = np.bincount(arrays.node_of[on], weights=arrays.load[on], minlength=len(arrays.active))
    out = []
    for i, n in enumerate(arrays.active):
        m = n.metrics
        if m is None:
            out.append(NodeDemand(n.id, n.profile, float(served[i]), float(served[i]), 0.0, 0.0,
                                  None, None))
            continue
        queue, dropped = m.rpc_queue_length, m.rpc_dropped_per_s
        asked = asked_rate(float(served[i]), queue, dropped, before.get(n.id), now)
        scale = asked / served[i] if served[i] > 0 else 1.0
        out.append(NodeDemand(n.id, n.profile, float(served[i]), asked, m.cpu, m.cpu * scale,
                              m.rpc_latency_ms, queue, dropped))
    node_demand = np.array([d.demand for d in out], dtype=float)
    share = np.zeros(len(arrays.ids))
    src = arrays.node_of[on]
    share[on] = np.divide(arrays.load[on], served[src], out=np.zeros(len(src)),
                          where=served[src] > 0)
    partition = np.zeros(len(arrays.ids))
    partition[on] = share[on] * node_demand[src] if len(node_demand) else 0.0
    return Demands(tuple(out), partition)


__all__ = ["NodeDemand", "Demands", "QueueSeen", "backlogged", "demands", "queues_seen", "asked_rate",
           "QUEUE_FLOOR"]
