"""Rolling a plan back (plan state abandoning): move partitions off the nodes this plan
launched (back where they were), then terminate those nodes, then restore the balancer."""
from __future__ import annotations

from actuator.drivers import DriverError
from actuator.executor import moves
from actuator.executor.context import Context
from actuator.executor.step import Step


def tick(ctx: Context, now: float) -> None:
    """Roll back: move partitions off the nodes this plan launched (back where they were),
    then terminate those nodes; restore the balancer."""
    obs = ctx.obs
    layout: dict[str, str | None] = ctx.plan_row.get("layout") or {}
    landing = _settle_running_moves(ctx, now)
    remaining = False
    for step in ctx.launch_steps():
        node = obs.nodes.get(step.instance_id) if step.instance_id else ctx.find_by_token(step.token)
        if node is None or node.state in ("terminated", "stopping"):
            if step.state not in ("failed", "cancelled", "rolled_back"):
                ctx.set_step(step, now, state="rolled_back", sub_state=None, note="terminated by the rollback")
            continue
        remaining = True
        server = next((sv.id for sv in obs.servers.values() if node.address and sv.host == node.address), None)
        if server is not None and server in landing:
            continue  # a move toward it is still in flight: let it land, then move it back
        serving = obs.on(server) if server else []
        if server is not None and serving:
            back = [c for c in ctx.children(step) if c.cause == "rollback"]
            covered = {c.partition for c in back if not c.finished}
            idx, new = ctx.next_idx(), []
            for p in serving:
                if p in covered:
                    continue
                dest = layout.get(p)
                if dest not in obs.servers or dest == server or obs.servers[dest].state != "active":
                    dest = ctx.pick_destination(p, server, prefer_unreconfigured=False)
                if dest is not None:
                    new.append(Step(idx=idx, op="move", parent=step.idx, partition=p, source=server,
                                    target=dest, cause="rollback", reason=f"roll back {step.node}"))
                    idx += 1
            if new:
                ctx.add_steps(now, step, new, {}, event=f"moving {len(new)} partitions off {step.node}")
            moves.advance(ctx, ctx.children(step), now)
            continue
        if step.sub_state != "rollback":
            ctx.set_step(step, now, sub_state="rollback", event=f"rollback: terminating {node.instance_id}")
        try:
            ctx.infra.terminate(node.instance_id)
        except DriverError as err:
            ctx.note_error(now, step, f"rollback: terminate {node.instance_id} failed: {err}")
    if not remaining and not landing:
        for st in ctx.steps:
            if st.state in ("running", "pending"):
                ctx.set_step(st, now, state="cancelled", finished_at=now, note="plan abandoned")
        ctx.restore_balancer(now)
        ctx.set_plan(now, state="abandoned", event="plan abandoned; nodes it launched are terminated")


def _settle_running_moves(ctx: Context, now: float) -> set[str]:
    """During a rollback: observe the plan's moves still in flight (none is issued again) and
    return the servers a partition may still land on."""
    landing: set[str] = set()
    for m in ctx.of("move", plan_only=False):
        if m.state != "running" or m.cause == "rollback":
            continue
        if (seen := moves.settle(ctx, m, now, note="landed during the rollback")) is None:
            continue
        dest, loc = seen
        if loc.server is None:
            landing.add(dest)  # in transition: it may be landing on a node we are about to remove
        else:
            ctx.set_step(m, now, state="cancelled", finished_at=now, note="plan abandoned")
    return landing
