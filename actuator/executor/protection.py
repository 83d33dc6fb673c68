"""Operators' protection, honoured while a plan runs — even one submitted before the
protection: a protected node is never restarted (reconfigure), drained or terminated.

`ctx.protected()` (set by controller.control_plane; node -> why) is read when such a step comes
up. The step is skipped, with the why in the journal, as long as nothing irreversible has
started: a reconfigure before its restart (evacuation moves already under way finish, pending
ones are skipped), a drain before its decommission call, a terminate before its call. The
plan's own moves off a node whose drain is still to come are skipped too, so it keeps serving.
"""
from __future__ import annotations

from actuator.executor.context import Context
from actuator.executor.step import Step


def protected_why(ctx: Context, node: str | None) -> str | None:
    return ctx.protected().get(node) if node else None


def skip_protected(ctx: Context, step: Step, now: float) -> bool:
    """True when `step` is (being) skipped because its node is protected."""
    from actuator.executor import moves

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


def skip_moves_off_protected(ctx: Context, now: float) -> None:
    """Pending plan moves off a node whose drain is still to come, when that node is protected."""
    draining = {d.node for d in ctx.of("drain") if not d.finished}
    for m in ctx.of("move"):
        if m.state == "pending" and m.source in draining:
            why = protected_why(ctx, m.source)
            if why is not None:
                ctx.set_step(m, now, state="skipped", finished_at=now, note=f"protected: {why}")
