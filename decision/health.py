"""Stage A — node health: a verdict with reasons per node, the cluster's `suboptimal` fraction
and whether it may shrink by one node (`remove`).

Only `active` nodes count. `booting` and `draining` nodes are reported (with their verdict when
they have metrics) but never counted in `suboptimal`/`remove` nor planned onto: a booting node
does not serve yet and a draining one is on its way out. A node without metrics is `unknown`;
the core never decides on guessed numbers (see `Health.unknown_active`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from decision.model import Health, Node, NodeHealth
from decision.policy import PolicyConfig


def metrics_known(node: Node) -> bool:
    """A node's metrics can be decided on: present and finite (NaN is no measurement)."""
    m = node.metrics
    return m is not None and all(math.isfinite(x) for x in (m.cpu, m.io_wait, m.memory))


def node_verdict(node: Node, policy: PolicyConfig) -> NodeHealth:
    """One node's verdict with the reasons behind it."""
    note = () if node.state == "active" else (
        f"state {node.state}: reported, not counted in sizing or placement",)
    m = node.metrics
    if m is None:
        return NodeHealth(node.id, "unknown", ("no fresh metrics: not decided on",) + note)
    if not metrics_known(node):
        return NodeHealth(node.id, "unknown", ("metrics not finite: not decided on",) + note)
    over: list[str] = []
    if m.cpu >= policy.cpu_high:
        over.append(f"cpu {m.cpu:.2f} >= cpu_high {policy.cpu_high:.2f}")
    if m.io_wait >= policy.io_wait_high:
        over.append(f"io_wait {m.io_wait:.2f} >= io_wait_high {policy.io_wait_high:.2f}")
    if m.memory >= policy.memory_high:
        over.append(f"memory {m.memory:.2f} >= memory_high {policy.memory_high:.2f}")
    if over:
        return NodeHealth(node.id, "overloaded", tuple(over) + note)
    if m.cpu <= policy.cpu_low and m.io_wait <= policy.io_wait_low:
        return NodeHealth(node.id, "underloaded", (
            f"cpu {m.cpu:.2f} <= cpu_low {policy.cpu_low:.2f} and io_wait {m.io_wait:.2f} "
            f"<= io_wait_low {policy.io_wait_low:.2f}",) + note)
    return NodeHealth(node.id, "healthy", (
        f"cpu {m.cpu:.2f}, io_wait {m.io_wait:.2f}, memory {m.memory:.2f} within thresholds",)
        + note)


def assess_health(nodes: Sequence[Node], policy: PolicyConfig) -> Health:
    """Stage A over all nodes of a snapshot (only active ones are counted)."""
    verdicts = tuple(node_verdict(n, policy) for n in nodes)
    active = [(n, v) for n, v in zip(nodes, verdicts) if n.state == "active"]
    unknown = [n.id for n, v in active if v.verdict == "unknown"]
    if not active:
        return Health(verdicts, 0.0, False, False, "no active node: nothing to decide on")
    if unknown:
        return Health(verdicts, 0.0, False, False,
                      f"no fresh metrics for {len(unknown)} active node(s) "
                      f"({', '.join(unknown[:5])}{', ...' if len(unknown) > 5 else ''})")
    n = len(active)
    overloaded = sum(v.verdict == "overloaded" for _, v in active)
    underloaded = sum(v.verdict == "underloaded" for _, v in active)
    suboptimal = overloaded / n
    # Scale-in only when the load of the remaining nodes stays comfortably under cpu_high.
    cpu_total = sum(node.metrics.cpu for node, _ in active if node.metrics is not None)
    spread = cpu_total / (n - 1) if n > 1 else float("inf")
    remove = (overloaded == 0 and n > 1 and underloaded >= policy.remove_fraction * n
              and spread < policy.cpu_high * policy.scale_in_headroom)
    healthy = overloaded == 0 and underloaded == 0
    if healthy:
        reason = f"all {n} active nodes healthy"
    else:
        reason = (f"{overloaded} of {n} active nodes overloaded, {underloaded} underloaded; "
                  f"mean cpu over {n - 1} nodes would be "
                  f"{'n/a' if n == 1 else f'{spread:.2f}'}")
    return Health(verdicts, suboptimal, remove, healthy, reason)


def unknown_active(nodes: Sequence[Node]) -> list[str]:
    """Ids of active nodes without usable metrics: any one of them makes the core hold."""
    return [n.id for n in nodes if n.state == "active" and not metrics_known(n)]


__all__ = ["metrics_known", "node_verdict", "assess_health", "unknown_active"]
