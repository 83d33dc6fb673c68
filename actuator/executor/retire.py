"""Phases after the commit point: compact (restore locality), drain (move what is left off
each removed node, then decommission its server), terminate (never a node serving partitions,
never one metctl does not own) and finish (restore the balancer)."""
from __future__ import annotations

from actuator.drivers import DriverError, NotOwnedError
from actuator.executor import moves, protection
from actuator.executor.context import Context, StopPlan, age, log
from actuator.executor.states import limit_s
from actuator.executor.step import Step


def tick_compact(ctx: Context, now: float) -> bool:
    s, parts = ctx.settings, ctx.obs.parts
    steps = ctx.of("compact")
    running = [c for c in steps if c.state == "running"]
    for c in running:
        if c.partition not in parts:
            ctx.set_step(c, now, state="skipped", finished_at=now, note="partition no longer exists")
            continue
        busy = ctx.ds.compaction_running(c.partition)
        if not c.called:
            if busy:
                ctx.set_step(c, now, called=1)
                continue
            _issue_compact(ctx, c, now)
        elif not busy and (c.since is None or now > c.since):
            ctx.set_step(c, now, state="done", finished_at=now, error=None)
        elif busy and age(c, now) > (limit := limit_s(s, "compact", c.state)):
            ctx.requeue_or_stop(c, now, f"compaction of {c.partition} still running after "
                                        f"{limit:g} s")
    n_running = sum(1 for c in steps if c.state == "running")
    for c in steps:
        if c.state != "pending" or n_running >= s.max_concurrent_compactions:
            continue
        if c.next_try_at is not None and now < c.next_try_at:
            continue
        if c.partition not in parts:
            ctx.set_step(c, now, state="skipped", finished_at=now, note="partition no longer exists")
            continue
        ctx.set_step(c, now, state="running", attempts=c.attempts + 1, called=0, since=now, started_at=now)
        _issue_compact(ctx, c, now)
        n_running += 1
    return all(c.finished for c in steps)


def _issue_compact(ctx: Context, c: Step, now: float) -> None:
    try:
        ctx.ds.compact(c.need("partition"))
    except DriverError as err:
        ctx.requeue_or_stop(c, now, f"compaction of {c.partition} failed: {err}", err.retryable)
        return
    ctx.set_step(c, now, called=1, since=now)


def tick_drain(ctx: Context, now: float) -> bool:
    return protection.one_node_at_a_time(ctx, "drain", now, lambda step: _tick_drain(ctx, step, now))


def _tick_drain(ctx: Context, step: Step, now: float) -> None:
    s, obs, node = ctx.settings, ctx.obs, step.need("node")
    server = obs.servers.get(node)
    if server is None or server.state == "stopped":
        ctx.set_step(step, now, state="done", finished_at=now, sub_state=None, error=None,
                  event=f"{node} decommissioned")
        return
    if step.sub_state in (None, "evacuate"):
        on_node = obs.on(node)
        children = [c for c in ctx.children(step)]
        covered = {c.partition for c in children if not c.finished}
        missing = [p for p in on_node if p not in covered]
        if missing:
            if step.attempts >= s.datastore_attempts:
                raise StopPlan(f"drain {node}: partitions keep returning to it")
            idx, new = ctx.next_idx(), []
            for p in missing:
                dest = ctx.pick_destination(p, node, prefer_unreconfigured=False)
                if dest is None:
                    raise StopPlan(f"drain {node}: no other server to take {p}")
                new.append(Step(idx=idx, op="move", parent=step.idx, partition=p, source=node, target=dest,
                                cause="drain", reason=f"drain {node}"))
                idx += 1
            ctx.add_steps(now, step, new, {"state": "running", "sub_state": "evacuate",
                                             "attempts": step.attempts + 1, "since": now,
                                             "started_at": step.started_at or now},
                            event=f"draining {len(new)} partitions left on {node}")
        moves.advance(ctx, ctx.children(step), now)
        if any(not c.finished for c in ctx.children(step)) or obs.on(node):
            return
        ctx.set_step(step, now, state="running", sub_state="decommission", called=0, since=now,
                  started_at=step.started_at or now)
    if step.sub_state == "decommission":
        if obs.on(node):  # something landed on it: never stop a serving server
            ctx.set_step(step, now, sub_state="evacuate")
            return
        if not step.called:
            if step.next_try_at is not None and now < step.next_try_at:
                return
            try:
                ctx.ds.decommission(node)
            except DriverError as err:
                ctx.retry_or_stop(step, now, f"decommission of {node} failed: {err}", err.retryable)
                return
            ctx.set_step(step, now, called=1, since=now, event=f"decommission of {node} requested")
        elif age(step, now) > (limit := limit_s(s, "drain", "decommission")):
            ctx.retry_or_stop(step, now, f"{node} still up {limit:g} s after decommission")


def tick_terminate(ctx: Context, now: float) -> bool:
    s, obs = ctx.settings, ctx.obs
    for step in ctx.of("terminate"):
        if step.finished:
            continue
        if protection.skip_protected(ctx, step, now):
            continue
        node = obs.nodes.get(step.instance_id) if step.instance_id is not None else None
        if node is None or node.state in ("terminated", "stopping"):
            ctx.set_step(step, now, state="done", finished_at=now, error=None,
                      event=f"{step.node} (instance {step.instance_id}) terminated")
            continue
        serving = obs.on(step.need("node"))
        if serving:
            raise StopPlan(f"refusing to terminate {step.node}: it still serves {len(serving)} partitions")
        if step.state == "pending" or not step.called:
            if step.next_try_at is not None and now < step.next_try_at:
                continue
            if step.state == "pending":
                ctx.set_step(step, now, state="running", attempts=step.attempts + 1, called=0, since=now,
                          started_at=now)
            try:
                ctx.infra.terminate(step.need("instance_id"))
            except NotOwnedError:
                raise
            except DriverError as err:
                ctx.retry_or_stop(step, now, f"terminate {step.instance_id} failed: {err}", err.retryable)
                continue
            ctx.set_step(step, now, called=1, since=now, event=f"terminate {step.instance_id} requested")
        elif age(step, now) > (limit := limit_s(s, "terminate", step.state)):
            ctx.retry_or_stop(step, now, f"{step.instance_id} not gone {limit:g} s "
                                           "after terminate")
    return all(st.finished for st in ctx.of("terminate"))


def tick_finish(ctx: Context, now: float) -> bool:
    ctx.restore_balancer(now)
    ctx.set_plan(now, state="done", event="plan done")
    log.info("plan %s done", ctx.plan_id)
    return True
