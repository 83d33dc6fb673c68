"""The target-tracking baseline: how operators scale today with Kubernetes' Horizontal Pod
Autoscaler, AWS target tracking or the Spanner autoscaler. Keep the mean CPU utilisation of
the active nodes at `target_cpu` (60 %):

    desired = ceil(n x utilisation / target)      (HPA's algorithm, n = active nodes)

skipped while utilisation / target is within `target_tolerance` of 1 (HPA's default 0.1).
Scale out at once to `desired` (nodes still booting count as already there, as HPA counts
pods not yet ready); scale in only to the largest `desired` of the last
`target_scale_in_window_s` seconds (HPA's scale-down stabilisation window, default 300 s) and at
most one node per decision (a `behavior.scaleDown` policy of one pod). No placement and no
reconfiguration: HBase's own balancer gives new nodes regions and takes a drained node's.

The recommendations of the window live in `DecisionMemory.history` as ("tt|<epoch seconds>",
desired) pairs, JSON-safe, like tiramola's running average.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from decision.arrays import current_assignment, load_ratio
from decision.health import metrics_known, unknown_active
from decision.model import (
    Action, ClusterSnapshot, DecisionMemory, Health, Node, NodeAssignment, NodeHealth, Plan,
    Sizing, Summary,
)
from decision.policy import PolicyConfig

KEY = "tt|"


def desired_nodes(active: int, utilisation: float, target: float, tolerance: float) -> int:
    """HPA's recommendation: ceil(n x utilisation / target), or n while within tolerance."""
    if active <= 0:
        return 0
    ratio = utilisation / target
    if abs(ratio - 1.0) <= tolerance:
        return active
    return max(1, math.ceil(active * ratio - 1e-9))


def target_tracking_key(key: str) -> bool:
    """A history key of target-tracking's window ("tt|<epoch seconds>")."""
    try:
        return key.startswith(KEY) and math.isfinite(float(key[len(KEY):]))
    except ValueError:
        return False


def recommendations(history: tuple[tuple[str, float], ...], now: float,
                    window_s: float) -> tuple[list[tuple[float, int]], float | None]:
    """The (time, desired) pairs remembered within the window before `now`, and the time of the
    newest one before the window (None: the window has not been watched in full yet)."""
    inside, before = [], None
    for key, value in history:
        if not key.startswith(KEY):
            continue
        try:
            t = float(key[len(KEY):])
        except ValueError:  # someone else's history: ignore it, do not crash
            continue
        if now - window_s < t < now:
            inside.append((t, int(value)))
        elif t <= now - window_s:
            before = t if before is None else max(before, t)
    return inside, before


def _cpu(node: Node) -> float:
    """A node's CPU (callers decide only once every active node's metrics are known)."""
    return node.metrics.cpu if node.metrics is not None else 0.0


def decide_target_tracking(snapshot: ClusterSnapshot, policy: PolicyConfig,
                           memory: DecisionMemory) -> Plan:
    active = [n for n in snapshot.nodes if n.state == "active"]
    booting = [n for n in snapshot.nodes if n.state == "booting"]
    draining = [n for n in snapshot.nodes if n.state == "draining"]
    unknown = unknown_active(snapshot.nodes)
    target = policy.target_cpu
    cpus = [_cpu(n) for n in active if metrics_known(n)]
    utilisation = float(np.mean(cpus)) if cpus else 0.0
    count = len(active)
    verdicts = tuple(
        NodeHealth(n.id, "unknown", ("no usable metrics: not decided on",)) if not metrics_known(n)
        else NodeHealth(n.id, "healthy", (f"state {n.state}: not counted",)) if n.state != "active"
        else NodeHealth(n.id, "overloaded" if _cpu(n) > target else "healthy",
                        (f"cpu {_cpu(n):.2f} against the target {target:.2f}",))
        for n in snapshot.nodes)
    over = sum(v.verdict == "overloaded" for v in verdicts)
    health = Health(verdicts, over / count if count else 0.0, False, utilisation <= target)
    assignment = current_assignment(snapshot)
    now = snapshot.taken_at.timestamp()
    actions: list[Action] = []
    delta, new_memory = 0, memory
    if not active or unknown:
        reason = ("hold: no active node" if not active
                  else f"hold: no fresh metrics for {', '.join(unknown)}")
        desired = count
    else:
        desired = min(policy.max_nodes, max(policy.min_nodes, desired_nodes(
            count, utilisation, target, policy.target_tolerance)))
        window, anchor = recommendations(memory.history, now, policy.target_scale_in_window_s)
        kept = tuple((f"{KEY}{t:.3f}", float(d)) for t, d in
                     ([(anchor, count)] if anchor is not None else []) + window + [(now, desired)])
        new_memory = replace(memory, history=kept)
        have = count + len(booting)  # nodes on their way count as there (HPA: pods not ready)
        words = f"mean cpu {utilisation:.2f} on {count} nodes, target {target:.2f}: {desired} wanted"
        if desired > have:
            delta = desired - have
            for i in range(delta):
                actions.append(Action(op="launch", node=f"new-{i + 1}", profile="default",
                                      cause="scale_out", reason=words + "; HBase's balancer places regions"))
                assignment = assignment + (NodeAssignment(f"new-{i + 1}", "default", (), 0.0),)
            reason = f"target-tracking: add {delta} ({words})"
        elif desired < count and not booting and not draining:
            # scale in to the most any recommendation of the window asked for, one node at most
            floor = max([desired] + [d for _, d in window])
            covered = anchor is not None  # watched for a whole window, not just started
            if floor < count and covered:
                delta = -1
                victim = min(reversed(active), key=_cpu)
                why = (f"every recommendation for {policy.target_scale_in_window_s:g} s at most "
                       f"{floor} nodes ({words})")
                actions += [Action(op="drain", node=victim.id, cause="scale_in",
                                   reason=why + "; the data store unloads its regions itself"),
                            Action(op="terminate", node=victim.id, cause="scale_in",
                                   reason=why + "; terminated once drained")]
                reason = "target-tracking: remove one node (" + why + ")"
            else:
                reason = (f"target-tracking: {desired} wanted, held by the scale-in window "
                          f"({policy.target_scale_in_window_s:g} s; most asked {floor})")
        elif desired < count:
            reason = f"target-tracking: {desired} wanted, change in progress"
        else:
            reason = f"target-tracking: {words}, size kept"
    ratio = load_ratio(np.array([a.load for a in assignment]))
    sizing = Sizing(count, count + delta, delta, memory.step, reason)
    summary = Summary(moves=0, reconfigurations=0, launches=max(delta, 0),
                      terminations=int(delta < 0), max_load_ratio=ratio)
    return Plan(policy="target-tracking", health=health, sizing=sizing, groups=(),
                assignment=assignment, actions=tuple(actions), summary=summary,
                memory=new_memory, reason=reason)



__all__ = ["decide_target_tracking", "desired_nodes", "recommendations", "target_tracking_key"]
