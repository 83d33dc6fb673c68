"""Phase prepare: check the journaled plan against the cluster (every node to terminate is
owned by metctl), record the layout (for a rollback) and switch the data store's balancer off."""
from __future__ import annotations

import json

from actuator.executor.context import Context, StopPlan


def tick(ctx: Context, now: float) -> bool:
    obs = ctx.obs
    servers, owned = obs.servers, obs.nodes
    by_address = {n.address: n for n in owned.values() if n.address}
    layout = {p.id: p.server for p in obs.parts.values()}
    for step in ctx.steps:
        if step.parent is not None or step.finished:
            continue
        if step.op in ("reconfigure", "drain", "terminate") and step.node not in servers:
            if step.op == "reconfigure":
                raise StopPlan(f"refused at prepare: reconfigure {step.node}: no such server in the data store")
            if step.op == "terminate" and step.instance_id:
                continue
            if step.op == "drain":
                ctx.set_step(step, now, state="skipped", finished_at=now, note="server already gone")
                continue
        if step.op == "terminate":
            host = servers[step.node].host if step.node in servers else step.host
            node = by_address.get(host)
            if node is None:
                raise StopPlan(f"refused at prepare: terminate {step.node}: no node with address {host} "
                            f"is owned by metctl in cluster {ctx.cluster} (metctl never terminates "
                            "what it did not launch)")
            if step.instance_id != node.instance_id:
                ctx.set_step(step, now, instance_id=node.instance_id, host=host)
    if ctx.settings.disable_balancer and ctx.plan_row.get("balancer_was_on") in (None, -1):
        # -1 = "switching": journaled before the call. Found on resume, it means the previous
        # state may have been lost with the controller (the driver cannot tell it apart from
        # our own switch-off): then the balancer stays off, and the journal says so.
        unknown = ctx.plan_row.get("balancer_was_on") == -1
        if not unknown:
            ctx.set_plan(now, balancer_was_on=-1)
        was_on = ctx.ds.set_balancer(False)
        if unknown and not was_on:
            ctx.set_plan(now, balancer_was_on=0, layout_json=json.dumps(layout), level="error",
                           event="balancer state before the plan is unknown (controller died while "
                                 "switching it off); leaving it off")
        else:
            ctx.set_plan(now, balancer_was_on=int(bool(was_on)), layout_json=json.dumps(layout),
                           event=f"balancer switched off (was {'on' if was_on else 'off'})")
    elif not ctx.plan_row.get("layout"):
        ctx.set_plan(now, layout_json=json.dumps(layout))
    return True
