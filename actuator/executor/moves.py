"""Phases move, verify and committed, and the move engine every phase uses: observe running
moves first, then start pending ones within the throttle (max_concurrent_moves), the
incremental rule (toward a new node, one source node at a time) and, in a scale-in, the pace
of one table's moves (scale_in_move_gap_s). The move phase also runs
alongside launch, reconfigure and split: a plan move whose dependencies are done (ready.py: its
target registered, neither end reconfiguring, its partition not splitting) starts at once."""
from __future__ import annotations

from typing import Any

from actuator.drivers import DriverError, PartitionLocation
from actuator.executor import ready
from actuator.executor.context import Context, StopPlan, age
from actuator.executor.states import timeout_s
from actuator.executor.step import Step


def tick_move(ctx: Context, now: float) -> bool:
    skip_moves_off_protected(ctx, now)
    # A running move is not ready only while a reconfigure's fill carries it (its target is
    # being reconfigured): that reconfigure observes it, not this phase.
    moves = [m for m in ctx.of("move") if m.state in ("pending", "running") and ready.ready(ctx, m)]
    advance(ctx, moves, now)
    return all(m.finished for m in ctx.of("move"))


def skip_moves_off_protected(ctx: Context, now: float) -> None:
    """Pending plan moves off a node whose drain is still to come, when an operator protects
    that node: it keeps serving them (protection.py)."""
    draining = {d.node for d in ctx.of("drain") if not d.finished}
    for m in ctx.of("move"):
        if m.state == "pending" and m.source in draining:
            why = ctx.protected().get(m.source) if m.source else None
            if why is not None:
                ctx.set_step(m, now, state="skipped", finished_at=now, note=f"protected: {why}")


def tick_verify(ctx: Context, now: float) -> bool:
    parts = ctx.obs.parts
    reopened = 0
    # a partition moved twice (an extension moved it on from where it landed) is checked
    # against its last move only
    last = {m.partition: m.idx for m in ctx.of("move")}
    for m in ctx.of("move"):
        if m.state != "done" or last[m.partition] != m.idx:
            continue
        dest = ctx.resolve(m.target)
        loc = parts.get(m.need("partition"))
        if loc is not None and loc.server != dest:
            if m.attempts >= ctx.settings.datastore_attempts:
                raise StopPlan(f"{m.describe()}: the data store keeps moving it away (now on {loc.server})")
            ctx.set_step(m, now, state="pending", called=0, note="moved back by the data store",
                      event=f"{m.partition} found on {loc.server}, not {dest}: moving it again", level="error")
            reopened += 1
    if reopened:
        ctx.set_plan(now, phase="move", event=f"verify: {reopened} moves undone by the data store")
        return False
    return True


def tick_commit(ctx: Context, now: float) -> bool:
    if not ctx.plan_row["committed"]:
        ctx.set_plan(now, committed=1, event="COMMIT: the new layout is in effect")
    return True


def settle(ctx: Context, m: Step, now: float, **landed: Any) -> tuple[str, PartitionLocation] | None:
    """Observe one move (running, or pending about to start): it is finished when its
    partition no longer exists (skipped) or is on its destination (done, with `landed` written
    to the journal); else its destination and where its partition is now. None also while its
    destination is a new node not launched yet (nothing to move to)."""
    dest = ctx.resolve(m.target)
    loc = ctx.obs.parts.get(m.need("partition"))
    if dest is None:
        return None
    if loc is None:
        ctx.set_step(m, now, state="skipped", finished_at=now, note="partition no longer exists")
        return None
    if loc.server == dest:
        ctx.set_step(m, now, state="done", finished_at=now, **landed)
        return None
    return dest, loc


def advance(ctx: Context, moves: list[Step], now: float) -> None:
    """Observe running moves; start pending ones within the throttle and the incremental rule."""
    s = ctx.settings
    for m in moves:
        if m.state != "running" or (seen := settle(ctx, m, now, error=None)) is None:
            continue
        dest, loc = seen
        if not m.called and loc.server is None:
            ctx.set_step(m, now, called=1)  # already in transition: our call went out before a restart
        elif not m.called:
            _issue_move(ctx, m, dest, now)
        elif age(m, now) > (limit := move_limit_s(s, m, loc.size_mb)):
            ctx.requeue_or_stop(m, now, f"{m.partition} not on {dest} after {limit:g} s "
                                          f"(on {loc.server})")
    in_flight = [m for m in ctx.of("move", plan_only=False) if m.state == "running"]
    new_servers = ctx.new_servers()
    # Incremental elasticity: toward a new node, only one source node sends at a time.
    sending: dict[str, str] = {}
    for m in in_flight:
        going = ctx.resolve(m.target)
        if going is not None and going in new_servers and s.incremental_transfer:
            sending[going] = m.source or ""
    pace = ScaleInPace.of(ctx, s.scale_in_move_gap_s) if s.scale_in_move_gap_s > 0 and is_scale_in(ctx) else None
    pending = [m for m in moves if m.state == "pending"]
    pending.sort(key=lambda m: (ctx.resolve(m.target) or "", m.source or "", m.idx))
    for m in pending:
        if len(in_flight) >= s.max_concurrent_moves:
            break
        if m.next_try_at is not None and now < m.next_try_at:
            continue
        if pace is not None and not pace.may_start(ctx, m, now):
            continue
        if (seen := settle(ctx, m, now, note="already in place")) is None:
            continue
        dest, loc = seen
        src = loc.server or m.source or ""
        if dest in new_servers and s.incremental_transfer and sending.get(dest, src) != src:
            continue
        if src != m.source:
            m.source = src
        ctx.set_step(m, now, state="running", attempts=m.attempts + 1, called=0, since=now,
                  started_at=m.started_at or now, source=src)
        _issue_move(ctx, m, dest, now)
        if m.state == "running":
            in_flight.append(m)
            if pace is not None:
                pace.started(ctx, m, now)
            if dest in new_servers and s.incremental_transfer:
                sending[dest] = src


def is_scale_in(ctx: Context) -> bool:
    """A plan that removes nodes and launches none: it starts only while every tenant is
    inside its SLO, so holding its moves back delays no relief while it runs (a scale-out,
    though, waits for it to end)."""
    return bool(ctx.leaving()) and not ctx.launch_steps()


class ScaleInPace:
    """One table's scale-in moves start one at a time, gap_s apart; other tables' meanwhile.
    A region is offline ~1.1 s while it moves: two of a tenant's regions moving together or
    back to back put both outages in the same 10-s SLO window (docs/policy.md, "A scale-in
    paced per table")."""

    def __init__(self, gap_s: float, moving: set[str], last_start: dict[str, float]):
        self.gap_s = gap_s
        self.moving = moving
        self.last_start = last_start

    @classmethod
    def of(cls, ctx: Context, gap_s: float) -> "ScaleInPace":
        moving: set[str] = set()
        last_start: dict[str, float] = {}
        for m in ctx.of("move"):
            table = _table(ctx, m)
            if table is None or m.state not in ("running", "done") or m.since is None:
                continue
            if m.state == "running":
                moving.add(table)
            last_start[table] = max(last_start.get(table, m.since), m.since)
        return cls(gap_s, moving, last_start)

    def may_start(self, ctx: Context, m: Step, now: float) -> bool:
        table = _table(ctx, m)
        if table is None:
            return True
        last = self.last_start.get(table)
        return table not in self.moving and (last is None or now - last >= self.gap_s)

    def started(self, ctx: Context, m: Step, now: float) -> None:
        if (table := _table(ctx, m)) is not None:
            self.moving.add(table)
            self.last_start[table] = now


def _table(ctx: Context, m: Step) -> str | None:
    loc = ctx.obs.parts.get(m.partition or "")
    return loc.table if loc is not None else None


def move_limit_s(settings, m: Step, size_mb: float | None) -> float:
    """How long a running move may take: the table's move timeout, plus, when the store copies
    data and says how much, the time its data needs at move_mb_s behind as many copies as may
    run at once (a node receives them one after another)."""
    limit = timeout_s(settings, "move", m.state) or 0.0
    if not size_mb:
        return limit
    return limit + size_mb * settings.max_concurrent_moves / settings.move_mb_s


def _issue_move(ctx: Context, m: Step, dest: str, now: float) -> None:
    try:
        ctx.ds.move_partition(m.need("partition"), dest)
    except DriverError as err:
        ctx.requeue_or_stop(m, now, f"move {m.partition} -> {dest} failed: {err}", err.retryable)
        return
    ctx.set_step(m, now, called=1)
