"""Demand: what each node is asked for, in node-loads (1.0 = one node's CPU, fully busy), not
only what it manages to serve.

A node that keeps up serves what it is asked: its demand is its CPU. A saturated node serves
its capacity and the rest waits in its RPC call queue, is refused (queue full) or dropped
(its client gave up): its CPU reads at most 1.0 whatever the excess, so CPU alone under-sizes
a cluster that is short (two saturated nodes read as two node-loads when ten are asked for).
What it is asked, per second:
  - once it refuses or drops calls unanswered (`rpc_dropped_per_s`: its queue is full or its
    calls time out), what it served plus those: the excess shows there. Little's law on the
    queue is not added then: the queue also holds the calls that will time out, each for the
    whole timeout, so its length over the answered calls' time counts them again (on a node
    slow for a minute with a cold cache it read 80,000 requests/s asked where 56,000 were
    offered);
  - otherwise (nothing dropped yet, the queue fills) what it served, or by Little's law on its
    call queue (L = lambda W: `rpc_queue_length` calls waiting over `rpc_latency_ms`, nearly
    all of it waiting on a saturated node), whichever is more.
The demand is its CPU scaled by asked / served. A node whose monitor has neither figure (an
older source) is taken at its CPU, as before.

Each partition carries its share of its node's demand (its requests' share of the node's),
which is what a move takes along.

Pure: the snapshot's arrays in, arrays and dataclasses out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from decision.arrays import SnapshotArrays

# A queue this short is a handful of calls between two samples, not a backlog (Little's law on
# it would read noise as demand). Assumption: 2 x HBase's 30 default handlers.
QUEUE_FLOOR = 60.0


@dataclass(frozen=True)
class NodeDemand:
    """One active node's demand."""

    node: str
    profile: str
    served: float            # requests/s its partitions served
    asked: float             # requests/s asked of it: served, plus what queued (Little's law)
    cpu: float               # fraction of the node
    demand: float            # node-loads: cpu x asked / served
    latency_ms: float | None
    queue: float | None      # calls waiting in its RPC queue (None: not reported)
    dropped: float | None = None  # calls/s refused or dropped unanswered (None: not reported)

    @property
    def queued(self) -> bool:
        """Requests wait for it beyond a handful, or go unanswered: it is short, whatever its
        CPU says."""
        return (self.queue is not None and self.queue > QUEUE_FLOOR) or \
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


def asked_rate(served: float, queue: float | None, latency_ms: float | None,
               dropped_per_s: float | None = None) -> float:
    """Requests/s asked of a node: what it served plus what it refused or dropped unanswered
    when it drops any; else what it served, or by Little's law on its call queue (queue /
    time a request spends in the server) when that is more."""
    lost = dropped_per_s if dropped_per_s is not None and math.isfinite(dropped_per_s) \
        and dropped_per_s > 0 else 0.0
    if lost > 0:
        return served + lost
    if queue is None or latency_ms is None or not (queue > QUEUE_FLOOR and latency_ms > 0):
        return served
    if not (math.isfinite(queue) and math.isfinite(latency_ms)):
        return served
    return max(served, queue / (latency_ms / 1000.0))


def demands(arrays: SnapshotArrays) -> Demands:
    """Each active node's demand (a node without metrics counts none: the policy holds on
    missing metrics before it sizes) and each partition's share."""
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
        asked = asked_rate(float(served[i]), queue, m.rpc_latency_ms, dropped)
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


__all__ = ["NodeDemand", "Demands", "demands", "asked_rate", "QUEUE_FLOOR"]
