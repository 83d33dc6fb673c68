"""Phase split: each hot partition the plan splits, one at a time a server (a split flushes
and reopens the region). A split is done when the store no longer lists the partition and
lists more partitions of its table than when the split was issued; the count at issue is kept
in the step's token, so a restarted controller judges the same way. Splits run alongside the
launch phase: a split starts once no reconfigure is left to finish (ready.py)."""
from __future__ import annotations

from collections import Counter

from actuator.drivers import DriverError
from actuator.executor import ready
from actuator.executor.context import Context, age
from actuator.executor.states import limit_s
from actuator.executor.step import Step


def tick(ctx: Context, now: float) -> bool:
    steps = ctx.of("split")
    if not steps:
        return True  # most plans: no partitions() call, no count over every partition
    parts = ctx.obs.parts
    per_table = Counter(p.table for p in parts.values())
    for sp in steps:
        if sp.state != "running":
            continue
        before = int(sp.token or 0)
        if sp.partition not in parts:
            if per_table[sp.source or ""] > before:
                ctx.set_step(sp, now, state="done", finished_at=now, error=None)
            elif age(sp, now) > (limit := limit_s(ctx.settings, "split", sp.state)):
                ctx.requeue_or_stop(sp, now, f"{sp.partition} gone but its daughters not listed "
                                             f"after {limit:g} s")
        elif not sp.called:
            _issue(ctx, sp, now)
        elif age(sp, now) > (limit := limit_s(ctx.settings, "split", sp.state)):
            ctx.requeue_or_stop(sp, now, f"{sp.partition} still not split after {limit:g} s")
    busy = {sp.node for sp in steps if sp.state == "running"}
    for sp in steps:
        if sp.state != "pending" or sp.node in busy:
            continue
        if sp.next_try_at is not None and now < sp.next_try_at:
            continue
        if not ready.ready(ctx, sp):
            continue
        loc = parts.get(sp.need("partition"))
        if loc is None:
            ctx.set_step(sp, now, state="skipped", finished_at=now,
                         note="partition no longer listed (split or gone already)")
            continue
        # source: the partition's table (the daughters are counted there)
        ctx.set_step(sp, now, state="running", attempts=sp.attempts + 1, called=0, since=now,
                     started_at=sp.started_at or now, source=loc.table,
                     token=str(per_table[loc.table]))
        _issue(ctx, sp, now)
        busy.add(sp.node)
    return all(sp.finished for sp in steps)


def _issue(ctx: Context, sp: Step, now: float) -> None:
    try:
        ctx.ds.split_partition(sp.need("partition"))
    except DriverError as err:
        if not err.retryable:
            # A split is an optimisation: a region the store will not split stays whole and
            # the plan goes on (every partition is still served).
            ctx.set_step(sp, now, state="skipped", finished_at=now, note=f"not split: {err}",
                         event=f"split {sp.partition} refused by the store: {err}", level="error")
            return
        ctx.requeue_or_stop(sp, now, f"split {sp.partition} failed: {err}", True)
        return
    ctx.set_step(sp, now, called=1)
