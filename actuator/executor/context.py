"""The small context every phase module works over: the drivers, the settings, the journal,
the plan's row and steps, this tick's observations, and the helpers that change state — each
change journaled first (write-ahead), then applied, and checked against the transition tables."""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

from tenacity import RetryCallState, wait_exponential

from actuator.drivers import (
    DataStoreDriver, DriverError, InfrastructureDriver, ManagedNode, PartitionLocation, ServerInfo,
    TAG_LAUNCH,
)
from actuator.executor.states import set_state
from actuator.executor.step import Step
from actuator.journal import Journal
from actuator.settings import ExecutorSettings

log = logging.getLogger("metctl.actuator")


class StopPlan(Exception):
    """Raised inside a tick to stop the plan at a consistent point."""


class Observation:
    """The drivers' views, fetched at most once per tick (the passive half of a tick)."""

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


def age(step: Step, now: float) -> float:
    """Seconds since the step entered its current sub-state (0 when unknown)."""
    return now - step.since if step.since is not None else 0.0


def backoff(base_s: float, max_s: float, attempt: int) -> float:
    """Exponential back-off (tenacity's): base, 2·base, 4·base … capped at max_s."""
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = max(1, attempt)
    return float(wait_exponential(multiplier=base_s, min=0, max=max_s)(state)) if base_s > 0 else 0.0


class Context:
    """What a phase module may read and change. `obs` is set for the duration of one tick."""

    def __init__(self, infra: InfrastructureDriver, datastore: DataStoreDriver,
                 settings: ExecutorSettings, clock: Callable[[], float], cluster: str,
                 journal: Journal | None, user_data: Callable[[str], str]):
        self.infra, self.ds, self.settings, self.clock, self.cluster = infra, datastore, settings, clock, cluster
        self.journal = journal if journal is not None else Journal(settings.journal_path)
        self.user_data = user_data
        self.plan_id: str | None = None
        self.plan_row: dict[str, Any] = {}
        self.steps: list[Step] = []
        self.assignment: dict[str, tuple[str, ...]] = {}
        self.last_error: str | None = None
        self.obs: Observation = None  # type: ignore[assignment]  # set by Executor.tick
        # Operators' protection (node -> why), read before each restart, drain and terminate
        # (actuator/executor/protection.py); set by controller.control_plane.
        self.protected: Callable[[], Mapping[str, str]] = dict

    @property
    def journaled(self) -> str:
        """The id of the plan loaded (the phases run only on one)."""
        if self.plan_id is None:
            raise RuntimeError("no plan loaded")
        return self.plan_id

    @property
    def busy(self) -> bool:
        return self.plan_id is not None and self.plan_row.get("state") in ("running", "abandoning")

    @property
    def running(self) -> bool:
        """In flight and rolling forward (not rolling back)."""
        return self.busy and self.plan_row["state"] == "running"

    def load(self, plan_id: str) -> None:
        row = self.journal.load_plan(plan_id)
        assert row is not None
        self.plan_id, self.plan_row = plan_id, row
        self.steps = [Step(**r) for r in self.journal.load_steps(plan_id)]
        self.assignment = {a["node"]: tuple(a["partitions"]) for a in row["plan"].get("assignment", [])}

    def set_step(self, step: Step, now: float, *, event: str | None = None, level: str = "info", **changes: Any) -> None:
        """Journal the change first (write-ahead), then apply it in memory; a state change must
        be in the step transition table."""
        if "state" in changes:
            set_state("step", step.state, changes["state"])
        self.journal.update_step(self.journaled, step.idx, now, event=event, level=level, **changes)
        for k, v in changes.items():
            setattr(step, k, v)
        if level == "error" and event:
            self.last_error = event

    def set_plan(self, now: float, *, event: str | None = None, level: str = "info", **changes: Any) -> None:
        """Journal a plan change, then apply it; plan state and phase changes must be in their tables."""
        if "state" in changes:
            set_state("plan", self.plan_row.get("state"), changes["state"])
        if "phase" in changes:
            set_state("phase", self.plan_row.get("phase"), changes["phase"])
        self.journal.update_plan(self.journaled, now, event=event, level=level, **changes)
        self.plan_row.update(changes)
        if level == "error" and event:
            self.last_error = event

    def add_steps(self, now: float, parent: Step, new: list[Step], parent_changes: Mapping[str, Any],
                   event: str | None) -> None:
        self.journal.add_steps(self.journaled, [s.row() for s in new], now,
                               parent_update=(parent.idx, dict(parent_changes)), event=event)
        self.steps.extend(new)
        for k, v in parent_changes.items():
            setattr(parent, k, v)

    def note_error(self, now: float, step: Step | None, message: str) -> None:
        log.warning("plan %s: %s", self.plan_id, message)
        if message != self.last_error:
            if step is None:
                self.journal.update_plan(self.journaled, now, event=message, level="error")
            else:
                self.journal.update_step(self.journaled, step.idx, now, event=message, level="error", error=message)
                step.error = message
        self.last_error = message

    def next_idx(self) -> int:
        return max((s.idx for s in self.steps), default=-1) + 1

    def of(self, op: str, *, parent: int | None = None, plan_only: bool = True) -> list[Step]:
        return [s for s in self.steps if s.op == op and (not plan_only or s.parent is None)
                and (parent is None or s.parent == parent)]

    def children(self, step: Step) -> list[Step]:
        return [s for s in self.steps if s.parent == step.idx]

    def launch_steps(self) -> list[Step]:
        return self.of("launch")

    def resolve(self, node: str | None) -> str | None:
        """Plan node id → data-store server id (placeholders "new-1"… map to the launched server)."""
        for s in self.launch_steps():
            if s.node == node:
                return s.server_id
        return node

    def new_servers(self) -> set[str]:
        return {s.server_id for s in self.launch_steps() if s.server_id}

    def leaving(self) -> set[str]:
        return {s.node for s in self.steps if s.op in ("drain", "terminate") and s.node}

    def find_by_token(self, token: str | None) -> ManagedNode | None:
        if not token:
            return None
        for n in self.obs.nodes.values():
            if n.tags.get(TAG_LAUNCH) == token:
                return n
        return None

    def pending_reconfigure_nodes(self) -> set[str]:
        return {s.need("node") for s in self.of("reconfigure") if not s.finished}

    def final_target(self, partition: str) -> str | None:
        for s in self.of("move"):
            if s.partition == partition:
                return self.resolve(s.target)
        for node, parts in self.assignment.items():
            if partition in parts:
                return self.resolve(node)
        return None

    def pick_destination(self, partition: str, away_from: str, prefer_unreconfigured: bool) -> str | None:
        obs = self.obs
        leaving = self.leaving()
        # A node the plan removes may still hold a partition for a while during a
        # reconfiguration (last resort: it is drained later); never during a drain.
        active = [sv.id for sv in obs.servers.values()
                  if sv.state == "active" and sv.id != away_from
                  and (sv.id not in leaving or prefer_unreconfigured)]
        final = self.final_target(partition)
        pending_rc = self.pending_reconfigure_nodes() - {away_from}
        if final in active and final not in pending_rc and final not in leaving:
            return final
        if not active:
            return None
        inbound: dict[str | None, int] = {}  # None: a new node not launched yet
        for st in self.of("move", plan_only=False):
            if not st.finished:
                dest = self.resolve(st.target)
                here = obs.parts.get(st.partition or "")
                if dest is not None and here is not None and here.server == dest:
                    # already there, only not marked done yet: counted, it sent the partitions
                    # elsewhere after a resume than in the run that was not interrupted
                    continue
                inbound[dest] = inbound.get(dest, 0) + 1
        settled = self.new_servers() | {s.node for s in self.of("reconfigure") if s.state == "done"}

        def load(sid: str) -> tuple[int, int, str]:
            # MET: a node's partitions go to nodes not yet reconfigured; nodes that already run
            # their final profile (reconfigured or new) take them only as a last resort.
            rank = 0
            if prefer_unreconfigured:
                rank = 3 if sid in leaving else 0 if sid in pending_rc else 2 if sid in settled else 1
            return rank, len(obs.on(sid)) + inbound.get(sid, 0), sid
        return min(active, key=load)

    def retry_or_stop(self, step: Step, now: float, message: str, retryable: bool = True) -> None:
        s = self.settings
        self.note_error(now, step, f"{message} (attempt {step.attempts + 1}/{s.datastore_attempts})")
        if not retryable or step.attempts + 1 >= s.datastore_attempts:
            self.set_step(step, now, state="failed", finished_at=now)
            raise StopPlan(message)
        wait = backoff(s.datastore_backoff_s, s.datastore_backoff_max_s, step.attempts + 1)
        self.set_step(step, now, attempts=step.attempts + 1, called=0, since=now, next_try_at=now + wait)

    def requeue_or_stop(self, step: Step, now: float, message: str, retryable: bool = True) -> None:
        """A failed attempt of a step counted at each start (move, compact): back to pending after
        a back-off, or stop the plan once its attempts are used up."""
        s = self.settings
        self.note_error(now, step, f"{message} (attempt {step.attempts}/{s.datastore_attempts})")
        if not retryable or step.attempts >= s.datastore_attempts:
            self.set_step(step, now, state="failed", finished_at=now)
            raise StopPlan(message)
        wait = backoff(s.datastore_backoff_s, s.datastore_backoff_max_s, step.attempts)
        self.set_step(step, now, state="pending", called=0, next_try_at=now + wait)

    def restore_balancer(self, now: float) -> None:
        if self.plan_row.get("balancer_was_on") == 1:
            try:
                self.ds.set_balancer(True)
            except DriverError as err:
                self.note_error(now, None, f"could not switch the balancer back on: {err}")
                return
            self.set_plan(now, balancer_was_on=0, event="balancer switched back on")

    def stop(self, now: float, reason: str) -> None:
        """Stop at a consistent point: start nothing new; in-flight moves end by themselves with
        each partition served either at its source or at its target."""
        for st in self.steps:
            if st.state == "pending":
                self.set_step(st, now, state="cancelled", note="plan stopped")
            elif st.state == "running":
                self.set_step(st, now, state="cancelled", finished_at=now,
                          note="in flight when the plan stopped (the driver may still complete it)")
        self.restore_balancer(now)
        self.set_plan(now, state="failed", error=reason, event=f"plan stopped: {reason}", level="error")
        log.error("plan %s stopped: %s", self.plan_id, reason)

    def begin_abandon(self, now: float, reason: str) -> None:
        for st in self.steps:
            if st.state == "pending":
                self.set_step(st, now, state="cancelled", note="plan abandoned")
        self.set_plan(now, state="abandoning", error=reason, event=f"abandoning plan: {reason}", level="error")
        log.error("plan %s abandoned: %s", self.plan_id, reason)
