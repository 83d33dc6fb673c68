"""The evaluation harness: one simulated cluster wired to the real monitor collector, the real
executor and the real control loop, exactly as the daemon wires live sources and drivers.
`metctl simulate`, `metctl run` (on the demo config) and the tests build their stack here."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from actuator.executor import Executor
from actuator.journal import Journal
from controller.config import MetctlConfig
from controller.loop import ControlLoop, HoldCause, LoopObserver, MemoryStore
from decision.model import ClusterSnapshot, Plan
from monitor.collector import Collector
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

    def on_hold(self, now: float, cause: HoldCause, words: str) -> None:
        self.holds.append((now, cause.value, words))

    def on_action(self, now: float, event: str, plan_id: str | None, status: object | None) -> None:
        self.plan_events.append((now, event, plan_id))
        if event == "submitted":
            self.busy_since = now
        elif self.busy_since is not None:
            self.busy_intervals.append((self.busy_since, now))
            self.busy_since = None

    def on_error(self, now: float, error: BaseException) -> None:
        self.errors.append((now, f"{type(error).__name__}: {error}"))


@dataclass
class SimRun:
    """One simulated run, ready to go."""

    config: MetctlConfig
    scenario: Scenario
    cluster: SimCluster
    clock: SimClock
    collector: Collector
    executor: Executor
    loop: ControlLoop
    recorder: Recorder
    wall_s: float = 0.0

    def run(self, until: float | None = None, *, progress: Callable[[float], None] | None = None,
            rounds: int | None = None) -> None:
        end = self.scenario.duration_s if until is None else until
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
              wrap_sources: Callable[[list], list] | None = None,
              wrap_executor: Callable[[Executor], object] | None = None,
              wrap_drivers: Callable[[object, object], tuple] | None = None,
              may_act: Callable[[], bool] | None = None, clock: object | None = None) -> SimRun:
    """Wire a simulated cluster to the collector, executor and loop.

    policy overrides config.policy.name; data_transfer overrides the scenario's and the
    simulator's (none | incremental | parallel) and sets the executor to match (incremental:
    one source at a time toward a new node; parallel: every source at once)."""
    if scenario is None or isinstance(scenario, str):
        scenario = load_scenario(scenario or config.simulator.scenario)
    if policy is not None:
        config = config.model_copy(update={"policy": config.policy.model_copy(update={"name": policy})})
    if data_transfer is not None:
        scenario = scenario.model_copy(update={"data_transfer": data_transfer})
    if config.policy.latency_slo_ms is None:
        # the tenants' objective is the scenario's: the policy is told it, as an operator would
        config = config.model_copy(update={"policy": config.policy.model_copy(
            update={"latency_slo_ms": float(scenario.slo_latency_ms)})})
    mode = scenario.data_transfer or config.simulator.data_transfer
    ex = config.executor
    if mode == "parallel":
        ex = ex.model_copy(update={"incremental_transfer": False,
                                   "max_concurrent_moves": max(ex.max_concurrent_moves, 64)})
    elif mode == "incremental":
        ex = ex.model_copy(update={"incremental_transfer": True})
    cluster = SimCluster(scenario, config.simulator, seed=seed, cluster=config.cluster)
    # The store's own balancer: off when the policy places partitions itself (MET; an operator
    # sets hbase.balancer.period high while metctl is in charge), on otherwise (tiramola relies
    # on HBase's balancer to give new nodes regions; static is plain HBase).
    cluster.balancer_on = config.policy.name != "met"
    clock = clock(cluster) if callable(clock) else SimClock(cluster)
    sources: list = [SimMetricsSource(cluster)]
    collector = Collector(wrap_sources(sources) if wrap_sources else sources, config.monitor)
    # A simulated cluster starts empty every time: its journal lives in memory, so a plan of
    # an earlier run is never "resumed" against a new simulated cluster.
    drivers = (SimInfrastructure(cluster), SimDataStore(cluster))
    if wrap_drivers is not None:  # e.g. behind the leadership fence (controller.ha.fence_drivers)
        drivers = wrap_drivers(*drivers)
    executor = Executor(*drivers, ex, clock.now, config.cluster, journal=Journal(":memory:"))
    recorder = Recorder()
    loop = ControlLoop(collector, wrap_executor(executor) if wrap_executor else executor,
                       config.policy, config.loop, clock, memory=MemoryStore(memory_path),
                       observers=[recorder, *observers], may_act=may_act)
    return SimRun(config, scenario, cluster, clock, collector, executor, loop, recorder)
