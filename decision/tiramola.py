"""The tiramola baseline (Konstantinou et al., CIKM 2011, as MET §6.4 compares against it):
add one node when any node's running-average CPU is over `tiramola_cpu_high` (40 %), remove
one when every node's is under `tiramola_cpu_low` (15 %). No placement, no reconfiguration.

What HBase does around it, and so what the plan says:
  * scale out: one `launch` of a `default`-profile node and no moves. Under tiramola HBase's
    own balancer stays on; once the RegionServer registers, the balancer (StochasticLoadBalancer)
    gives it regions by its own cost functions — metctl does not move them.
  * scale in: `drain` + `terminate` of the node with the lowest running-average CPU (ties: the
    last in snapshot order), again with no moves: draining is the data store's own unload
    (HBase's region mover / decommission), which puts the regions wherever the balancer likes.
  * while a node is booting or draining a change is still in progress: hold.

The running average is kept in `DecisionMemory.history` as ("<epoch seconds>|<node id>", cpu)
pairs — JSON-safe — and covers the snapshots whose `taken_at` lies within `tiramola_window_s`
of this one (this one included). After an action the history restarts, like MET's monitor
clearing its history after every actuation, so the new size is judged on its own samples.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from decision.arrays import current_assignment, load_ratio
from decision.health import metrics_known, unknown_active
from decision.model import (
    Action, ClusterSnapshot, DecisionMemory, Health, NodeAssignment, NodeHealth, Plan, Sizing,
    Summary,
)
from decision.policy import PolicyConfig


def tiramola_key(key: str) -> bool:
    """A history key of tiramola's running average ("<epoch seconds>|<node id>")."""
    return bool(_parse(((key, 0.0),)))


def _parse(history: tuple[tuple[str, float], ...]) -> list[tuple[float, str, float]]:
    out = []
    for key, cpu in history:
        stamp, sep, node = key.partition("|")
        try:
            out.append((float(stamp), node, float(cpu)))
        except ValueError:  # someone else's history format: ignore it, do not crash
            continue
    return out


def running_average(snapshot: ClusterSnapshot, policy: PolicyConfig,
                    memory: DecisionMemory) -> tuple[dict[str, float], tuple[tuple[str, float], ...]]:
    """Per active node the mean CPU over the window, and the history to remember."""
    now = snapshot.taken_at.timestamp()
    kept = [(t, n, c) for t, n, c in _parse(memory.history)
            if now - policy.tiramola_window_s < t < now]
    for node in snapshot.nodes:
        if node.state == "active" and node.metrics is not None and metrics_known(node):
            kept.append((now, node.id, node.metrics.cpu))
    sums: dict[str, list[float]] = {}
    for _, n, c in kept:
        sums.setdefault(n, []).append(c)
    averages = {n.id: float(np.mean(sums[n.id])) for n in snapshot.nodes
                if n.state == "active" and n.id in sums}
    history = tuple((f"{t:.3f}|{n}", c) for t, n, c in kept)
    return averages, history


def decide_tiramola(snapshot: ClusterSnapshot, policy: PolicyConfig,
                    memory: DecisionMemory) -> Plan:
    active = [n for n in snapshot.nodes if n.state == "active"]
    averages, history = running_average(snapshot, policy, memory)
    verdicts = []
    for n in snapshot.nodes:
        avg = averages.get(n.id) if n.state == "active" else None
        if not metrics_known(n):
            verdicts.append(NodeHealth(n.id, "unknown", ("no usable metrics: not decided on",)))
        elif avg is None:
            verdicts.append(NodeHealth(n.id, "healthy", (f"state {n.state}: not counted",)))
        elif avg > policy.tiramola_cpu_high:
            verdicts.append(NodeHealth(n.id, "overloaded", (
                f"running-average cpu {avg:.2f} > {policy.tiramola_cpu_high:.2f}",)))
        elif avg < policy.tiramola_cpu_low:
            verdicts.append(NodeHealth(n.id, "underloaded", (
                f"running-average cpu {avg:.2f} < {policy.tiramola_cpu_low:.2f}",)))
        else:
            verdicts.append(NodeHealth(n.id, "healthy", (f"running-average cpu {avg:.2f}",)))
    count = len(active)
    over = [n.id for n in active if averages.get(n.id, 0.0) > policy.tiramola_cpu_high]
    all_under = bool(active) and all(averages.get(n.id, 1.0) < policy.tiramola_cpu_low
                                     for n in active)
    unknown = unknown_active(snapshot.nodes)
    busy = [n.id for n in snapshot.nodes if n.state != "active"]
    health = Health(tuple(verdicts), len(over) / count if count else 0.0, all_under,
                    not over and not all_under)

    assignment = current_assignment(snapshot)
    actions: list[Action] = []
    delta, new_memory = 0, replace(memory, history=history)
    if not active:
        reason = "hold: no active node"
        new_memory = memory
    elif unknown:
        reason = f"hold: no fresh metrics for {', '.join(unknown)}"
        new_memory = memory
    elif busy:
        reason = f"hold: change in progress ({', '.join(busy)} not active)"
    elif over and count < policy.max_nodes:
        delta = 1
        actions.append(Action(op="launch", node="new-1", profile="default", cause="scale_out",
                              reason=f"running-average cpu over {policy.tiramola_cpu_high:.2f} "
                                     f"on {', '.join(over)}; HBase's balancer places regions"))
        assignment = assignment + (NodeAssignment("new-1", "default", (), 0.0),)
        reason = "tiramola: add one node"
    elif all_under and count > policy.min_nodes:
        delta = -1
        # The least busy node goes; on ties the last one listed (usually the newest).
        victim = min(reversed(active), key=lambda n: averages[n.id])
        why = f"every node's running-average cpu under {policy.tiramola_cpu_low:.2f}"
        actions += [Action(op="drain", node=victim.id, cause="scale_in",
                           reason=why + "; the data store unloads its regions itself"),
                    Action(op="terminate", node=victim.id, cause="scale_in",
                           reason=why + "; terminated once drained")]
        reason = "tiramola: remove one node"
    elif over:
        reason = f"tiramola: overloaded but already at max_nodes {policy.max_nodes}"
    elif all_under:
        reason = f"tiramola: underloaded but already at min_nodes {policy.min_nodes}"
    else:
        reason = "tiramola: within thresholds"
    if actions:
        new_memory = replace(memory, history=())
    ratio = load_ratio(np.array([a.load for a in assignment]))
    sizing = Sizing(count, count + delta, delta, memory.step, reason)
    summary = Summary(moves=0, reconfigurations=0, launches=int(delta > 0),
                      terminations=int(delta < 0), max_load_ratio=ratio)
    return Plan(policy="tiramola", health=health, sizing=sizing, groups=(),
                assignment=assignment, actions=tuple(actions), summary=summary,
                memory=new_memory, reason=reason)


__all__ = ["decide_tiramola", "running_average", "tiramola_key"]
