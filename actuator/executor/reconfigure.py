"""Phase reconfigure, one node at a time: move its partitions to nodes not yet reconfigured
(evacuate), restart it with the new profile (restart), bring its target partitions to it (fill).
It also runs alongside the launch phase: a node none of whose partitions is headed for a new
node not registered yet starts while the new VMs boot (ready.py)."""
from __future__ import annotations

from actuator.drivers import DriverError
from actuator.executor import moves, protection, ready
from actuator.executor.context import Context, StopPlan, age
from actuator.executor.states import limit_s
from actuator.executor.step import Step


def tick(ctx: Context, now: float) -> bool:
    # a pending reconfigure waits for a launch (ready.py); the ones after it wait for it
    return protection.one_node_at_a_time(
        ctx, "reconfigure", now, lambda step: _tick_reconfigure(ctx, step, now),
        waits=lambda step: step.state == "pending" and not ready.ready(ctx, step))


def _tick_reconfigure(ctx: Context, step: Step, now: float) -> None:
    s, obs, node = ctx.settings, ctx.obs, step.need("node")
    sub = step.sub_state or "evacuate"
    if sub == "evacuate":
        on_node = obs.on(node)
        covered = {c.partition for c in ctx.children(step) if c.cause == "evacuate" and not c.finished}
        missing = [p for p in on_node if p not in covered]
        if missing:
            if step.attempts >= s.datastore_attempts and step.sub_state == "evacuate":
                raise StopPlan(f"reconfigure {node}: partitions keep returning to it ({', '.join(missing)})")
            new, idx = [], ctx.next_idx()
            for p in missing:
                dest = ctx.pick_destination(p, node, prefer_unreconfigured=True)
                if dest is None:
                    continue
                new.append(Step(idx=idx, op="move", parent=step.idx, partition=p, source=node, target=dest,
                                cause="evacuate", reason=f"evacuate {node} before its restart"))
                idx += 1
            if new:
                ctx.add_steps(now, step, new, {"sub_state": "evacuate", "state": "running",
                                                 "attempts": step.attempts + 1,
                                                 "started_at": step.started_at or now, "since": now},
                                event=f"evacuating {len(new)} partitions from {node}")
        elif step.state == "pending":
            ctx.set_step(step, now, state="running", sub_state="evacuate", started_at=now, since=now)
        children = [c for c in ctx.children(step) if c.cause == "evacuate"]
        moves.advance(ctx, children, now)
        nowhere = all(ctx.pick_destination(p, node, True) is None for p in obs.on(node))
        if all(c.finished for c in children) and (not obs.on(node) or nowhere):
            note = None if obs.on(node) == [] else "no other server: restarting with its partitions"
            ctx.set_step(step, now, sub_state="restart", called=0, since=now, note=note, attempts=0,
                      event=f"{node} evacuated; restarting with profile {step.profile}")
            sub = "restart"
        else:
            return
    if sub == "restart":
        server = obs.servers.get(node)
        if server is not None and server.state == "active" and server.profile == step.profile:
            _enter_fill(ctx, step, now)
            return
        if not step.called:
            if server is not None and server.state == "active":
                if step.next_try_at is not None and now < step.next_try_at:
                    return
                try:
                    ctx.ds.restart_server(node, step.profile or "default")
                except DriverError as err:
                    ctx.retry_or_stop(step, now, f"restart of {node} failed: {err}", err.retryable)
                    return
            ctx.set_step(step, now, called=1, since=step.since if step.since is not None else now,
                      event=f"restart of {node} with profile {step.profile} requested")
            return
        if age(step, now) > (limit := limit_s(s, "reconfigure", "restart")):
            ctx.retry_or_stop(step, now, f"{node} not active with profile {step.profile} after "
                                           f"{limit:g} s")
        return
    if sub == "fill":
        fill = [c for c in ctx.children(step) if c.cause == "refill"]
        fill += [m for m in ctx.of("move") if ctx.resolve(m.target) == node]
        moves.advance(ctx, fill, now)
        if all(m.finished for m in fill):
            ctx.set_step(step, now, state="done", sub_state=None, finished_at=now, error=None,
                      event=f"{node} reconfigured to {step.profile}")


def _enter_fill(ctx: Context, step: Step, now: float) -> None:
    node = step.need("node")
    planned = {m.partition for m in ctx.of("move") if ctx.resolve(m.target) == node}
    wanted = [p for p in ctx.assignment.get(node, ()) if p not in planned and p in ctx.obs.parts
              and ctx.obs.parts[p].server != node]
    idx = ctx.next_idx()
    new = [Step(idx=idx + i, op="move", parent=step.idx, partition=p, source=ctx.obs.parts[p].server,
                target=node, cause="refill", reason=f"back to {node} after its reconfiguration")
           for i, p in enumerate(wanted)]
    ctx.add_steps(now, step, new, {"sub_state": "fill", "since": now, "called": 0},
                    event=f"{node} runs {step.profile}; bringing its partitions to it")
