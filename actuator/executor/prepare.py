"""Phase prepare: check the journaled plan against the cluster, record the layout (for a
rollback) and switch the data store's balancer off.

Each node to terminate is looked up among the nodes metctl owns (launched or adopted,
actuator/adoption.py). One it does not own is drained but never terminated: its terminate step
is skipped here, journaled with the reason and the config key that would change it. Deciding
it here, once, in a journal write makes a restarted controller carry on alike; the decision
core never needs to know who launched what."""
from __future__ import annotations

import json

from actuator.adoption import drained_not_terminated
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
            node = by_address.get(host) if host else None
            if node is None:
                note = (drained_not_terminated(host) if host else
                        f"not terminated: {step.node} is gone from the data store, so no address "
                        "names its node")
                ctx.set_step(step, now, state="skipped", finished_at=now, host=host, note=note,
                             level="warning", event=f"terminate {step.node} skipped: {note}")
                continue
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
