"""Verify after acting (`verify_after_acting`): a scale-out that did not raise the requests
served bars the next one.

A scale-out remembers the requests served before it. Once its warm-up is over (warmup_s from
the end of its plan, which the control loop records), it is judged: if the requests served rose
by less than verify_gain, or less than half the capacity it added when that is smaller (one node
more on twenty adds 5 %: a 2.5 % rise is that step paying), the cluster is client- or
partition-bound and further scale-outs are refused (`hold (no_gain)`) while the load stays
within twice that band. A predicted scale-out is not judged (its load has not come yet).
"""
from __future__ import annotations

from dataclasses import replace

from decision.policy import PolicyConfig
from decision.rules.memory import warming_up
from decision.rules.rule import Change, Context, Rule, Veto


def verify_need(policy: PolicyConfig, added: float | None) -> float:
    """The rise in requests served that says a scale-out paid: verify_gain, but never more than
    half the capacity it added (`added`: new nodes / nodes before). One node more on twenty is
    5 % more capacity: asking it for a 5 % rise would call every such step a failure."""
    return policy.verify_gain if added is None else min(policy.verify_gain, 0.5 * added)


class Verify(Rule):
    name = "verify"
    switch = "verify_after_acting"

    def observe(self, ctx: Context) -> Context:
        memory, policy, served = ctx.memory, ctx.policy, ctx.served
        out = memory.scale_out
        if policy.verify_after_acting and out is not None \
                and not warming_up(ctx.base, out.at, ctx.now, policy.warmup_s):
            paid = served >= out.requests_before * (1 + verify_need(policy, out.added))
            memory = replace(memory, scale_out=None,
                             no_gain_requests=memory.no_gain_requests if paid else served)
        # Switched on or off, a verdict is forgotten once the load moves: capacity may pay again.
        no_gain = memory.no_gain_requests
        if no_gain is not None and \
                abs(served - no_gain) > policy.verify_gain * max(no_gain, 1e-9) * 2:
            memory = replace(memory, no_gain_requests=None)
        return replace(ctx, memory=memory)

    def veto(self, ctx: Context, change: Change) -> Veto | None:
        no_gain = ctx.memory.no_gain_requests
        if change.kind != "add" or change.predicted or no_gain is None:
            return None
        if ctx.view is not None and ctx.view.short:
            return None  # never while requests queue or miss the SLO: the demand says more
        return Veto("no_gain", "the last scale-out did not raise the requests served",
                    held=f", but the last scale-out did not raise the requests served "
                    f"({no_gain:.0f}/s): client- or partition-bound, adding no more")


__all__ = ["Verify", "verify_need"]
