"""The control loop: sample → (every N samples) decide → hand the plan to the executor → tick it
until it ends → clear the monitor's history (MET §4.1) → sample again.

It holds no policy of its own: sizing, placement and profiles come from `decision.decide`; the
loop only decides *whether* to act now — it holds, with an enumerated cause and words, when
the metrics are not complete enough, when this controller may not act (leader fencing), during
the scale-in stabilization window or the cooldown after a scale-out, or when a plan leaves
min/max nodes. A failing iteration is logged and held on with a bounded back-off; the loop never
dies of one bad tick.

It never sleeps by itself: every wait goes through the injected Clock, so the daemon on real
time (RealClock) and a simulation (whose clock advances the simulated cluster) are one code path.
Observers (the live view, the report, Prometheus telemetry) get `on_sample`, `on_decision`,
`on_hold`, `on_action` and `on_error` calls.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Callable, Protocol, Sequence

from controller.clock import Clock
from controller.hold_causes import policy_hold
from controller.loop_settings import LoopSettings
from decision import decide
from decision.model import PLAN_IN_FLIGHT, ClusterSnapshot, DecisionMemory, Plan
from decision.policies import policy_of
from decision.policy import PolicyConfig
from controller.logs import log_decision
from controller.logs import log_hold
from controller.state import read_memory
from controller.state import write_memory

log = logging.getLogger("metctl.loop")


class HoldCause(str, Enum):
    """Why a decision round did not lead to an action."""

    STALE_METRICS = "stale_metrics"  # snapshot not complete enough (monitor's rule)
    NOT_LEADER = "not_leader"  # may_act() said no (another controller leads)
    STABILIZATION = "stabilization"  # scale-in wanted, but not for long enough yet
    COOLDOWN = "cooldown"  # a size change too soon after a scale-out
    BOUNDS = "bounds"  # the plan leaves min_nodes..max_nodes
    ERROR = "error"  # the iteration failed; backing off
    NO_CHANGE = "no_change"  # the policy asked for nothing (its own causes: controller/hold_causes.py)
    PAUSED = "paused"  # an operator paused metctl (control.ControlGate)
    WINDOW = "window"  # scale-in / reconfiguration outside the maintenance windows
    OBSERVE = "observe"  # observe-only mode: decide and explain, never act


class LoopObserver:
    """Hooks for the live view, reports and telemetry. Every method is optional (no-op here)."""

    def on_sample(self, now: float, samples_since_clear: int) -> None: ...

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None: ...

    def on_hold(self, now: float, cause: HoldCause | str, words: str) -> None: ...

    def on_action(self, now: float, event: str, plan_id: str | None, status: object | None) -> None: ...

    def on_error(self, now: float, error: BaseException) -> None: ...


class MetricsCollector(Protocol):
    samples_since_clear: int

    def poll(self, now: float) -> None: ...

    def snapshot(self, now: float) -> ClusterSnapshot: ...

    def clear(self) -> None: ...

    def complete_enough(self, snapshot: ClusterSnapshot) -> tuple[bool, str]: ...


# Samples since the history was cleared before a decision can be complete: a request rate
# (and a CPU read from counters) is the difference of two polls, so a policy asked at every
# sample would otherwise hold `stale_metrics` at the first sample after every plan.
RATES_NEED = 2


class PlanExecutor(Protocol):
    @property
    def busy(self) -> bool: ...

    def submit(self, plan: Plan, plan_id: str) -> None: ...

    def tick(self): ...

    def resume(self): ...


class MemoryStore:
    """Where the decision memory lives between decisions: a file (controller.state) or RAM."""

    def __init__(self, path: str | None = None):
        self.path = path

    def load(self) -> DecisionMemory:
        if not self.path:
            return DecisionMemory()
        return read_memory(self.path)

    def save(self, memory: DecisionMemory) -> None:
        if not self.path:
            return
        write_memory(self.path, memory)


@dataclass
class LoopCounters:
    """Every decision round is counted once in `decisions` and ends in a plan submitted
    (`plans`) or a hold (`holds`): decisions == plans + holds. A hold before the policy ran
    (stale metrics, an error) is a round too."""

    samples: int = 0
    decisions: int = 0
    holds: int = 0
    plans: int = 0
    plans_failed: int = 0
    errors: int = 0
    by_cause: dict[str, int] = field(default_factory=dict)  # holds by cause

    def line(self) -> str:
        """The one way a run says what it decided: `20 decisions: 2 plans, 18 holds
        (within_slo 12, transient 6)`."""
        causes = ", ".join(f"{c} {n}" for c, n in sorted(self.by_cause.items(), key=lambda x: (-x[1], x[0])))
        return (f"{_count(self.decisions, 'decision')}: {_count(self.plans, 'plan')}, "
                f"{_count(self.holds, 'hold')}" + (f" ({causes})" if causes else ""))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class ControlLoop:
    def __init__(self, collector: MetricsCollector, executor: PlanExecutor, policy: PolicyConfig,
                 settings: LoopSettings, clock: Clock, *, memory: MemoryStore | None = None,
                 observers: Sequence[LoopObserver] = (), may_act: Callable[[], bool] | None = None,
                 decide_fn: Callable[[ClusterSnapshot, PolicyConfig, DecisionMemory], Plan] = decide):
        self.collector, self.executor, self.policy = collector, executor, policy
        self.settings, self.clock = settings, clock
        self.memory_store = memory or MemoryStore(None)
        self.memory = self.memory_store.load()
        self.observers = list(observers)
        self.may_act = may_act or (lambda: True)
        self.decide_fn = decide_fn
        self.counters = LoopCounters()
        self.next_sample_at: float | None = None
        self.samples_at_last_round = 0  # samples_since_clear when the last decision round ran
        self.scale_in_wanted_since: float | None = None
        self.last_scale_out_done_at: float | None = None
        self._plan_in_flight: Plan | None = None
        self._in_flight_target = 0  # the size the plan in flight leads to, extensions included
        self._plan_id: str | None = None
        self._failures = 0
        self.last_hold: tuple[HoldCause | str, str] | None = None
        self.last_plan: Plan | None = None
        self._resumed = False
        # The operator's controls (controller.control.ControlGate): pause, pin, protection,
        # windows, observe mode. None: none (simulations, tests).
        self.control = None
        self._suspended_words: str | None = None

    # ------------------------------------------------------------------ driving
    def run(self, *, until: float | None = None, rounds: int | None = None,
            on_iteration: Callable[[float], None] | None = None) -> None:
        """Iterate until simulated/real time reaches `until`, or `rounds` decision rounds ran
        (a round is a decision or a hold at decision time), whichever comes first."""
        start_rounds = self.counters.decisions
        while True:
            now = self.clock.now()
            if until is not None and now >= until:
                return
            if rounds is not None and self.counters.decisions - start_rounds >= rounds \
                    and not self.executor.busy:
                return
            wait = self.iterate()
            if on_iteration is not None:
                on_iteration(self.clock.now())
            if rounds is not None and self.counters.decisions - start_rounds >= rounds \
                    and not self.executor.busy:
                return
            if until is not None:
                wait = min(wait, max(0.0, until - self.clock.now()))
            self.clock.sleep(wait)

    def iterate(self) -> float:
        """One pass; returns how long to wait before the next. Never raises."""
        now = self.clock.now()
        try:
            wait = self._iterate(now)
            self._failures = 0
            return wait
        except Exception as err:  # noqa: BLE001 — the loop survives a bad tick
            self._failures += 1
            self.counters.errors += 1
            delay = self.settings.backoff(self._failures)
            log.exception("loop iteration failed (%d in a row); holding for %.0f s", self._failures, delay)
            for o in self.observers:
                _safe(o.on_error, now, err)
            self._hold(now, HoldCause.ERROR, f"{type(err).__name__}: {err}; retrying in {delay:g} s")
            return delay

    def _iterate(self, now: float) -> float:
        s = self.settings
        if not self._resumed:
            self._resumed = True
            status = self.executor.resume()
            if self.executor.busy:
                log.info("resuming the plan in flight: %s", getattr(status, "plan_id", "?"))
                self._plan_id = getattr(status, "plan_id", None)
        if self.executor.busy:
            if self.control is not None:
                words = self.control.plan_suspended()
                if words != self._suspended_words:  # say it once, not every tick
                    self._suspended_words = words
                    if words:
                        log.info("plan in flight suspended: %s", words)
                if words:
                    self._observe_during_plan(now, extend=False)  # still shown, never extended
                    return s.executor_tick_s
            self._observe_during_plan(now)
            return self._tick_executor(now)
        if self.next_sample_at is None or now >= self.next_sample_at - 1e-9:
            self.collector.poll(now)
            self.counters.samples += 1
            self.next_sample_at = (self.next_sample_at or now) + s.sample_interval_s
            if self.next_sample_at <= now:
                self.next_sample_at = now + s.sample_interval_s
            for o in self.observers:
                _safe(o.on_sample, now, self.collector.samples_since_clear)
            every = s.samples_per_decision(self.policy)
            since_clear = self.collector.samples_since_clear
            if since_clear - self.samples_at_last_round >= every and since_clear >= RATES_NEED:
                self._decision_round(now)
                if self.executor.busy:
                    return self._tick_executor(self.clock.now())
        return max(0.0, self.next_sample_at - now)

    # ------------------------------------------------------------------ deciding
    def _decision_round(self, now: float) -> None:
        snapshot = self.collector.snapshot(now)
        ok, why = self.collector.complete_enough(snapshot)
        if not ok:
            # Never act on missing metrics: try again at the next sample.
            self._hold(now, HoldCause.STALE_METRICS, why)
            return
        self.samples_at_last_round = self.collector.samples_since_clear
        policy = self.control.policy(self.policy) if self.control is not None else self.policy
        plan = self.decide_fn(snapshot, policy, self.memory)
        if self.control is not None:
            plan = self.control.protect(plan)  # protected nodes: no restart, drain, terminate
        self.counters.decisions += 1
        self.last_plan = plan
        delta = plan.sizing.delta
        # the scale-in stabilization window: how long removal has been wanted without a break
        if delta < 0:
            if self.scale_in_wanted_since is None:
                self.scale_in_wanted_since = now
        else:
            self.scale_in_wanted_since = None
        plan_id = (None if plan.is_empty
                   else f"{plan.policy}-{self.counters.plans + 1:04d}-{int(now)}")
        for o in self.observers:
            _safe(o.on_decision, now, plan, plan_id, snapshot)
        if plan.is_empty:
            self._commit_memory(plan.memory)
            # the policy's own hold: counted, logged (one line) and shown like the loop's
            # (controller/hold_causes.py)
            self._hold(now, *policy_hold(plan.reason or plan.sizing.reason), decided=True, plan=plan)
            return
        log_decision(log, plan, plan_id)
        cause = self._veto(now, plan)
        if cause is not None:
            # the memory stays: a vetoed plan did not happen
            self._hold(now, *cause, decided=True)
            return
        assert plan_id is not None  # a plan with actions has one
        self.executor.submit(plan, plan_id)
        self.counters.plans += 1
        self._plan_in_flight, self._plan_id = plan, plan_id
        self._in_flight_target = plan.sizing.target
        self._commit_memory(plan.memory)
        for o in self.observers:
            _safe(o.on_action, now, "submitted", plan_id, None)

    def _asks_during_plans(self) -> bool:
        """The default met sized from demand is asked at every sample while a plan runs (it
        may extend a scale-out whose demand grew); the other policies wait for the plan."""
        p = self.policy
        return policy_of(p).during_plans(p) and callable(getattr(self.executor, "extend", None))

    def _observe_during_plan(self, now: float, *, extend: bool = True) -> None:
        """While a plan runs the monitor keeps sampling at its pace when someone reads the
        samples: those who show the cluster (observers with `on_observation`: the API's status,
        the console), so what they show is not as old as the plan (it stayed fixed for 327 s);
        and the default met sized from demand, asked at each sample (`_extend_plan`). Runs
        with neither (simulate) sample nothing more; the history is cleared when the plan ends
        (MET §4.1) as before."""
        watchers = [fn for o in self.observers if (fn := getattr(o, "on_observation", None))]
        asks = extend and self._asks_during_plans() and self._plan_in_flight is not None
        if not (watchers or asks) or (self.next_sample_at is not None
                                      and now < self.next_sample_at - 1e-9):
            return
        self.collector.poll(now)
        self.counters.samples += 1
        self.next_sample_at = now + self.settings.sample_interval_s
        snapshot = self.collector.snapshot(now)
        for fn in watchers:
            _safe(fn, now, snapshot)
        if asks:
            self._extend_plan(now, snapshot)

    def _extend_plan(self, now: float, snapshot: ClusterSnapshot) -> None:
        """Ask the policy (told the size the plan leads to); a launch-only answer extends the
        plan in flight (the executor adds the launches while the plan still launches), anything
        else waits for the plan's end. What the policy learned is kept only when it held or its
        extension was taken."""
        if not self.collector.complete_enough(snapshot)[0]:
            return
        policy = self.control.policy(self.policy) if self.control is not None else self.policy
        target = self._in_flight_target
        plan = self.decide_fn(snapshot, policy, self.memory.with_plan_in_flight(target))
        memory = replace(plan.memory, history=tuple(
            h for h in plan.memory.history if h[0] != PLAN_IN_FLIGHT))
        if plan.is_empty:
            self._commit_memory(memory)
            return
        if plan.sizing.target > policy.max_nodes or not self.may_act() or (
                self.control is not None and self.control.hold(plan) is not None):
            return
        added = self.executor.extend(plan)  # type: ignore[attr-defined]
        if not added:
            self._cut_short(plan)
            return
        self._in_flight_target = target + sum(a.op == "launch" for a in plan.actions)
        self.counters.decisions += 1
        self.counters.plans += 1  # a decision that acted: decisions == plans + holds
        self.last_plan = plan
        self._commit_memory(memory)
        for o in self.observers:
            _safe(o.on_decision, now, plan, self._plan_id, snapshot)
        log_decision(log, plan, self._plan_id)

    def _cut_short(self, plan: Plan) -> None:
        """A scale-out asked for while a scale-in runs: the scale-in's remaining steps are
        cancelled (the executor's cut_short) so that its nodes stay and the scale-out is decided
        as soon as the moves under way have landed, not after the nodes it needs were emptied
        and terminated. What the policy learned is not kept: the next round decides afresh."""
        cut = getattr(self.executor, "cut_short", None)
        if plan.sizing.delta <= 0 or not callable(cut):
            return  # the executor refuses any plan in flight but a scale-in
        cancelled = cut(f"the demand turned: {plan.sizing.reason}")
        if cancelled:
            log.info("plan %s cut short for a scale-out to %d nodes (%d step(s) cancelled)",
                     self._plan_id, plan.sizing.target, cancelled)

    def _veto(self, now: float, plan: Plan) -> tuple[HoldCause, str] | None:
        s, p = self.settings, self.policy
        if self.control is not None:
            p = self.control.policy(p)  # a pinned size is the bounds
        target = plan.sizing.target
        if target > p.max_nodes or target < p.min_nodes:
            return HoldCause.BOUNDS, f"plan targets {target} nodes, outside {p.min_nodes}..{p.max_nodes}"
        if plan.sizing.delta != 0 and self.last_scale_out_done_at is not None \
                and now - self.last_scale_out_done_at < s.cooldown_after_scale_out_s:
            left = s.cooldown_after_scale_out_s - (now - self.last_scale_out_done_at)
            return HoldCause.COOLDOWN, (f"size change {plan.sizing.current}->{target} within the "
                                        f"cooldown after a scale-out ({left:.0f} s left)")
        if plan.sizing.delta < 0 and s.scale_in_stabilization_s > 0:
            since = self.scale_in_wanted_since if self.scale_in_wanted_since is not None else now
            if now - since < s.scale_in_stabilization_s:
                return HoldCause.STABILIZATION, (
                    f"scale-in {plan.sizing.current}->{target} wanted for {now - since:.0f} s, "
                    f"needs {s.scale_in_stabilization_s:g} s without a break")
        if not self.may_act():
            return HoldCause.NOT_LEADER, "may_act() refused: this controller may not act now"
        if self.control is not None:  # the operator's controls: observe, paused, window
            held = self.control.hold(plan)
            if held is not None:
                return HoldCause(held[0]), held[1]
        return None

    def _commit_memory(self, memory: DecisionMemory) -> None:
        self.memory = memory
        self.memory_store.save(memory)

    def _hold(self, now: float, cause: HoldCause | str, words: str, *, decided: bool = False,
              plan: Plan | None = None) -> None:
        """A round ends without a plan. `cause`: the loop's HoldCause, or the policy's cause
        (a str) for its `plan` without actions; `decided`: the round's decision is counted."""
        if not decided:
            self.counters.decisions += 1
        self.counters.holds += 1
        name = cause_name(cause)
        self.counters.by_cause[name] = self.counters.by_cause.get(name, 0) + 1
        self.last_hold = (cause, words)
        log_hold(log, name, words, plan=plan)
        for o in self.observers:
            _safe(o.on_hold, now, cause, words)

    # ------------------------------------------------------------------ acting
    def _tick_executor(self, now: float) -> float:
        status = self.executor.tick()
        state = getattr(status, "state", "idle")
        if self.executor.busy:
            return self.settings.executor_tick_s
        # The plan ended (done, failed or abandoned): whatever happened changed the cluster, so
        # the history before it no longer describes it (MET §4.1).
        self.collector.clear()
        self.samples_at_last_round = 0
        self.next_sample_at = now
        plan, plan_id = self._plan_in_flight, self._plan_id
        self._plan_in_flight = self._plan_id = None
        # The policy times its warm-up and its check of what a scale-out bought from here.
        self._commit_memory(self.memory.with_plan_ended(now))
        if state != "done":
            self.counters.plans_failed += 1
            log.warning("plan %s ended %s: %s", plan_id, state, getattr(status, "reason", ""))
        elif plan is not None and plan.sizing.delta > 0:
            self.last_scale_out_done_at = now
        for o in self.observers:
            _safe(o.on_action, now, state, plan_id, status)
        return 0.0


def cause_name(cause: HoldCause | str) -> str:
    """A hold cause's name, whether the loop's (an Enum member) or the policy's (a str)."""
    return cause.value if isinstance(cause, HoldCause) else str(cause)


def _safe(fn: Callable, *args) -> None:
    """Observers must never break the loop."""
    try:
        fn(*args)
    except Exception:  # noqa: BLE001
        log.exception("observer %r failed", fn)
