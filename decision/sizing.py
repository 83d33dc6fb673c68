"""Stage B — how many nodes to add or remove: MET Algorithm 1, made explicit.

    if suboptimal > suboptimal_threshold:   delta = +step; step *= 2
    elif this is the first decision here:   delta = 0   (the initial reconfiguration)
    elif remove:                            delta = -1; step = 1
    elif any node is overloaded:            delta = +step; step *= 2
    else:                                   delta = 0   (rebalance only)

The result is bounded by min_nodes/max_nodes; `step` never grows past max_nodes (doubling
beyond the largest cluster would only overflow). A healthy cluster never reaches Stage B; the
caller resets `step` to 1 then (see `healthy_sizing`).
"""
from __future__ import annotations

from dataclasses import replace

from decision.model import DecisionMemory, Health, Sizing
from decision.policy import PolicyConfig


def _bounded(current: int, delta: int, policy: PolicyConfig) -> int:
    """current + delta within min_nodes/max_nodes, with two safety rules: a cluster is never
    shrunk because it is above max_nodes (it holds, or loses the one node its delta asks for
    when that is a scale-in), and never by more than one node per decision."""
    target = min(max(current + delta, policy.min_nodes), policy.max_nodes)
    if target < current:
        target = current - 1 if delta < 0 else current
    return target


def size_cluster(health: Health, current: int, policy: PolicyConfig,
                 memory: DecisionMemory) -> tuple[Sizing, DecisionMemory]:
    """Algorithm 1 on an unhealthy cluster of `current` active nodes."""
    step = max(1, memory.step)
    overloaded = health.suboptimal > 0  # suboptimal = overloaded active nodes / active nodes
    if health.suboptimal > policy.suboptimal_threshold:
        wanted, next_step = step, step * 2
        why = (f"suboptimal {health.suboptimal:.2f} > {policy.suboptimal_threshold:.2f}: "
               f"add {step}")
    elif not memory.first_decision_done:
        wanted, next_step = 0, step
        why = "first decision: initial reconfiguration, size unchanged"
    elif health.remove:
        wanted, next_step = -1, 1
        why = "underloaded: remove 1, step reset to 1"
    elif overloaded:
        wanted, next_step = step, step * 2
        why = f"{health.suboptimal:.2f} of nodes overloaded: add {step}"
    else:
        wanted, next_step = 0, step
        why = "no scale decision: rebalance and reconfigure only"
    target = _bounded(current, wanted, policy)
    if target != current + wanted:
        why += f" (bounded to {target} by min_nodes {policy.min_nodes} / max_nodes " \
               f"{policy.max_nodes}" + ("; never shrunk because above max_nodes, at most one " \
               "node removed a decision)" if current > policy.max_nodes else ")")
    next_step = min(next_step, policy.max_nodes)
    sizing = Sizing(current=current, target=target, delta=target - current, step=next_step,
                    reason=why)
    return sizing, replace(memory, step=next_step, first_decision_done=True)


def healthy_sizing(current: int, memory: DecisionMemory) -> tuple[Sizing, DecisionMemory]:
    """A healthy cluster: size unchanged and `step` back to 1 (first_decision_done kept)."""
    return (Sizing(current, current, 0, 1, "cluster healthy: nothing to do, step reset to 1"),
            replace(memory, step=1))


__all__ = ["size_cluster", "healthy_sizing"]
