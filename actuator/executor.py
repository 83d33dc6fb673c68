"""The executor: carries out a Plan through an infrastructure driver and a data-store driver,
step by step, journaling each step before and after it runs.

It is a NON-BLOCKING state machine: `tick()` starts what may start, observes progress through
the drivers' `nodes()`, `servers()` and `partitions()`, and returns at once. Time comes only
from the injected `clock`, so the same code runs on real time (the daemon) and simulated time.

Order (MET's actuator with the incremental-elasticity transfer), as Parqua-style phases:

  prepare      journal the plan; check it against the cluster (every node to terminate is owned
               by metctl); switch the data store's balancer off
  launch       launch placeholder nodes "new-1"… (profile in user data, metctl tags); wait until
               running and registered with the data store, each state with its own timeout
               (requested, booting, joining); a failed/timed-out attempt is terminated and retried
               with back-off; when attempts run out the plan is abandoned (new nodes terminated)
  reconfigure  one node at a time: move its partitions to nodes not yet reconfigured, restart it
               with the new profile, bring its target partitions to it
  move         the remaining moves, at most `max_concurrent_moves` in flight; toward a new node
               from one source node at a time, so each moved partition is served at once
  verify       every move is observed in place (the store may have moved one back: redo it)
  commit       ONE journal write: the new layout is in effect; from here the plan only rolls forward
  compact      major compactions the plan carries (they restore locality after the moves)
  drain        move what is left off each removed node, then decommission its server
  terminate    terminate removed nodes: never one serving partitions, never one not owned
  finish       restore the balancer if it was on

A data-store action that keeps failing stops the plan at a consistent point (every partition is
served somewhere; the journal says why). A restarted controller calls `resume()`: the journal
plus fresh observations say exactly where each step stood. Steps are idempotent by observation:
a move whose partition is already at its target, a restart whose server already runs the new
profile, a launch whose token tag is already on a node — none is done twice.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

from tenacity import RetryCallState, wait_exponential

from actuator.drivers import (
    TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DataStoreDriver, DriverError,
    InfrastructureDriver, ManagedNode, NotOwnedError, PartitionLocation, ServerInfo,
)
from actuator.journal import STEP_COLUMNS, Journal
from actuator.settings import ExecutorSettings
from actuator.userdata import render_user_data
from decision.model import Plan

log = logging.getLogger("metctl.actuator")

EXEC_STATES = ("idle", "running", "done", "failed", "abandoned")
PHASES = ("prepare", "launch", "reconfigure", "move", "verify", "committed", "compact", "drain",
          "terminate", "finish")
_FINISHED = ("done", "skipped", "cancelled", "failed", "rolled_back")


class ExecutorBusy(RuntimeError):
    """submit() while another plan is still in flight."""


@dataclass(frozen=True)
class ExecutionStatus:
    """What one tick reports. `actions_done`/`actions_total` count the plan's own actions
    (the moves the executor adds to evacuate or drain a node are shown by `metctl status`)."""

    state: str  # idle | running | done | failed | abandoned
    plan_id: str | None = None
    phase: str = ""
    actions_done: int = 0
    actions_total: int = 0
    current: str = ""
    last_error: str | None = None
    reason: str = ""  # why the plan stopped (failed / abandoned)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Step:
    """One journaled step (a plan action, or a move the executor derived from one)."""

    idx: int
    op: str
    parent: int | None = None
    node: str | None = None
    profile: str | None = None
    from_profile: str | None = None
    partition: str | None = None
    source: str | None = None
    target: str | None = None
    reason: str = ""
    cause: str = ""
    state: str = "pending"
    sub_state: str | None = None
    attempts: int = 0
    instance_id: str | None = None
    server_id: str | None = None
    host: str | None = None
    token: str | None = None
    called: int = 0
    since: float | None = None
    started_at: float | None = None
    next_try_at: float | None = None
    finished_at: float | None = None
    error: str | None = None
    note: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in _FINISHED

    def row(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in STEP_COLUMNS}

    def describe(self) -> str:
        if self.op == "launch":
            return f"launch {self.node} ({self.profile})"
        if self.op == "reconfigure":
            return f"reconfigure {self.node} -> {self.profile}"
        if self.op == "move":
            return f"move {self.partition} -> {self.target}"
        if self.op == "compact":
            return f"compact {self.partition}"
        return f"{self.op} {self.node}"


class _Stop(Exception):
    """Raised inside a tick to stop the plan at a consistent point."""


class _Observation:
    """The drivers' views, fetched at most once per tick."""

    def __init__(self, infra: InfrastructureDriver, datastore: DataStoreDriver):
        self._infra, self._ds = infra, datastore
        self._nodes: dict[str, ManagedNode] | None = None
        self._servers: dict[str, ServerInfo] | None = None
        self._parts: dict[str, PartitionLocation] | None = None

    @property
    def nodes(self) -> dict[str, ManagedNode]:
        if self._nodes is None:
            self._nodes = {n.instance_id: n for n in self._infra.nodes()}
        return self._nodes

    @property
    def servers(self) -> dict[str, ServerInfo]:
        if self._servers is None:
            self._servers = {s.id: s for s in self._ds.servers()}
        return self._servers

    @property
    def parts(self) -> dict[str, PartitionLocation]:
        if self._parts is None:
            self._parts = {p.id: p for p in self._ds.partitions()}
        return self._parts

    def on(self, server: str) -> list[str]:
        return sorted(p.id for p in self.parts.values() if p.server == server)

    def invalidate(self) -> None:
        self._nodes = self._servers = self._parts = None


def _age(step: "Step", now: float) -> float:
    """Seconds since the step entered its current sub-state (0 when unknown)."""
    return now - step.since if step.since is not None else 0.0


def _backoff(base_s: float, max_s: float, attempt: int) -> float:
    """Exponential back-off (tenacity's): base, 2·base, 4·base … capped at max_s."""
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = max(1, attempt)
    return float(wait_exponential(multiplier=base_s, min=0, max=max_s)(state)) if base_s > 0 else 0.0


class Executor:
    def __init__(self, infra: InfrastructureDriver, datastore: DataStoreDriver,
                 settings: ExecutorSettings, clock: Callable[[], float], cluster: str,
                 journal: Journal | None = None, *,
                 user_data: Callable[[str], str] | None = None):
        self.infra, self.ds, self.settings, self.clock, self.cluster = infra, datastore, settings, clock, cluster
        self.journal = journal if journal is not None else Journal(settings.journal_path)
        self._user_data = user_data or (lambda profile: render_user_data(cluster, profile))
        self._plan_id: str | None = None
        self._plan_row: dict[str, Any] = {}
        self._steps: list[Step] = []
        self._assignment: dict[str, tuple[str, ...]] = {}
        self._last_error: str | None = None
        self._obs: _Observation | None = None
        # Operators' protection (controller.control): node -> why. Checked when a step that
        # would restart, drain or terminate a node comes up, so it holds for plans submitted
        # before the protection too; such a step is skipped with the why in the journal.
        self.protected: Callable[[], Mapping[str, str]] = dict

    # ---------------------------------------------------------------- public interface
    @property
    def busy(self) -> bool:
        return self._plan_id is not None and self._plan_row.get("state") in ("running", "abandoning")

    @property
    def plan_id(self) -> str | None:
        return self._plan_id

    def resolve(self, node: str) -> str | None:
        """The data-store server id of a plan node id (a placeholder "new-1" once its node is ready)."""
        return self._resolve(node)

    def submit(self, plan: Plan, plan_id: str) -> None:
        """Journal the plan (prepare). Refuses while another plan is in flight."""
        if self.busy:
            raise ExecutorBusy(f"plan {self._plan_id} is still in flight")
        if self.journal.in_flight() is not None:
            raise ExecutorBusy(f"plan {self.journal.in_flight()} is in flight in the journal; resume() it first")
        if self.journal.load_plan(plan_id) is not None:
            raise ValueError(f"plan id {plan_id} is already in the journal")
        steps = [Step(idx=i, op=a.op, node=a.node, profile=a.profile, from_profile=a.from_profile,
                      partition=a.partition, source=a.source, target=a.target, reason=a.reason,
                      cause=a.cause).row()
                 for i, a in enumerate(plan.actions)]
        now = self.clock()
        doc = dict(plan.to_dict(), plan_id=plan_id, cluster=self.cluster)
        self.journal.create_plan(plan_id, self.cluster, doc, steps, now)
        log.info("plan %s journaled: %d actions", plan_id, len(steps))
        self._load(plan_id)
        self._last_error = None

    def resume(self) -> ExecutionStatus:
        """On start-up: pick up a journaled plan in flight and finish it (or roll it back when
        `on_resume` is 'rollback' and its commit point was not reached)."""
        plan_id = self.journal.in_flight()
        if plan_id is None:
            latest = self.journal.latest()
            if latest is not None:
                self._load(latest)
            return self.status()
        self._load(plan_id)
        now = self.clock()
        self.journal.update_plan(plan_id, now, event="controller restarted: resuming plan")
        log.info("resuming plan %s at phase %s", plan_id, self._plan_row["phase"])
        if (self.settings.on_resume == "rollback" and not self._plan_row["committed"]
                and self._plan_row["state"] == "running"):
            self._begin_abandon(now, "controller restarted before the commit point (on_resume: rollback)")
        return self.status()

    def status(self) -> ExecutionStatus:
        if self._plan_id is None:
            return ExecutionStatus(state="idle")
        row = self._plan_row
        state = {"running": "running", "abandoning": "running"}.get(row["state"], row["state"])
        plan_steps = [s for s in self._steps if s.parent is None]
        done = sum(1 for s in plan_steps if s.state in ("done", "skipped"))
        return ExecutionStatus(
            state=state, plan_id=self._plan_id,
            phase="abandoning" if row["state"] == "abandoning" else row["phase"],
            actions_done=done, actions_total=len(plan_steps), current=self._current(),
            last_error=self._last_error or row.get("error"),
            reason=row.get("error") or "" if row["state"] in ("failed", "abandoned") else "")

    def tick(self) -> ExecutionStatus:
        """Advance the plan in flight as far as it can go without waiting; never blocks."""
        if not self.busy:
            return self.status()
        now = self.clock()
        self._obs = _Observation(self.infra, self.ds)
        try:
            if self._plan_row["state"] == "abandoning":
                self._tick_abandon(now)
            else:
                self._tick_phase(now)
        except _Stop as stop:
            self._stop(now, str(stop))
        except NotOwnedError as err:
            self._stop(now, f"refused: {err}")
        except DriverError as err:
            # An observation failed (the API is unreachable): nothing was changed; try next tick.
            self._note_error(now, None, f"observing the cluster failed: {err}")
        finally:
            self._obs = None
        return self.status()

    # ---------------------------------------------------------------- journal helpers
    def _load(self, plan_id: str) -> None:
        row = self.journal.load_plan(plan_id)
        assert row is not None
        self._plan_id, self._plan_row = plan_id, row
        self._steps = [Step(**r) for r in self.journal.load_steps(plan_id)]
        self._assignment = {a["node"]: tuple(a["partitions"]) for a in row["plan"].get("assignment", [])}

    def _set(self, step: Step, now: float, *, event: str | None = None, level: str = "info", **changes: Any) -> None:
        """Journal the change first (write-ahead), then apply it in memory."""
        self.journal.update_step(self._plan_id, step.idx, now, event=event, level=level, **changes)
        for k, v in changes.items():
            setattr(step, k, v)
        if level == "error" and event:
            self._last_error = event

    def _set_plan(self, now: float, *, event: str | None = None, level: str = "info", **changes: Any) -> None:
        self.journal.update_plan(self._plan_id, now, event=event, level=level, **changes)
        self._plan_row.update(changes)
        if level == "error" and event:
            self._last_error = event

    def _add_steps(self, now: float, parent: Step, new: list[Step], parent_changes: Mapping[str, Any],
                   event: str | None) -> None:
        self.journal.add_steps(self._plan_id, [s.row() for s in new], now,
                               parent_update=(parent.idx, dict(parent_changes)), event=event)
        self._steps.extend(new)
        for k, v in parent_changes.items():
            setattr(parent, k, v)

    def _note_error(self, now: float, step: Step | None, message: str) -> None:
        log.warning("plan %s: %s", self._plan_id, message)
        if message != self._last_error:
            if step is None:
                self.journal.update_plan(self._plan_id, now, event=message, level="error")
            else:
                self.journal.update_step(self._plan_id, step.idx, now, event=message, level="error", error=message)
                step.error = message
        self._last_error = message

    def _next_idx(self) -> int:
        return max((s.idx for s in self._steps), default=-1) + 1

    # ---------------------------------------------------------------- lookups
    def _of(self, op: str, *, parent: int | None = None, plan_only: bool = True) -> list[Step]:
        return [s for s in self._steps if s.op == op and (not plan_only or s.parent is None)
                and (parent is None or s.parent == parent)]

    def _children(self, step: Step) -> list[Step]:
        return [s for s in self._steps if s.parent == step.idx]

    def _launch_steps(self) -> list[Step]:
        return self._of("launch")

    def _resolve(self, node: str | None) -> str | None:
        """Plan node id → data-store server id (placeholders "new-1"… map to the launched server)."""
        for s in self._launch_steps():
            if s.node == node:
                return s.server_id
        return node

    def _new_servers(self) -> set[str]:
        return {s.server_id for s in self._launch_steps() if s.server_id}

    def _leaving(self) -> set[str]:
        return {s.node for s in self._steps if s.op in ("drain", "terminate") and s.node}

    # ---------------------------------------------------------------- phases
    def _tick_phase(self, now: float) -> None:
        # A step journaled as failed whose consequence (stop / abandon) was not journaled yet:
        # the controller died between the two writes. Finish what it had started.
        failed = next((st for st in self._steps if st.state == "failed"), None)
        if failed is not None:
            if failed.op == "launch":
                self._begin_abandon(now, f"launch of {failed.node} failed: {failed.error}")
            else:
                raise _Stop(f"{failed.describe()}: {failed.error}")
            return
        # Each phase handler returns True when the phase is complete; then the next one starts
        # within the same tick (phase changes are journal writes of their own).
        while self.busy and self._plan_row["state"] == "running":
            phase = self._plan_row["phase"]
            handler = getattr(self, f"_phase_{phase}")
            if not handler(now):
                return
            if self._plan_row["state"] != "running":
                return
            nxt = PHASES[PHASES.index(phase) + 1] if phase != "finish" else None
            if nxt is None:
                return
            self._set_plan(now, phase=nxt, event=f"phase {nxt}")

    def _phase_prepare(self, now: float) -> bool:
        obs = self._obs
        servers, owned = obs.servers, obs.nodes
        by_address = {n.address: n for n in owned.values() if n.address}
        layout = {p.id: p.server for p in obs.parts.values()}
        for step in self._steps:
            if step.parent is not None or step.finished:
                continue
            if step.op in ("reconfigure", "drain", "terminate") and step.node not in servers:
                if step.op == "reconfigure":
                    raise _Stop(f"refused at prepare: reconfigure {step.node}: no such server in the data store")
                if step.op == "terminate" and step.instance_id:
                    continue
                if step.op == "drain":
                    self._set(step, now, state="skipped", finished_at=now, note="server already gone")
                    continue
            if step.op == "terminate":
                host = servers[step.node].host if step.node in servers else step.host
                node = by_address.get(host)
                if node is None:
                    raise _Stop(f"refused at prepare: terminate {step.node}: no node with address {host} "
                                f"is owned by metctl in cluster {self.cluster} (metctl never terminates "
                                "what it did not launch)")
                if step.instance_id != node.instance_id:
                    self._set(step, now, instance_id=node.instance_id, host=host)
        if self.settings.disable_balancer and self._plan_row.get("balancer_was_on") in (None, -1):
            # -1 = "switching": journaled before the call. Found on resume, it means the previous
            # state may have been lost with the controller (the driver cannot tell it apart from
            # our own switch-off): then the balancer stays off, and the journal says so.
            unknown = self._plan_row.get("balancer_was_on") == -1
            if not unknown:
                self._set_plan(now, balancer_was_on=-1)
            was_on = self.ds.set_balancer(False)
            if unknown and not was_on:
                self._set_plan(now, balancer_was_on=0, layout_json=json.dumps(layout), level="error",
                               event="balancer state before the plan is unknown (controller died while "
                                     "switching it off); leaving it off")
            else:
                self._set_plan(now, balancer_was_on=int(bool(was_on)), layout_json=json.dumps(layout),
                               event=f"balancer switched off (was {'on' if was_on else 'off'})")
        elif not self._plan_row.get("layout"):
            self._set_plan(now, layout_json=json.dumps(layout))
        return True

    # ------------------------------------------------ launch
    def _phase_launch(self, now: float) -> bool:
        for step in self._launch_steps():
            if not step.finished:
                self._tick_launch(step, now)
                if not self.busy or self._plan_row["state"] != "running":
                    return False
        return all(s.state == "done" for s in self._launch_steps())

    def _tags(self, profile: str, token: str) -> dict[str, str]:
        return {TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile, TAG_LAUNCH: token}

    def _find_by_token(self, token: str | None) -> ManagedNode | None:
        if not token:
            return None
        for n in self._obs.nodes.values():
            if n.tags.get(TAG_LAUNCH) == token:
                return n
        return None

    def _tick_launch(self, step: Step, now: float) -> None:
        s = self.settings
        if step.sub_state == "cleanup":
            self._cleanup_attempt(step, now)
            return
        if step.state == "pending":
            if step.next_try_at is not None and now < step.next_try_at:
                return
            attempt = step.attempts + 1
            token = f"{self._plan_id}/{step.idx}/{attempt}"
            self._set(step, now, state="running", attempts=attempt, token=token, sub_state="requested",
                      since=now, started_at=step.started_at or now, called=0, instance_id=None,
                      event=f"launching {step.node} ({step.profile}), attempt {attempt}/{s.launch_attempts}")
        if step.instance_id is None:
            found = self._find_by_token(step.token)
            if found is None:
                try:
                    instance_id = self.infra.launch(step.profile or "default", self._user_data(step.profile or "default"),
                                                    self._tags(step.profile or "default", step.token))
                except DriverError as err:
                    self._launch_failed(step, now, f"launch {step.node} failed: {err}", retryable=err.retryable)
                    return
            else:
                instance_id = found.instance_id
            self._set(step, now, instance_id=instance_id, called=1, event=f"{step.node} is instance {instance_id}")
            self._obs.invalidate()
        node = self._obs.nodes.get(step.instance_id)
        state = node.state if node is not None else "requested"  # not listed yet: still requested
        if state in ("failed", "terminated", "stopping"):
            self._launch_failed(step, now, f"instance {step.instance_id} for {step.node} went {state}")
            return
        if state == "running":
            server = next((sv for sv in self._obs.servers.values()
                           if node.address and sv.host == node.address and sv.state == "active"), None)
            if server is not None:
                self._set(step, now, state="done", sub_state="ready", server_id=server.id, host=node.address,
                          finished_at=now, error=None,
                          event=f"{step.node} ready: instance {step.instance_id} is server {server.id}")
                return
            sub = "joining"
        else:
            sub = "booting" if state == "booting" else "requested"
        if sub != step.sub_state:
            self._set(step, now, sub_state=sub, since=now)
        limit = {"requested": s.requested_timeout_s, "booting": s.booting_timeout_s,
                 "joining": s.joining_timeout_s}[sub]
        if _age(step, now) > limit:
            self._launch_failed(step, now, f"{step.node} (instance {step.instance_id}) stayed {sub} "
                                           f"longer than {limit:g} s")

    def _launch_failed(self, step: Step, now: float, message: str, retryable: bool = True) -> None:
        self._note_error(now, step, message)
        if step.instance_id is not None or self._find_by_token(step.token) is not None:
            # Terminate the partial node before anything else; a non-retryable failure uses up
            # the remaining attempts so the plan is abandoned once the node is gone.
            attempts = step.attempts if retryable else self.settings.launch_attempts
            self._set(step, now, sub_state="cleanup", error=message, attempts=attempts)
            self._cleanup_attempt(step, now)
            return
        self._after_failed_attempt(step, now, retryable)

    def _cleanup_attempt(self, step: Step, now: float) -> None:
        """Terminate the partial node of a failed attempt (found by id or by its launch token)."""
        node = self._obs.nodes.get(step.instance_id) if step.instance_id else self._find_by_token(step.token)
        if node is not None and node.state not in ("terminated", "stopping"):
            try:
                self.infra.terminate(node.instance_id)
            except DriverError as err:
                self._note_error(now, step, f"terminating partial node {node.instance_id} failed: {err}")
                return
        self._set(step, now, sub_state=None, instance_id=None,
                  event=f"partial node {node.instance_id if node else step.instance_id} of {step.node} terminated")
        self._after_failed_attempt(step, now, retryable=True)

    def _after_failed_attempt(self, step: Step, now: float, retryable: bool) -> None:
        s = self.settings
        if retryable and step.attempts < s.launch_attempts:
            wait = _backoff(s.launch_backoff_s, s.launch_backoff_max_s, step.attempts)
            self._set(step, now, state="pending", sub_state=None, instance_id=None, called=0,
                      next_try_at=now + wait, event=f"retrying launch of {step.node} in {wait:g} s")
            return
        self._set(step, now, state="failed", sub_state=None, finished_at=now)
        why = "not retryable" if not retryable else f"after {step.attempts} attempts"
        self._begin_abandon(now, f"launch of {step.node} failed {why}: {step.error}")

    # ------------------------------------------------ reconfigure
    def _protected_why(self, node: str | None) -> str | None:
        return self.protected().get(node) if node else None

    def _skip_protected(self, step: Step, now: float) -> bool:
        """Skip `step` if its node is protected and nothing irreversible has started: a
        reconfigure before its restart (its evacuation moves under way finish first, pending ones
        are skipped), a drain before its decommission, a terminate before its call; for a drain,
        the plan's own moves off the node are skipped too, so it keeps serving."""
        why = self._protected_why(step.node)
        if why is None:
            return False
        if step.op == "reconfigure" and (step.sub_state or "evacuate") != "evacuate":
            return False
        if step.op == "drain" and step.sub_state == "decommission" and step.called:
            return False
        if step.op == "terminate" and step.called:
            return False
        children = self._children(step)
        for c in children:
            if c.state == "pending":
                self._set(c, now, state="skipped", finished_at=now, note=f"protected: {why}")
        running = [c for c in children if not c.finished]
        if running:  # moves already under way end where they are going
            self._advance_moves(running, now)
            return True
        self._set(step, now, state="skipped", finished_at=now, sub_state=None,
                  note=f"protected: {why}", level="warning",
                  event=f"{step.describe()} skipped: {step.node} is protected ({why})")
        return True

    def _phase_reconfigure(self, now: float) -> bool:
        for step in self._of("reconfigure"):
            if step.finished:
                continue
            if self._skip_protected(step, now):
                if not step.finished:
                    return False
                continue
            self._tick_reconfigure(step, now)
            return False  # one node at a time
        return True

    def _pending_reconfigure_nodes(self) -> set[str]:
        return {s.node for s in self._of("reconfigure") if not s.finished}

    def _final_target(self, partition: str) -> str | None:
        for s in self._of("move"):
            if s.partition == partition:
                return self._resolve(s.target)
        for node, parts in self._assignment.items():
            if partition in parts:
                return self._resolve(node)
        return None

    def _pick_destination(self, partition: str, away_from: str, prefer_unreconfigured: bool) -> str | None:
        obs = self._obs
        leaving = self._leaving()
        # A node the plan removes may still hold a partition for a while during a
        # reconfiguration (last resort: it is drained later); never during a drain.
        active = [sv.id for sv in obs.servers.values()
                  if sv.state == "active" and sv.id != away_from
                  and (sv.id not in leaving or prefer_unreconfigured)]
        final = self._final_target(partition)
        pending_rc = self._pending_reconfigure_nodes() - {away_from}
        if final in active and final not in pending_rc and final not in leaving:
            return final
        if not active:
            return None
        inbound: dict[str, int] = {}
        for st in self._of("move", plan_only=False):
            if not st.finished:
                dest = self._resolve(st.target)
                inbound[dest] = inbound.get(dest, 0) + 1
        settled = self._new_servers() | {s.node for s in self._of("reconfigure") if s.state == "done"}

        def load(sid: str) -> tuple[int, int, str]:
            # MET: a node's partitions go to nodes not yet reconfigured; nodes that already run
            # their final profile (reconfigured or new) take them only as a last resort.
            rank = 0
            if prefer_unreconfigured:
                rank = 3 if sid in leaving else 0 if sid in pending_rc else 2 if sid in settled else 1
            return rank, len(obs.on(sid)) + inbound.get(sid, 0), sid
        return min(active, key=load)

    def _tick_reconfigure(self, step: Step, now: float) -> None:
        s, obs, node = self.settings, self._obs, step.node
        sub = step.sub_state or "evacuate"
        if sub == "evacuate":
            on_node = obs.on(node)
            covered = {c.partition for c in self._children(step) if c.cause == "evacuate" and not c.finished}
            missing = [p for p in on_node if p not in covered]
            if missing:
                if step.attempts >= s.datastore_attempts and step.sub_state == "evacuate":
                    raise _Stop(f"reconfigure {node}: partitions keep returning to it ({', '.join(missing)})")
                new, idx = [], self._next_idx()
                for p in missing:
                    dest = self._pick_destination(p, node, prefer_unreconfigured=True)
                    if dest is None:
                        continue
                    new.append(Step(idx=idx, op="move", parent=step.idx, partition=p, source=node, target=dest,
                                    cause="evacuate", reason=f"evacuate {node} before its restart"))
                    idx += 1
                if new:
                    self._add_steps(now, step, new, {"sub_state": "evacuate", "state": "running",
                                                     "attempts": step.attempts + 1,
                                                     "started_at": step.started_at or now, "since": now},
                                    event=f"evacuating {len(new)} partitions from {node}")
            elif step.state == "pending":
                self._set(step, now, state="running", sub_state="evacuate", started_at=now, since=now)
            children = [c for c in self._children(step) if c.cause == "evacuate"]
            self._advance_moves(children, now)
            nowhere = all(self._pick_destination(p, node, True) is None for p in obs.on(node))
            if all(c.finished for c in children) and (not obs.on(node) or nowhere):
                note = None if obs.on(node) == [] else "no other server: restarting with its partitions"
                self._set(step, now, sub_state="restart", called=0, since=now, note=note, attempts=0,
                          event=f"{node} evacuated; restarting with profile {step.profile}")
                sub = "restart"
            else:
                return
        if sub == "restart":
            server = obs.servers.get(node)
            if server is not None and server.state == "active" and server.profile == step.profile:
                self._enter_fill(step, now)
                return
            if not step.called:
                if server is not None and server.state == "active":
                    if step.next_try_at is not None and now < step.next_try_at:
                        return
                    try:
                        self.ds.restart_server(node, step.profile or "default")
                    except DriverError as err:
                        self._retry_or_stop(step, now, f"restart of {node} failed: {err}", err.retryable)
                        return
                self._set(step, now, called=1, since=step.since if step.since is not None else now,
                          event=f"restart of {node} with profile {step.profile} requested")
                return
            if _age(step, now) > s.restart_timeout_s:
                self._retry_or_stop(step, now, f"{node} not active with profile {step.profile} after "
                                               f"{s.restart_timeout_s:g} s")
            return
        if sub == "fill":
            fill = [c for c in self._children(step) if c.cause == "refill"]
            fill += [m for m in self._of("move") if self._resolve(m.target) == node]
            self._advance_moves(fill, now)
            if all(m.finished for m in fill):
                self._set(step, now, state="done", sub_state=None, finished_at=now, error=None,
                          event=f"{node} reconfigured to {step.profile}")

    def _enter_fill(self, step: Step, now: float) -> None:
        node = step.node
        planned = {m.partition for m in self._of("move") if self._resolve(m.target) == node}
        wanted = [p for p in self._assignment.get(node, ()) if p not in planned and p in self._obs.parts
                  and self._obs.parts[p].server != node]
        idx = self._next_idx()
        new = [Step(idx=idx + i, op="move", parent=step.idx, partition=p, source=self._obs.parts[p].server,
                    target=node, cause="refill", reason=f"back to {node} after its reconfiguration")
               for i, p in enumerate(wanted)]
        self._add_steps(now, step, new, {"sub_state": "fill", "since": now, "called": 0},
                        event=f"{node} runs {step.profile}; bringing its partitions to it")

    def _retry_or_stop(self, step: Step, now: float, message: str, retryable: bool = True) -> None:
        s = self.settings
        self._note_error(now, step, f"{message} (attempt {step.attempts + 1}/{s.datastore_attempts})")
        if not retryable or step.attempts + 1 >= s.datastore_attempts:
            self._set(step, now, state="failed", finished_at=now)
            raise _Stop(message)
        wait = _backoff(s.datastore_backoff_s, s.datastore_backoff_max_s, step.attempts + 1)
        self._set(step, now, attempts=step.attempts + 1, called=0, since=now, next_try_at=now + wait)

    def _requeue_or_stop(self, step: Step, now: float, message: str, retryable: bool = True) -> None:
        """A failed attempt of a step counted at each start (move, compact): back to pending after
        a back-off, or stop the plan once its attempts are used up."""
        s = self.settings
        self._note_error(now, step, f"{message} (attempt {step.attempts}/{s.datastore_attempts})")
        if not retryable or step.attempts >= s.datastore_attempts:
            self._set(step, now, state="failed", finished_at=now)
            raise _Stop(message)
        wait = _backoff(s.datastore_backoff_s, s.datastore_backoff_max_s, step.attempts)
        self._set(step, now, state="pending", called=0, next_try_at=now + wait)

    # ------------------------------------------------ moves
    def _phase_move(self, now: float) -> bool:
        # a node protected after the plan was submitted keeps what its drain would have moved off
        draining = {d.node for d in self._of("drain") if not d.finished}
        for m in self._of("move"):
            why = self._protected_why(m.source) if m.source in draining else None
            if why is not None and m.state == "pending":
                self._set(m, now, state="skipped", finished_at=now, note=f"protected: {why}")
        moves = [m for m in self._of("move") if not m.finished]
        self._advance_moves(moves, now)
        return all(m.finished for m in self._of("move"))

    def _phase_verify(self, now: float) -> bool:
        parts = self._obs.parts
        reopened = 0
        for m in self._of("move"):
            if m.state != "done":
                continue
            dest = self._resolve(m.target)
            loc = parts.get(m.partition)
            if loc is not None and loc.server != dest:
                if m.attempts >= self.settings.datastore_attempts:
                    raise _Stop(f"{m.describe()}: the data store keeps moving it away (now on {loc.server})")
                self._set(m, now, state="pending", called=0, note="moved back by the data store",
                          event=f"{m.partition} found on {loc.server}, not {dest}: moving it again", level="error")
                reopened += 1
        if reopened:
            self._set_plan(now, phase="move", event=f"verify: {reopened} moves undone by the data store")
            return False
        return True

    def _phase_committed(self, now: float) -> bool:
        if not self._plan_row["committed"]:
            self._set_plan(now, committed=1, event="COMMIT: the new layout is in effect")
        return True

    def _advance_moves(self, moves: list[Step], now: float) -> None:
        """Observe running moves; start pending ones within the throttle and the incremental rule."""
        s, parts = self.settings, self._obs.parts
        for m in moves:
            if m.state != "running":
                continue
            dest = self._resolve(m.target)
            loc = parts.get(m.partition)
            if loc is None:
                self._set(m, now, state="skipped", finished_at=now, note="partition no longer exists")
            elif loc.server == dest:
                self._set(m, now, state="done", finished_at=now, error=None)
            elif not m.called and loc.server is None:
                self._set(m, now, called=1)  # already in transition: our call went out before a restart
            elif not m.called:
                self._issue_move(m, dest, now)
            elif _age(m, now) > s.move_timeout_s:
                self._requeue_or_stop(m, now, f"{m.partition} not on {dest} after {s.move_timeout_s:g} s "
                                              f"(on {loc.server})")
        in_flight = [m for m in self._of("move", plan_only=False) if m.state == "running"]
        new_servers = self._new_servers()
        # Incremental elasticity: toward a new node, only one source node sends at a time.
        sending: dict[str, str] = {}
        for m in in_flight:
            dest = self._resolve(m.target)
            if dest in new_servers and s.incremental_transfer:
                sending[dest] = m.source or ""
        pending = [m for m in moves if m.state == "pending"]
        pending.sort(key=lambda m: (self._resolve(m.target) or "", m.source or "", m.idx))
        for m in pending:
            if len(in_flight) >= s.max_concurrent_moves:
                break
            if m.next_try_at is not None and now < m.next_try_at:
                continue
            dest = self._resolve(m.target)
            loc = parts.get(m.partition)
            if loc is None:
                self._set(m, now, state="skipped", finished_at=now, note="partition no longer exists")
                continue
            if loc.server == dest:
                self._set(m, now, state="done", finished_at=now, note="already in place")
                continue
            src = loc.server or m.source or ""
            if dest in new_servers and s.incremental_transfer and sending.get(dest, src) != src:
                continue
            if src != m.source:
                m.source = src
            self._set(m, now, state="running", attempts=m.attempts + 1, called=0, since=now,
                      started_at=m.started_at or now, source=src)
            self._issue_move(m, dest, now)
            if m.state == "running":
                in_flight.append(m)
                if dest in new_servers and s.incremental_transfer:
                    sending[dest] = src

    def _issue_move(self, m: Step, dest: str, now: float) -> None:
        try:
            self.ds.move_partition(m.partition, dest)
        except DriverError as err:
            self._requeue_or_stop(m, now, f"move {m.partition} -> {dest} failed: {err}", err.retryable)
            return
        self._set(m, now, called=1)

    # ------------------------------------------------ recovery: compact, drain, terminate, finish
    def _phase_compact(self, now: float) -> bool:
        s, parts = self.settings, self._obs.parts
        steps = self._of("compact")
        running = [c for c in steps if c.state == "running"]
        for c in running:
            if c.partition not in parts:
                self._set(c, now, state="skipped", finished_at=now, note="partition no longer exists")
                continue
            busy = self.ds.compaction_running(c.partition)
            if not c.called:
                if busy:
                    self._set(c, now, called=1)
                    continue
                self._issue_compact(c, now)
            elif not busy and (c.since is None or now > c.since):
                self._set(c, now, state="done", finished_at=now, error=None)
            elif busy and _age(c, now) > s.compaction_timeout_s:
                self._requeue_or_stop(c, now, f"compaction of {c.partition} still running after "
                                            f"{s.compaction_timeout_s:g} s")
        n_running = sum(1 for c in steps if c.state == "running")
        for c in steps:
            if c.state != "pending" or n_running >= s.max_concurrent_compactions:
                continue
            if c.next_try_at is not None and now < c.next_try_at:
                continue
            if c.partition not in parts:
                self._set(c, now, state="skipped", finished_at=now, note="partition no longer exists")
                continue
            self._set(c, now, state="running", attempts=c.attempts + 1, called=0, since=now, started_at=now)
            self._issue_compact(c, now)
            n_running += 1
        return all(c.finished for c in steps)

    def _issue_compact(self, c: Step, now: float) -> None:
        try:
            self.ds.compact(c.partition)
        except DriverError as err:
            self._requeue_or_stop(c, now, f"compaction of {c.partition} failed: {err}", err.retryable)
            return
        self._set(c, now, called=1, since=now)

    def _phase_drain(self, now: float) -> bool:
        for step in self._of("drain"):
            if step.finished:
                continue
            if self._skip_protected(step, now):
                if not step.finished:
                    return False
                continue
            self._tick_drain(step, now)
            return False
        return True

    def _tick_drain(self, step: Step, now: float) -> None:
        s, obs, node = self.settings, self._obs, step.node
        server = obs.servers.get(node)
        if server is None or server.state == "stopped":
            self._set(step, now, state="done", finished_at=now, sub_state=None, error=None,
                      event=f"{node} decommissioned")
            return
        if step.sub_state in (None, "evacuate"):
            on_node = obs.on(node)
            children = [c for c in self._children(step)]
            covered = {c.partition for c in children if not c.finished}
            missing = [p for p in on_node if p not in covered]
            if missing:
                if step.attempts >= s.datastore_attempts:
                    raise _Stop(f"drain {node}: partitions keep returning to it")
                idx, new = self._next_idx(), []
                for p in missing:
                    dest = self._pick_destination(p, node, prefer_unreconfigured=False)
                    if dest is None:
                        raise _Stop(f"drain {node}: no other server to take {p}")
                    new.append(Step(idx=idx, op="move", parent=step.idx, partition=p, source=node, target=dest,
                                    cause="drain", reason=f"drain {node}"))
                    idx += 1
                self._add_steps(now, step, new, {"state": "running", "sub_state": "evacuate",
                                                 "attempts": step.attempts + 1, "since": now,
                                                 "started_at": step.started_at or now},
                                event=f"draining {len(new)} partitions left on {node}")
            self._advance_moves(self._children(step), now)
            if any(not c.finished for c in self._children(step)) or obs.on(node):
                return
            self._set(step, now, state="running", sub_state="decommission", called=0, since=now,
                      started_at=step.started_at or now)
        if step.sub_state == "decommission":
            if obs.on(node):  # something landed on it: never stop a serving server
                self._set(step, now, sub_state="evacuate")
                return
            if not step.called:
                if step.next_try_at is not None and now < step.next_try_at:
                    return
                try:
                    self.ds.decommission(node)
                except DriverError as err:
                    self._retry_or_stop(step, now, f"decommission of {node} failed: {err}", err.retryable)
                    return
                self._set(step, now, called=1, since=now, event=f"decommission of {node} requested")
            elif _age(step, now) > s.drain_timeout_s:
                self._retry_or_stop(step, now, f"{node} still up {s.drain_timeout_s:g} s after decommission")

    def _phase_terminate(self, now: float) -> bool:
        s, obs = self.settings, self._obs
        for step in self._of("terminate"):
            if step.finished:
                continue
            if self._skip_protected(step, now):
                continue
            node = obs.nodes.get(step.instance_id)
            if node is None or node.state in ("terminated", "stopping"):
                self._set(step, now, state="done", finished_at=now, error=None,
                          event=f"{step.node} (instance {step.instance_id}) terminated")
                continue
            serving = obs.on(step.node)
            if serving:
                raise _Stop(f"refusing to terminate {step.node}: it still serves {len(serving)} partitions")
            if step.state == "pending" or not step.called:
                if step.next_try_at is not None and now < step.next_try_at:
                    continue
                if step.state == "pending":
                    self._set(step, now, state="running", attempts=step.attempts + 1, called=0, since=now,
                              started_at=now)
                try:
                    self.infra.terminate(step.instance_id)
                except NotOwnedError:
                    raise
                except DriverError as err:
                    self._retry_or_stop(step, now, f"terminate {step.instance_id} failed: {err}", err.retryable)
                    continue
                self._set(step, now, called=1, since=now, event=f"terminate {step.instance_id} requested")
            elif _age(step, now) > s.terminate_timeout_s:
                self._retry_or_stop(step, now, f"{step.instance_id} not gone {s.terminate_timeout_s:g} s "
                                               "after terminate")
        return all(st.finished for st in self._of("terminate"))

    def _phase_finish(self, now: float) -> bool:
        self._restore_balancer(now)
        self._set_plan(now, state="done", event="plan done")
        log.info("plan %s done", self._plan_id)
        return True

    def _restore_balancer(self, now: float) -> None:
        if self._plan_row.get("balancer_was_on") == 1:
            try:
                self.ds.set_balancer(True)
            except DriverError as err:
                self._note_error(now, None, f"could not switch the balancer back on: {err}")
                return
            self._set_plan(now, balancer_was_on=0, event="balancer switched back on")

    # ------------------------------------------------ stop / abandon
    def _stop(self, now: float, reason: str) -> None:
        """Stop at a consistent point: start nothing new; in-flight moves end by themselves with
        each partition served either at its source or at its target."""
        for st in self._steps:
            if st.state == "pending":
                self._set(st, now, state="cancelled", note="plan stopped")
            elif st.state == "running":
                self._set(st, now, state="cancelled", finished_at=now,
                          note="in flight when the plan stopped (the driver may still complete it)")
        self._restore_balancer(now)
        self._set_plan(now, state="failed", error=reason, event=f"plan stopped: {reason}", level="error")
        log.error("plan %s stopped: %s", self._plan_id, reason)

    def _begin_abandon(self, now: float, reason: str) -> None:
        for st in self._steps:
            if st.state == "pending":
                self._set(st, now, state="cancelled", note="plan abandoned")
        self._set_plan(now, state="abandoning", error=reason, event=f"abandoning plan: {reason}", level="error")
        log.error("plan %s abandoned: %s", self._plan_id, reason)

    def _tick_abandon(self, now: float) -> None:
        """Roll back: move partitions off the nodes this plan launched (back where they were),
        then terminate those nodes; restore the balancer."""
        obs = self._obs
        layout: dict[str, str | None] = self._plan_row.get("layout") or {}
        landing = self._settle_running_moves(now)
        remaining = False
        for step in self._launch_steps():
            node = obs.nodes.get(step.instance_id) if step.instance_id else self._find_by_token(step.token)
            if node is None or node.state in ("terminated", "stopping"):
                if step.state not in ("failed", "cancelled", "rolled_back"):
                    self._set(step, now, state="rolled_back", sub_state=None, note="terminated by the rollback")
                continue
            remaining = True
            server = next((sv.id for sv in obs.servers.values() if node.address and sv.host == node.address), None)
            if server is not None and server in landing:
                continue  # a move toward it is still in flight: let it land, then move it back
            serving = obs.on(server) if server else []
            if serving:
                back = [c for c in self._children(step) if c.cause == "rollback"]
                covered = {c.partition for c in back if not c.finished}
                idx, new = self._next_idx(), []
                for p in serving:
                    if p in covered:
                        continue
                    dest = layout.get(p)
                    if dest not in obs.servers or dest == server or obs.servers[dest].state != "active":
                        dest = self._pick_destination(p, server, prefer_unreconfigured=False)
                    if dest is not None:
                        new.append(Step(idx=idx, op="move", parent=step.idx, partition=p, source=server,
                                        target=dest, cause="rollback", reason=f"roll back {step.node}"))
                        idx += 1
                if new:
                    self._add_steps(now, step, new, {}, event=f"moving {len(new)} partitions off {step.node}")
                self._advance_moves(self._children(step), now)
                continue
            if step.sub_state != "rollback":
                self._set(step, now, sub_state="rollback", event=f"rollback: terminating {node.instance_id}")
            try:
                self.infra.terminate(node.instance_id)
            except DriverError as err:
                self._note_error(now, step, f"rollback: terminate {node.instance_id} failed: {err}")
        if not remaining and not landing:
            for st in self._steps:
                if st.state in ("running", "pending"):
                    self._set(st, now, state="cancelled", finished_at=now, note="plan abandoned")
            self._restore_balancer(now)
            self._set_plan(now, state="abandoned", event="plan abandoned; nodes it launched are terminated")

    def _settle_running_moves(self, now: float) -> set[str]:
        """During a rollback: observe the plan's moves still in flight (none is issued again) and
        return the servers a partition may still land on."""
        parts, landing = self._obs.parts, set()
        for m in self._of("move", plan_only=False):
            if m.state != "running" or m.cause == "rollback":
                continue
            dest = self._resolve(m.target)
            loc = parts.get(m.partition)
            if loc is None:
                self._set(m, now, state="skipped", finished_at=now, note="partition no longer exists")
            elif loc.server == dest:
                self._set(m, now, state="done", finished_at=now, note="landed during the rollback")
            elif loc.server is None:
                landing.add(dest)  # in transition: it may be landing on a node we are about to remove
            else:
                self._set(m, now, state="cancelled", finished_at=now, note="plan abandoned")
        return landing

    # ------------------------------------------------ status text
    def _current(self) -> str:
        row = self._plan_row
        if row.get("state") not in ("running", "abandoning"):
            return ""
        if row["state"] == "abandoning":
            return f"abandoning: {row.get('error') or ''}"
        active = [s for s in self._steps if s.state == "running"]
        if not active:
            return row["phase"]
        head = active[0]
        extra = f" ({head.sub_state})" if head.sub_state else ""
        more = f" +{len(active) - 1} more" if len(active) > 1 else ""
        return f"{row['phase']}: {head.describe()}{extra}{more}"
