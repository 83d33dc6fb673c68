"""Operators' protection, honoured while a plan runs — even one submitted before the
protection: a protected node is never restarted (reconfigure), drained or terminated.

`ctx.protected()` (set by controller.control_plane; node -> why) is read when such a step comes
up. The step is skipped, with the why in the journal, as long as nothing irreversible has
started: a reconfigure before its restart (evacuation moves already under way finish, pending
ones are skipped), a drain before its decommission call, a terminate before its call. The
plan's own moves off a node whose drain is still to come are skipped too, so it keeps serving
(moves.py).
"""
from __future__ import annotations

from collections.abc import Callable

from actuator.executor import moves
from actuator.executor.context import Context
from actuator.executor.step import Step


def protected_why(ctx: Context, node: str | None) -> str | None:
    return ctx.protected().get(node) if node else None


def skip_protected(ctx: Context, step: Step, now: float) -> bool:
    """True when `step` is (being) skipped because its node is protected."""
    why = protected_why(ctx, step.node)
    if why is None:
        return False
    if step.op == "reconfigure" and (step.sub_state or "evacuate") != "evacuate":
        return False
    if step.op == "drain" and step.sub_state == "decommission" and step.called:
        return False
    if step.op == "terminate" and step.called:
        return False
    for c in ctx.children(step):
        if c.state == "pending":
            ctx.set_step(c, now, state="skipped", finished_at=now, note=f"protected: {why}")
    running = [c for c in ctx.children(step) if not c.finished]
    if running:  # moves already under way end where they are going
        moves.advance(ctx, running, now)
        return True
    ctx.set_step(step, now, state="skipped", finished_at=now, sub_state=None,
                 note=f"protected: {why}", level="warning",
                 event=f"{step.describe()} skipped: {step.node} is protected ({why})")
    return True


def one_node_at_a_time(ctx: Context, op: str, now: float, tick_one: Callable[[Step], None], *,
                       waits: Callable[[Step], bool] | None = None) -> bool:
    """The skeleton of a phase that works on one node at a time (reconfigure, drain): the first
    unfinished step is ticked (unless its node is protected, or `waits` says it must wait),
    the ones after it wait for it. True once every step of `op` is finished."""
    for step in ctx.of(op):
        if step.finished:
            continue
        if skip_protected(ctx, step, now):
            if not step.finished:
                return False
            continue
        if waits is not None and waits(step):
            return False
        tick_one(step)
        return False
    return True
