"""Bounds (always on): the safety rules every later rule is held to.

Proposes nothing; refuses a change that breaks a bound: a node added at or above max_nodes, a
node removed while any node is overloaded (with scale_in_while_within_slo, busy nodes that still
serve in time excepted), more than one node removed in one decision. (A
cluster above max_nodes is never shrunk *because* it is above: scale-in removes one node at a
time, and only with room for its load.)
"""
from __future__ import annotations

from decision.rules.rule import Change, Context, Rule, Veto


def forbid_removal(ctx: Context) -> tuple[str, ...]:
    """The overloaded nodes that forbid removing one: every one, or with
    scale_in_while_within_slo those not serving their requests in time (a busy node that still
    answers in time is the last to take a removed node's load: scale-in places it on the least
    utilised first)."""
    keep_busy = ctx.policy.scale_in_while_within_slo
    return tuple(d.node for d in ctx.overloaded if not (keep_busy and d.bottleneck == "within_slo"))


class Bounds(Rule):
    name = "bounds"

    def veto(self, ctx: Context, change: Change) -> Veto | None:
        policy, current = ctx.policy, ctx.current
        if change.kind == "add" and current >= policy.max_nodes:
            return Veto("bounds", f"{current} active nodes >= max_nodes {policy.max_nodes}",
                        held=f" but {current} active nodes >= max_nodes {policy.max_nodes}")
        short = ctx.view.short if ctx.view is not None else forbid_removal(ctx)
        if change.kind == "remove" and short:
            return Veto("bounds", f"not scaling in: {len(short)} node(s) overloaded")
        if change.kind == "remove" and change.nodes > 1 and ctx.view is None:
            return Veto("bounds", f"not scaling in by {change.nodes} nodes: at most one a "
                        "decision")
        return None


__all__ = ["Bounds", "forbid_removal"]
