"""The last two rules: what happens when no rule before them acted.

    HoldOverloaded  a node is overloaded but nothing above could help (transient, within_slo,
                    hot_partition with nothing to split or move, ...): `hold (<causes>)` naming
                    up to three nodes and their diagnoses, and what earlier rules found. Sized
                    from demand, nodes over MET's marks but within their capacity at the SLO
                    hold `within_slo`, with the demand's figures.
    Settle          nothing overloaded and nothing removed: `hold (nothing_pays)`, saying why
                    scale-in did not happen; MET's step resets to 1. move_only_what_pays off:
                    MET's full re-placement at the same size instead.
"""
from __future__ import annotations

from decision.model import Plan, Sizing
from decision.rules.even import hot_nodes, normalised
from decision.rules.plans import full_replacement, hold
from decision.rules.rule import Context, Rule


class HoldOverloaded(Rule):
    name = "hold_overloaded"

    def propose(self, ctx: Context) -> Plan | None:
        overloaded = ctx.overloaded
        if not overloaded:
            return None
        within = within_capacity(ctx)
        if within is not None:
            return hold(ctx, "within_slo", "; ".join([within] + list(ctx.notes)))
        kinds = sorted({d.bottleneck for d in overloaded})
        return hold(ctx, "+".join(kinds), "; ".join(
            [f"{d.node}: {d.reason}" for d in overloaded[:3]] + list(ctx.notes)))


def within_capacity(ctx: Context) -> str | None:
    """Sized from demand, a node over MET's marks that is within its capacity at the SLO (no
    more than even_tolerance over it, its requests neither queued nor dropped nor slow) asks
    for nothing: the words that say so, naming up to three such nodes; None when one of the
    overloaded nodes is over its capacity (or without the demand view)."""
    view = ctx.view
    if view is None:
        return None
    load, _ = normalised(view)
    index = {n.node: i for i, n in enumerate(view.demands.nodes)}
    hot = set(hot_nodes(view, load, ctx.policy.even_tolerance))
    named = [(d, index[d.node]) for d in ctx.overloaded if d.node in index]
    if not named or any(i in hot for _, i in named):
        return None
    nodes = "; ".join(f"{d.node}: {d.reason}, {load[i]:.0%} of its capacity at the SLO"
                      for d, i in named[:3])
    return f"no node over its capacity at the SLO ({nodes}); {view.words()}"


class Settle(Rule):
    name = "settle"

    def propose(self, ctx: Context) -> Plan:
        if not ctx.policy.move_only_what_pays:
            sizing = Sizing(ctx.current, ctx.current, 0, 1, "no node overloaded: rebalance only")
            return full_replacement(ctx, sizing, ctx.remember(ctx.memory, 1))
        said = f" ({'; '.join(ctx.notes)})" if ctx.notes else ""
        return hold(ctx, "nothing_pays", "size unchanged and no node overloaded" + said, step=1)


__all__ = ["HoldOverloaded", "Settle"]
