"""The last two rules: what happens when no rule before them acted.

    HoldOverloaded  a node is overloaded but nothing above could help (transient, within_slo,
                    hot_partition with nothing to split or move, ...): `hold (<causes>)` naming
                    up to three nodes and their diagnoses, and what earlier rules found.
    Settle          nothing overloaded and nothing removed: `hold (nothing_pays)`, saying why
                    scale-in did not happen; MET's step resets to 1. move_only_what_pays off:
                    MET's full re-placement at the same size instead.
"""
from __future__ import annotations

from decision.model import Plan, Sizing
from decision.rules.plans import full_replacement, hold
from decision.rules.rule import Context, Rule


class HoldOverloaded(Rule):
    name = "hold_overloaded"

    def propose(self, ctx: Context) -> Plan | None:
        overloaded = ctx.overloaded
        if not overloaded:
            return None
        kinds = sorted({d.bottleneck for d in overloaded})
        return hold(ctx, "+".join(kinds), "; ".join(
            [f"{d.node}: {d.reason}" for d in overloaded[:3]] + list(ctx.notes)))


class Settle(Rule):
    name = "settle"

    def propose(self, ctx: Context) -> Plan:
        if not ctx.policy.move_only_what_pays:
            sizing = Sizing(ctx.current, ctx.current, 0, 1, "no node overloaded: rebalance only")
            return full_replacement(ctx, sizing, ctx.remember(ctx.memory, 1))
        said = f" ({'; '.join(ctx.notes)})" if ctx.notes else ""
        return hold(ctx, "nothing_pays", "size unchanged and no node overloaded" + said, step=1)


__all__ = ["HoldOverloaded", "Settle"]
