"""Nodes a plan must leave alone, and per-table rules (`policy.tables`), applied to a Plan.

`keep_nodes(plan, {node: why})` removes every action that would restart (reconfigure), drain
or terminate one of those nodes, and the moves that only served to empty a node whose drain was
removed; the sizing and summary are recounted and the plan's reason says which node was kept
and why. The control loop uses it for nodes an operator protected (`metctl protect NODE`);
`decide()` uses it for nodes that hold partitions of an excluded table (`policy.tables.T.exclude`),
whose partitions are never moved. Pure: plans in, plans out.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from decision.model import ClusterSnapshot, Plan

# ops that restart, empty or remove a node
_TOUCHING = frozenset({"reconfigure", "drain", "terminate"})


def keep_nodes(plan: Plan, keep: Mapping[str, str]) -> Plan:
    """`plan` without restarts, drains and terminations of the nodes in `keep` (node -> why)."""
    if not keep or not plan.actions:
        return plan
    dropped_drains = {a.node for a in plan.actions if a.op == "drain" and a.node in keep}
    kept_actions = []
    kept_nodes: set[str] = set()
    for a in plan.actions:
        if a.op in _TOUCHING and a.node is not None and a.node in keep:
            kept_nodes.add(a.node)
            continue
        if a.op == "move" and a.source in dropped_drains:
            continue  # it only emptied a node that now stays
        kept_actions.append(a)
    if not kept_nodes:
        return plan
    dropped_terms = sum(1 for a in plan.actions if a.op == "terminate" and a.node in keep)
    actions = tuple(kept_actions)
    target = plan.sizing.target + dropped_terms
    words = "; ".join(f"kept {n} ({keep[n]})" for n in sorted(kept_nodes))
    sizing = replace(plan.sizing, target=target, delta=target - plan.sizing.current,
                     reason=f"{plan.sizing.reason}; {words}" if dropped_terms else plan.sizing.reason)
    summary = replace(plan.summary,
                      moves=sum(a.op == "move" for a in actions),
                      reconfigurations=sum(a.op == "reconfigure" for a in actions),
                      terminations=sum(a.op == "terminate" for a in actions),
                      compactions=sum(a.op == "compact" for a in actions))
    reason = f"{plan.reason}; {words}" if plan.reason else words
    return replace(plan, actions=actions, sizing=sizing, summary=summary, reason=reason)


def excluded_tables(tables: Mapping[str, object]) -> frozenset[str]:
    return frozenset(t for t, rule in tables.items() if getattr(rule, "exclude", False))


def without_tables(snapshot: ClusterSnapshot, excluded: frozenset[str]
                   ) -> tuple[ClusterSnapshot, dict[str, str]]:
    """The snapshot without the excluded tables' partitions, and the nodes holding them
    (node -> why), which the plan must keep as they are."""
    if not excluded:
        return snapshot, {}
    keep: dict[str, set[str]] = {}
    parts = []
    for p in snapshot.partitions:
        if p.table in excluded:
            if p.node:
                keep.setdefault(p.node, set()).add(p.table)
        else:
            parts.append(p)
    why = {n: "holds excluded table " + ", ".join(sorted(t)) for n, t in keep.items()}
    return replace(snapshot, partitions=tuple(parts)), why


__all__ = ["keep_nodes", "excluded_tables", "without_tables"]
