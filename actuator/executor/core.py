"""The executor: carries out a Plan through an infrastructure driver and a data-store driver,
step by step, journaling each step before and after it runs.

It is a NON-BLOCKING state machine: `tick()` observes the cluster (the drivers' `nodes()`,
`servers()` and `partitions()`, at most once each), lets the current phase map what it sees to
state transitions, then issue the driver calls that start what may start, and returns. No
driver call waits for an operation to complete: completion is observed on later ticks, and
every limit is in ONE timeout table (actuator/executor/states.py). Time comes only from the
injected `clock`, so the same code runs on real time (the daemon) and simulated time.

Order (MET's actuator with the incremental-elasticity transfer), as Parqua-style phases, one
module each (docs/executor.md has the generated state tables):

  prepare      journal the plan; check it against the cluster (a node to terminate that metctl
               neither launched nor adopted is drained only: its terminate is skipped, with the
               reason); switch the data store's balancer off                        (prepare.py)
  launch       launch placeholder nodes "new-1"… and wait until running and registered, each
               state with its own timeout; failed attempts are terminated and retried (launch.py)
  reconfigure  one node at a time: evacuate, restart with the new profile, refill (reconfigure.py)
  split        split hot partitions, one at a time a server; done when the store lists the
               daughters (a split the store refuses is skipped: the partition stays whole) (split.py)
  move         the remaining moves, at most `max_concurrent_moves` in flight        (moves.py)
               These four work phases overlap (states.ALONGSIDE): while one runs, the later ones
               start each step whose dependencies are done (states.WAITS_FOR, ready.py) — a
               reconfigure of a node whose partitions need no new node, a move between existing
               nodes — so that work goes on while the new VMs boot. A move onto a new node
               starts once that node is registered. The phase shown is the earliest one with
               work left; each still begins only when the one before it is complete.
  verify       every move is observed in place (the store may have moved one back: redo it)
  committed    ONE journal write: the new layout is in effect; from here the plan rolls forward
  compact      major compactions the plan carries (restore locality)                (retire.py)
  drain        move what is left off each removed node, then decommission its server
  terminate    terminate removed nodes: never one serving partitions, never one not owned
               (launched or adopted, actuator/adoption.py)
  finish       restore the balancer if it was on
  (abandoning) roll back: partitions off the new nodes, then terminate them      (rollback.py);
               work already done on existing nodes (moves between them, reconfigurations,
               splits) stays: every partition is served, the next decision starts from there

A scale-in the demand turned against is cut short (`cut_short`): its pending steps are
cancelled in one journal write, the moves under way land, its leaving nodes stay.

A data-store action that keeps failing stops the plan at a consistent point (every partition is
served somewhere; the journal says why). A restarted controller calls `resume()`: the journal
plus fresh observations say exactly where each step stood. Steps are idempotent by observation:
a move whose partition is already at its target, a restart whose server already runs the new
profile, a launch whose token tag is already on a node — none is done twice.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Callable

from actuator.drivers import DataStoreDriver, DriverError, InfrastructureDriver, NotOwnedError
from actuator.executor import launch, moves, prepare, reconfigure, retire, rollback, split
from actuator.executor.context import Context, Observation, StopPlan, log
from actuator.executor.states import ALONGSIDE, PHASE_ORDER, Phase, set_state
from actuator.executor.step import ACTION_FIELDS, Step
from actuator.journal import Journal
from actuator.settings import ExecutorSettings
from actuator.userdata import render_user_data
from decision.model import Plan

# The phase modules' tick functions: each returns True when its phase is complete.
PHASE_TICKS: dict[Phase, Callable[[Context, float], bool]] = {
    Phase.PREPARE: prepare.tick,
    Phase.LAUNCH: launch.tick,
    Phase.RECONFIGURE: reconfigure.tick,
    Phase.SPLIT: split.tick,
    Phase.MOVE: moves.tick_move,
    Phase.VERIFY: moves.tick_verify,
    Phase.COMMITTED: moves.tick_commit,
    Phase.COMPACT: retire.tick_compact,
    Phase.DRAIN: retire.tick_drain,
    Phase.TERMINATE: retire.tick_terminate,
    Phase.FINISH: retire.tick_finish,
}


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


class Executor(Context):
    def __init__(self, infra: InfrastructureDriver, datastore: DataStoreDriver,
                 settings: ExecutorSettings, clock: Callable[[], float], cluster: str,
                 journal: Journal | None = None, *,
                 user_data: Callable[[str], str] | None = None):
        super().__init__(infra, datastore, settings, clock, cluster, journal,
                         user_data or (lambda profile: render_user_data(cluster, profile)))

    def submit(self, plan: Plan, plan_id: str) -> None:
        """Journal the plan (prepare). Refuses while another plan is in flight."""
        if self.busy:
            raise ExecutorBusy(f"plan {self.plan_id} is still in flight")
        if self.journal.in_flight() is not None:
            raise ExecutorBusy(f"plan {self.journal.in_flight()} is in flight in the journal; resume() it first")
        if self.journal.load_plan(plan_id) is not None:
            raise ValueError(f"plan id {plan_id} is already in the journal")
        steps = [Step(idx=i, **{f: getattr(a, f) for f in ACTION_FIELDS}).row()
                 for i, a in enumerate(plan.actions)]
        now = self.clock()
        doc = dict(plan.to_dict(), plan_id=plan_id, cluster=self.cluster)
        self.journal.create_plan(plan_id, self.cluster, doc, steps, now)
        log.info("plan %s journaled: %d actions", plan_id, len(steps))
        self.load(plan_id)
        self.last_error = None

    def extend(self, plan: Plan) -> int:
        """Add `plan` (launches, splits, and moves onto the nodes it launches or between
        existing ones) to the plan in flight while it is still launching: the extension's nodes
        boot beside the others, its splits and moves run alongside as the plan's own do, and
        the plan ends once all is done. Its placeholders are renamed after the plan's own
        ("new-3" …); a move or split of a partition the plan moves or splits (or did) is left
        out (one whose moves have all ended may move again: the executor moves it from wherever
        it is): the policy decided on a snapshot taken while the plan ran, which may not show
        it yet. The exception: a move still waiting for a node that boots gives way to one onto
        a node serving now (the first is cancelled, the journal says so), the policy having
        found its source hot early in the boot (decision/rules/extend.py). Returns how many
        actions were added: 0 (nothing added) when no plan is in flight, it is past its launch
        phase or rolling back, or `plan` does anything else."""
        if not self.running or self.plan_row["phase"] not in (Phase.PREPARE.value,
                                                             Phase.LAUNCH.value):
            return 0
        launches = [a for a in plan.actions if a.op == "launch"]
        if not plan.actions or any(a.op not in ("launch", "move", "split") for a in plan.actions):
            return 0
        taken = {s.node for s in self.launch_steps()}
        # a partition the plan splits, or still moves, is its own; one whose moves all ended
        # may move on (a node its move filled may be hot by now)
        moving = {s.partition for s in self.steps
                  if s.op == "split" or (s.op == "move" and not s.finished)}
        now, idx, n = self.clock(), self.next_idx(), len(taken)
        rename: dict[str, str] = {}
        for a in launches:
            n += 1
            while f"new-{n}" in taken:
                n += 1
            rename[a.node or ""] = f"new-{n}"
        new = [Step(idx=idx + j, op="launch", node=rename[a.node or ""], profile=a.profile,
                    reason=a.reason, cause=a.cause) for j, a in enumerate(launches)]
        # A move still waiting for a node that boots gives way to one onto a node serving now:
        # the policy found its source hot and room elsewhere, and the boot takes minutes.
        waiting = {s.partition: s for s in self.steps
                   if s.op == "move" and s.state == "pending" and self.resolve(s.target) is None}
        retargeted = [waiting[a.partition] for a in plan.actions
                      if a.op == "move" and a.partition in waiting and a.target not in rename
                      and self.resolve(a.target) is not None]
        moving -= {s.partition for s in retargeted}
        for a in plan.actions:
            if a.op == "move" and a.partition not in moving:
                new.append(Step(idx=idx + len(new), op="move", partition=a.partition,
                                source=a.source, target=rename.get(a.target or "", a.target),
                                reason=a.reason, cause=a.cause))
            elif a.op == "split" and a.partition not in moving:
                new.append(Step(idx=idx + len(new), op="split", node=a.node,
                                partition=a.partition, reason=a.reason, cause=a.cause))
        if not new:
            return 0
        event = f"plan extended: {len(new)} more action(s) ({len(launches)} launch(es))"
        if retargeted:
            event += f"; {len(retargeted)} move(s) to booting nodes re-targeted"
        # the waiting moves cancelled and their replacements added in one write (in two, a
        # crash between them would leave a move cancelled as re-targeted and none in its place)
        self._cancel(retargeted, now, "re-targeted: a node serving now takes it", event,
                     added=new)
        self.steps.extend(new)
        log.info("plan %s extended: %d more action(s), %d launch(es)", self.plan_id, len(new),
                 len(launches))
        return len(new)

    def cut_short(self, why: str) -> int:
        """End a scale-in early because the demand turned (`why`): its pending steps — the
        moves not started, the drains and terminates — are cancelled in one journal write; the
        moves under way land and the plan ends `done` as soon as they have, its leaving nodes
        still serving what they kept. A scale-out waits for a plan to end, so without this it
        waits for the nodes it will need to be emptied and terminated first. Refused (returns
        0) unless the plan in flight launches nothing, removes nodes and has started none of
        its drains or terminates (from the decommission call on, the removal is irreversible);
        else returns how many steps were cancelled."""
        if not self.running or self.plan_row["state"] != "running" or self.launch_steps() \
                or not self.leaving():
            return 0
        if any(s.state != "pending" for s in self.steps if s.op in ("drain", "terminate")):
            return 0
        pending = [s for s in self.steps if s.state == "pending"]
        if not pending:
            return 0
        note = f"plan cut short: {why}"
        self._cancel(pending, self.clock(), note, f"{note} ({len(pending)} step(s) cancelled; "
                     f"{', '.join(sorted(self.leaving()))} stay(s))")
        log.info("plan %s cut short (%d step(s) cancelled): %s", self.plan_id, len(pending), why)
        return len(pending)

    def _cancel(self, steps: list[Step], now: float, note: str, event: str,
                added: Sequence[Step] = ()) -> None:
        """`steps` (pending) cancelled with `note`, and the steps `added` journaled, in one
        journal write saying `event`."""
        changes = {"state": "cancelled", "finished_at": now, "note": note}
        for st in steps:
            set_state("step", st.state, "cancelled")
        updates = [(st.idx, changes) for st in steps]
        if added:
            self.journal.add_steps(self.journaled, [s.row() for s in added], now,
                                   updates=updates, event=event)
        else:
            self.journal.update_steps(self.journaled, updates, now, event=event)
        for st in steps:
            for k, v in changes.items():
                setattr(st, k, v)

    def resume(self) -> ExecutionStatus:
        """On start-up: pick up a journaled plan in flight and finish it (or roll it back when
        `on_resume` is 'rollback' and its commit point was not reached)."""
        plan_id = self.journal.in_flight()
        if plan_id is None:
            latest = self.journal.latest()
            if latest is not None:
                self.load(latest)
            return self.status()
        self.load(plan_id)
        now = self.clock()
        self.journal.update_plan(plan_id, now, event="controller restarted: resuming plan")
        log.info("resuming plan %s at phase %s", plan_id, self.plan_row["phase"])
        if (self.settings.on_resume == "rollback" and not self.plan_row["committed"]
                and self.plan_row["state"] == "running"):
            self.begin_abandon(now, "controller restarted before the commit point (on_resume: rollback)")
        return self.status()

    def status(self) -> ExecutionStatus:
        if self.plan_id is None:
            return ExecutionStatus(state="idle")
        row = self.plan_row
        state = {"running": "running", "abandoning": "running"}.get(row["state"], row["state"])
        plan_steps = [s for s in self.steps if s.parent is None]
        done = sum(1 for s in plan_steps if s.state in ("done", "skipped"))
        return ExecutionStatus(
            state=state, plan_id=self.plan_id,
            phase="abandoning" if row["state"] == "abandoning" else row["phase"],
            actions_done=done, actions_total=len(plan_steps), current=self._current(),
            last_error=self.last_error or row.get("error"),
            reason=row.get("error") or "" if row["state"] in ("failed", "abandoned") else "")

    def tick(self) -> ExecutionStatus:
        """Advance the plan in flight as far as it can go without waiting; never blocks."""
        if not self.busy:
            return self.status()
        now = self.clock()
        self.obs = Observation(self.infra, self.ds)
        try:
            if self.plan_row["state"] == "abandoning":
                rollback.tick(self, now)
            else:
                self._tick_phase(now)
        except StopPlan as stop:
            self.stop(now, str(stop))
        except NotOwnedError as err:
            self.stop(now, f"refused: {err}")
        except DriverError as err:
            # An observation failed (the API is unreachable): nothing was changed; try next tick.
            self.note_error(now, None, f"observing the cluster failed: {err}")
        finally:
            self.obs = None  # type: ignore[assignment]
        return self.status()

    def _tick_phase(self, now: float) -> None:
        # A step journaled as failed whose consequence (stop / abandon) was not journaled yet:
        # the controller died between the two writes. Finish what it had started.
        failed = next((st for st in self.steps if st.state == "failed"), None)
        if failed is not None:
            if failed.op == "launch":
                self.begin_abandon(now, f"launch of {failed.node} failed: {failed.error}")
            else:
                raise StopPlan(f"{failed.describe()}: {failed.error}")
            return
        # Each phase handler returns True when the phase is complete; then the next one starts
        # within the same tick (phase changes are journal writes of their own). A phase not
        # complete yet lets the later work phases ALONGSIDE it start their ready steps (each
        # handler runs at most once a tick).
        while self.busy and self.plan_row["state"] == "running":
            phase = Phase(self.plan_row["phase"])
            complete = PHASE_TICKS[phase](self, now)
            if self.plan_row["state"] != "running":
                return
            if not complete:
                for later in ALONGSIDE.get(phase, ()):
                    PHASE_TICKS[later](self, now)
                    if self.plan_row["state"] != "running":
                        return
                return
            if phase == Phase.FINISH:
                return
            nxt = PHASE_ORDER[PHASE_ORDER.index(phase) + 1].value
            self.set_plan(now, phase=nxt, event=f"phase {nxt}")

    def _current(self) -> str:
        row = self.plan_row
        if row.get("state") not in ("running", "abandoning"):
            return ""
        if row["state"] == "abandoning":
            return f"abandoning: {row.get('error') or ''}"
        active = [s for s in self.steps if s.state == "running"]
        if not active:
            return row["phase"]
        head = active[0]
        extra = f" ({head.sub_state})" if head.sub_state else ""
        # While the work phases overlap, say what else runs (a move during the boot), not only
        # how many: the first of each other kind of step in flight.
        also: list[Step] = []
        for st in active[1:]:
            if st.op != head.op and all(st.op != a.op for a in also):
                also.append(st)
        named = f"; {', '.join(a.describe() for a in also)}" if also else ""
        more = f" +{len(active) - 1} more{named}" if len(active) > 1 else ""
        return f"{row['phase']}: {head.describe()}{extra}{more}"

