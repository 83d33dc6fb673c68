"""Diagnose: the bottleneck of each overloaded node, which the rules act on.

    cpu / io_wait   the mark it crossed (io_wait only while CPU is under its mark): short of
                    capacity, the only diagnoses that ask for nodes
    transient       within warmup_s of the end of the last plan: cold caches, not capacity
    within_slo      its requests still take no longer than latency_slo_ms (latency_gate) and
                    none wait beyond a handful in its call queue or go unanswered
    hot_partition   one partition alone takes split_load_fraction of a node and the rest of
                    the node would not be overloaded: more nodes cannot help
    none            not overloaded

`diagnose: false` keeps cpu / io_wait / within_slo only (every overload is short of capacity
unless it is served in time). Pure: the snapshot's arrays, the health verdicts and the policy.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from decision.arrays import SnapshotArrays
from decision.demand import backlogged
from decision.model import Health, NodeMetrics
from decision.policy import PolicyConfig

CAPACITY = ("cpu", "io_wait")  # the bottlenecks more nodes relieve


@dataclass(frozen=True)
class Diagnosis:
    node: str
    bottleneck: str  # cpu | io_wait | hot_partition | transient | within_slo | none
    reason: str
    # why a node whose mean call time is within the objective still asks for capacity (calls
    # wait for it); empty otherwise. Said in the plan's reason: the verdicts alone would show
    # a node "in time" being bought for.
    waits: str = ""


def utilisation(cpu: float, io_wait: float, policy: PolicyConfig) -> float:
    """How close a node is to overload: 1.0 at cpu_high or io_wait_high (the larger)."""
    return max(cpu / policy.cpu_high, io_wait / policy.io_wait_high)


def latency_slo(policy: PolicyConfig) -> float | None:
    """The latency objective the decision follows, or None (none set, or the gate is off)."""
    return policy.latency_slo_ms if policy.latency_gate else None


def _queued(m: NodeMetrics) -> bool:
    """Calls wait for the node beyond a handful, or go unanswered (decision/demand.py)."""
    return backlogged(m.rpc_queue_length) or \
        (m.rpc_dropped_per_s is not None and m.rpc_dropped_per_s > 0)


def _waiting(m: NodeMetrics) -> str:
    if backlogged(m.rpc_queue_length):
        return f"{m.rpc_queue_length:.0f} calls wait in its queue"
    return f"it drops {m.rpc_dropped_per_s:.1f} calls/s"


def diagnose(arrays: SnapshotArrays, health: Health, policy: PolicyConfig,
             warming: bool) -> tuple[Diagnosis, ...]:
    """The bottleneck of each active node (`none` when not overloaded); `warming`: the decision
    falls within warmup_s of the last plan's end."""
    warming = warming and policy.diagnose
    node_load = np.bincount(arrays.node_of[arrays.node_of >= 0],
                            weights=arrays.load[arrays.node_of >= 0],
                            minlength=len(arrays.active))
    top = np.zeros(len(arrays.active))
    on = arrays.node_of >= 0
    np.maximum.at(top, arrays.node_of[on], arrays.load[on])
    verdict = {v.node: v.verdict for v in health.nodes}
    slo = latency_slo(policy)
    out = []
    for i, node in enumerate(arrays.active):
        m = node.metrics
        if verdict.get(node.id) != "overloaded" or m is None:
            out.append(Diagnosis(node.id, "none", "not overloaded"))
            continue
        kind = "io_wait" if m.io_wait >= policy.io_wait_high and m.cpu < policy.cpu_high \
            else "cpu"
        if warming:
            out.append(Diagnosis(node.id, "transient", (
                f"{kind} overload within warmup_s {policy.warmup_s:.0f} s of the last plan: "
                "cold caches, not capacity")))
            continue
        in_time = slo is not None and m.rpc_latency_ms is not None and m.rpc_latency_ms <= slo
        # The server times the calls it took up, not those still waiting for it: a queue that
        # builds (open-loop demand over what it serves) or drops says the clients wait, whatever
        # the mean says (a CPU-quota'd RegionServer read 29.5 ms while a tenant's p99 was 4 s).
        if in_time and not _queued(m):
            out.append(Diagnosis(node.id, "within_slo", (
                f"{kind} overload, but its requests take {m.rpc_latency_ms:.1f} ms <= "
                f"latency_slo_ms {slo:g}: served in time, nothing to buy")))
            continue
        share = top[i] / node_load[i] if node_load[i] > 0 else 0.0
        # The hottest partition's own part of the node's utilisation, and the rest's.
        u = utilisation(m.cpu, m.io_wait, policy)
        if policy.diagnose and policy.data_placement == "metctl" \
                and share * u * policy.cpu_high >= policy.split_load_fraction \
                and (1 - share) * u < 1.0:
            out.append(Diagnosis(node.id, "hot_partition", (
                f"one partition carries {share:.0%} of its requests "
                f"({share * u * policy.cpu_high:.2f} of a node >= split_load_fraction "
                f"{policy.split_load_fraction:.2f}): more nodes would not help")))
            continue
        # in time by its mean here means calls wait for it (else it was within_slo above)
        waits = (f"its requests take {m.rpc_latency_ms:.1f} ms <= latency_slo_ms {slo:g} but "
                 f"{_waiting(m)}: clients wait") if in_time else ""
        out.append(Diagnosis(node.id, kind, f"{kind} overload (utilisation {u:.2f})"
                             + (f"; {waits}" if waits else ""), waits))
    return tuple(out)


__all__ = ["Diagnosis", "diagnose", "utilisation", "latency_slo", "CAPACITY"]
