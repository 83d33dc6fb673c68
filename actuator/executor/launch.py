"""Phase launch: launch placeholder nodes "new-1"… (profile in user data, metctl tags) and
wait, one timeout per state (requested, booting, joining), until each is running and registered
with the data store. A failed or timed-out attempt's partial node is terminated and the launch
retried with back-off; when attempts run out the plan is abandoned."""
from __future__ import annotations

from actuator.drivers import TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DriverError
from actuator.executor.context import Context, age, backoff
from actuator.executor.states import limit_s
from actuator.executor.step import Step


def tick(ctx: Context, now: float) -> bool:
    for step in ctx.launch_steps():
        if not step.finished:
            _tick_launch(ctx, step, now)
            if not ctx.busy or ctx.plan_row["state"] != "running":
                return False
    return all(s.state == "done" for s in ctx.launch_steps())


def _tags(ctx: Context, profile: str, token: str) -> dict[str, str]:
    return {TAG_MANAGED: "true", TAG_CLUSTER: ctx.cluster, TAG_PROFILE: profile, TAG_LAUNCH: token}


def _tick_launch(ctx: Context, step: Step, now: float) -> None:
    s = ctx.settings
    if step.sub_state == "cleanup":
        _cleanup_attempt(ctx, step, now)
        return
    if step.state == "pending":
        if step.next_try_at is not None and now < step.next_try_at:
            return
        attempt = step.attempts + 1
        token = f"{ctx.plan_id}/{step.idx}/{attempt}"
        ctx.set_step(step, now, state="running", attempts=attempt, token=token, sub_state="requested",
                  since=now, started_at=step.started_at or now, called=0, instance_id=None,
                  event=f"launching {step.node} ({step.profile}), attempt {attempt}/{s.launch_attempts}")
    if step.instance_id is None:
        found = ctx.find_by_token(step.token)
        if found is None:
            try:
                instance_id = ctx.infra.launch(step.profile or "default", ctx.user_data(step.profile or "default"),
                                                _tags(ctx, step.profile or "default", step.need("token")))
            except DriverError as err:
                _launch_failed(ctx, step, now, f"launch {step.node} failed: {err}", retryable=err.retryable)
                return
        else:
            instance_id = found.instance_id
        ctx.set_step(step, now, instance_id=instance_id, called=1, event=f"{step.node} is instance {instance_id}")
        ctx.obs.invalidate()
    node = ctx.obs.nodes.get(step.need("instance_id"))
    state = node.state if node is not None else "requested"  # not listed yet: still requested
    if state in ("failed", "terminated", "stopping"):
        _launch_failed(ctx, step, now, f"instance {step.instance_id} for {step.node} went {state}")
        return
    if node is not None and state == "running":
        server = next((sv for sv in ctx.obs.servers.values()
                       if node.address and sv.host == node.address and sv.state == "active"), None)
        if server is not None:
            ctx.set_step(step, now, state="done", sub_state="ready", server_id=server.id, host=node.address,
                      finished_at=now, error=None,
                      event=f"{step.node} ready: instance {step.instance_id} is server {server.id}")
            return
        sub = "joining"
    else:
        sub = "booting" if state == "booting" else "requested"
    if sub != step.sub_state:
        ctx.set_step(step, now, sub_state=sub, since=now)
    limit = limit_s(s, "launch", sub)
    if age(step, now) > limit:
        _launch_failed(ctx, step, now, f"{step.node} (instance {step.instance_id}) stayed {sub} "
                                       f"longer than {limit:g} s")


def _launch_failed(ctx: Context, step: Step, now: float, message: str, retryable: bool = True) -> None:
    ctx.note_error(now, step, message)
    if step.instance_id is not None or ctx.find_by_token(step.token) is not None:
        # Terminate the partial node before anything else; a non-retryable failure uses up
        # the remaining attempts so the plan is abandoned once the node is gone.
        attempts = step.attempts if retryable else ctx.settings.launch_attempts
        ctx.set_step(step, now, sub_state="cleanup", error=message, attempts=attempts)
        _cleanup_attempt(ctx, step, now)
        return
    _after_failed_attempt(ctx, step, now, retryable)


def _cleanup_attempt(ctx: Context, step: Step, now: float) -> None:
    """Terminate the partial node of a failed attempt (found by id or by its launch token)."""
    node = ctx.obs.nodes.get(step.instance_id) if step.instance_id else ctx.find_by_token(step.token)
    if node is not None and node.state not in ("terminated", "stopping"):
        try:
            ctx.infra.terminate(node.instance_id)
        except DriverError as err:
            ctx.note_error(now, step, f"terminating partial node {node.instance_id} failed: {err}")
            return
    ctx.set_step(step, now, sub_state=None, instance_id=None,
              event=f"partial node {node.instance_id if node else step.instance_id} of {step.node} terminated")
    _after_failed_attempt(ctx, step, now, retryable=True)


def _after_failed_attempt(ctx: Context, step: Step, now: float, retryable: bool) -> None:
    s = ctx.settings
    if retryable and step.attempts < s.launch_attempts:
        wait = backoff(s.launch_backoff_s, s.launch_backoff_max_s, step.attempts)
        ctx.set_step(step, now, state="pending", sub_state=None, instance_id=None, called=0,
                  next_try_at=now + wait, event=f"retrying launch of {step.node} in {wait:g} s")
        return
    ctx.set_step(step, now, state="failed", sub_state=None, finished_at=now)
    why = "not retryable" if not retryable else f"after {step.attempts} attempts"
    ctx.begin_abandon(now, f"launch of {step.node} failed {why}: {step.error}")
