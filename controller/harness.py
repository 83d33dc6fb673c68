"""The evaluation harness: a simulated cluster as the daemon's backend, assembled by
controller.assembly exactly as a live cluster is (the real collector, executor and loop), and a
Recorder of what the loop did. `metctl simulate`, `metctl run` (on the demo config), the
benches and the tests build their simulated runs here."""
from __future__ import annotations

import fcntl
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from actuator.executor import Executor
from actuator.journal import Journal
from controller.assembly import Daemon, assemble
from controller.config import MetctlConfig
from controller.console.view import sim_tenants
from controller.loop import ControlLoop, HoldCause, LoopObserver, cause_name
from controller.production import Production
from decision.model import ClusterSnapshot, Plan
from decision.policies import policy_of
from monitor.collector import Collector
from monitor.source import MetricsSource
from simulator.adapters import SimClock, SimDataStore, SimInfrastructure, SimMetricsSource
from simulator.cluster import SimCluster
from simulator.scenario import Scenario, load_scenario


@dataclass
class DecisionRecord:
    t: float
    plan_id: str | None
    reason: str
    current: int
    target: int
    delta: int
    actions: int
    kinds: dict[str, int]


@dataclass
class Recorder(LoopObserver):
    """Keeps what the loop did, for the report and the live view."""

    decisions: list[DecisionRecord] = field(default_factory=list)
    holds: list[tuple[float, str, str]] = field(default_factory=list)
    plan_events: list[tuple[float, str, str | None]] = field(default_factory=list)
    busy_since: float | None = None
    busy_intervals: list[tuple[float, float]] = field(default_factory=list)
    errors: list[tuple[float, str]] = field(default_factory=list)
    last_snapshot: ClusterSnapshot | None = None

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:
        kinds: dict[str, int] = {}
        for a in plan.actions:
            kinds[a.op] = kinds.get(a.op, 0) + 1
        self.decisions.append(DecisionRecord(now, plan_id, plan.reason, plan.sizing.current,
                                             plan.sizing.target, plan.sizing.delta, len(plan.actions), kinds))
        self.last_snapshot = snapshot

    def on_hold(self, now: float, cause: HoldCause | str, words: str) -> None:
        self.holds.append((now, cause_name(cause), words))

    def on_action(self, now: float, event: str, plan_id: str | None, status: object | None) -> None:
        self.plan_events.append((now, event, plan_id))
        if event == "submitted":
            self.busy_since = now
        elif self.busy_since is not None:
            self.busy_intervals.append((self.busy_since, now))
            self.busy_since = None

    def on_error(self, now: float, error: BaseException) -> None:
        self.errors.append((now, f"{type(error).__name__}: {error}"))


class SimulatedBackend:
    """A simulated cluster as the daemon's backend: its metric source, infrastructure and data
    store (simulator.adapters), its clock and a journal, in memory or (`metctl run`, so
    `metctl status` can read it) a file started afresh: a simulated cluster starts empty every
    time, so a plan of an earlier run is never "resumed" against a new one."""

    def __init__(self, config: MetctlConfig, scenario: Scenario, *, seed: int | None = None,
                 clock: Callable[[SimCluster], SimClock] | None = None,
                 journal_path: str | None = None):
        self.cluster = SimCluster(scenario, config.simulator, seed=seed, cluster=config.cluster)
        # The store's own balancer: off when the policy places partitions itself (the
        # registry, decision/policies.py, says which do), on otherwise.
        self.cluster.balancer_on = not policy_of(config.policy).places_partitions
        self.clock = clock(self.cluster) if clock is not None else SimClock(self.cluster)
        self.sources: list[MetricsSource] = [SimMetricsSource(self.cluster)]
        self.infrastructure = SimInfrastructure(self.cluster)
        self.datastore = SimDataStore(self.cluster)
        self._in_use: int | None = None
        if journal_path and journal_path != ":memory:" and not journal_path.startswith("file:"):
            self._in_use = _start_afresh(journal_path)
        try:
            self.journal = Journal(journal_path or ":memory:")
        except BaseException:
            self.close_lock()
            raise
        if self._in_use is not None:
            fcntl.flock(self._in_use, fcntl.LOCK_SH)  # made: others may share it now
        # the console's latency chart: each simulated workload, against the scenario's objective
        self.tenants: Callable[[], dict[str, float]] | None = sim_tenants(self.cluster)
        self.slo_ms: float | None = scenario.slo_latency_ms

    def close(self) -> None:
        self.journal.close()
        self.close_lock()

    def close_lock(self) -> None:
        if self._in_use is not None:
            os.close(self._in_use)  # its lock goes with it
            self._in_use = None


def _start_afresh(journal_path: str) -> int:
    """Remove the journal (and SQLite's files beside it) unless another simulated run has it
    open; returns the descriptor of its `.in-use` file, locked exclusive (the caller creates
    the journal, then shares the lock) or shared. Two instances of one simulated run (HA, in a
    test or a demo) share a state directory: the second must not delete the journal the first
    has open under it (SQLite then fails with "disk I/O error"), so it waits for the first to
    have made it and shares it."""
    Path(journal_path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # as the journal's
    fd = os.open(journal_path + ".in-use", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fcntl.flock(fd, fcntl.LOCK_SH)  # once the one that starts it afresh has made it
        return fd
    for old in (journal_path, *(journal_path + x for x in ("-wal", "-shm", "-journal"))):
        Path(old).unlink(missing_ok=True)
    return fd


def simulated_config(config: MetctlConfig, scenario: Scenario, *, policy: str | None = None
                     ) -> MetctlConfig:
    """The config a simulated run uses: `policy` overrides config.policy.name; the policy is
    told the scenario's latency objective when the config sets none (as an operator would);
    the executor moves data the way the scenario's store does (incremental: one source at a
    time toward a new node; parallel: every source at once)."""
    if policy is not None:
        config = config.model_copy(update={"policy": config.policy.model_copy(update={"name": policy})})
    if config.policy.latency_slo_ms is None:
        config = config.model_copy(update={"policy": config.policy.model_copy(
            update={"latency_slo_ms": float(scenario.slo_latency_ms)})})
    mode = scenario.data_transfer or config.simulator.data_transfer
    ex = config.executor
    if mode == "parallel":
        ex = ex.model_copy(update={"incremental_transfer": False,
                                   "max_concurrent_moves": max(ex.max_concurrent_moves, 64)})
    elif mode == "incremental":
        ex = ex.model_copy(update={"incremental_transfer": True})
    return config.model_copy(update={"executor": ex})


@dataclass
class SimRun:
    """One simulated run, ready to go."""

    config: MetctlConfig
    scenario: Scenario
    daemon: Daemon
    recorder: Recorder
    wall_s: float = 0.0

    @property
    def backend(self) -> SimulatedBackend:
        assert isinstance(self.daemon.backend, SimulatedBackend)
        return self.daemon.backend

    @property
    def cluster(self) -> SimCluster:
        return self.backend.cluster

    @property
    def clock(self) -> SimClock:
        return self.backend.clock

    @property
    def collector(self) -> Collector:
        return self.daemon.collector

    @property
    def executor(self) -> Executor:
        return self.daemon.executor

    @property
    def loop(self) -> ControlLoop:
        return self.daemon.loop

    def run(self, until: float | None = None, *, progress: Callable[[float], None] | None = None,
            rounds: int | None = None) -> None:
        end = self.scenario.duration_s if until is None else until
        # simulated time moves in whole ticks: an end between two (a replayed recording lasts
        # 38.187 s) is rounded up to the next, or the loop waited for a time it never reached
        tick = self.cluster.settings.tick_s
        end = math.ceil(end / tick - 1e-9) * tick
        t0 = time.perf_counter()
        self.loop.run(until=end, rounds=rounds, on_iteration=progress)
        if rounds is None and self.cluster.t < end:
            self.clock.sleep(end - self.cluster.t)
        if self.recorder.busy_since is not None:
            self.recorder.busy_intervals.append((self.recorder.busy_since, self.cluster.t))
            self.recorder.busy_since = None
        self.wall_s += time.perf_counter() - t0


def build_run(config: MetctlConfig, scenario: Scenario | str | None = None, *, seed: int | None = None,
              policy: str | None = None, data_transfer: str | None = None,
              observers: Sequence[LoopObserver] = (), memory_path: str | None = None,
              production: Production | None = None, control: bool = False,
              clock: Callable[[SimCluster], SimClock] | None = None,
              journal_path: str | None = None) -> SimRun:
    """The daemon (controller.assembly) on a simulated cluster, with a Recorder first among
    its observers.

    policy overrides config.policy.name; data_transfer overrides the scenario's and the
    simulator's (none | incremental | parallel); see `simulated_config`. production and control
    as in `assemble` (what `metctl run` on the simulator adds); journal_path: a file journal,
    started afresh (default: in memory)."""
    if scenario is None or isinstance(scenario, str):
        scenario = load_scenario(scenario or config.simulator.scenario)
    if data_transfer is not None:
        scenario = scenario.model_copy(update={"data_transfer": data_transfer})
    config = simulated_config(config, scenario, policy=policy)
    recorder = Recorder()
    backend = SimulatedBackend(config, scenario, seed=seed, clock=clock, journal_path=journal_path)
    daemon = assemble(config, backend, observers=[recorder, *observers], memory_path=memory_path,
                      production=production, control=control)
    return SimRun(config, scenario, daemon, recorder)
