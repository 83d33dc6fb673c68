"""One assembly of the daemon: a config and a backend in, a control loop ready to run out.

`metctl run` (simulated or live), the simulator harness (`metctl simulate`, the benches) and
the tests build their stack with `assemble()`; only the backend differs:

- a simulated cluster (`controller.harness.SimulatedBackend`): metric source, infrastructure
  and data store of simulator/, on its simulated clock;
- a live cluster (`controller.live.open_live_backend`): HBase or Cassandra through their
  drivers, nodes from EC2, OpenStack or local processes, real time.

Around it, optionally: a `Production` (structured logs, the Prometheus endpoint, leader
election) watches the sources, fences the drivers and the executor and adds its observers; a
`ControlPlane` (pause, pin, protection, windows, the HTTP API) is attached to the loop.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from actuator.drivers import DataStoreDriver, InfrastructureDriver
from actuator.executor import Executor
from actuator.journal import Journal
from actuator.userdata import render_user_data
from controller.clock import Clock
from controller.config import MetctlConfig
from controller.control_plane import ControlPlane
from controller.loop import ControlLoop, LoopObserver, MemoryStore
from controller.production import Production
from decision.policies import unread_history
from monitor.collector import Collector
from monitor.source import MetricsSource

log = logging.getLogger("metctl.assembly")


class Backend(Protocol):
    """What a cluster gives the daemon: time, metric sources, the two drivers, a journal; and
    for the console, each tenant's latency when the backend knows it (a simulated cluster
    does; None otherwise) and the objective it is held to (None: the policy's)."""

    @property
    def clock(self) -> Clock: ...

    @property
    def sources(self) -> list[MetricsSource]: ...

    @property
    def infrastructure(self) -> InfrastructureDriver: ...

    @property
    def datastore(self) -> DataStoreDriver: ...

    @property
    def journal(self) -> Journal: ...

    @property
    def tenants(self) -> Callable[[], dict[str, float]] | None: ...

    @property
    def slo_ms(self) -> float | None: ...

    def close(self) -> None: ...


@dataclass
class Daemon:
    """The assembled daemon. `start()` serves what the control plane and production serve;
    `close()` stops them and closes the backend (idempotent)."""

    config: MetctlConfig
    backend: Backend
    collector: Collector
    executor: Executor
    loop: ControlLoop
    production: Production | None = None
    plane: ControlPlane | None = None
    _closed: bool = field(default=False, repr=False)

    def start(self) -> tuple[str, int] | None:
        """Serve the API (first: the console's address is the first thing an operator sees),
        then production (logs, Prometheus, the election). The API's address, if served."""
        address = self.plane.start() if self.plane is not None else None
        if self.production is not None:
            self.production.start()
        return address

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.plane is not None:
                self.plane.close()
            if self.production is not None:
                self.production.close()
        finally:
            self.backend.close()


def assemble(config: MetctlConfig, backend: Backend, *, observers: Sequence[LoopObserver] = (),
             memory_path: str | None = None, production: Production | None = None,
             control: bool = False) -> Daemon:
    """Wire `backend` to the collector, the journaled executor and the control loop.

    memory_path: where the decision memory is kept between decisions (None: in memory).
    production: the service around the daemon (sources watched, drivers and executor behind
    the leadership fence, its observers after `observers`). control: attach the operator's
    control plane (it needs `production` for the leadership and the telemetry)."""
    sources = production.watch(backend.sources) if production else list(backend.sources)
    collector = Collector(sources, config.monitor)
    infra, store = backend.infrastructure, backend.datastore
    if production is not None:  # the executor's cluster-changing driver calls ask the fence
        infra, store = production.fence_drivers(infra, store)
    fields = config.profile_fields()
    executor = Executor(infra, store, config.executor, backend.clock.now, config.cluster,
                        backend.journal,
                        user_data=lambda profile: render_user_data(config.cluster, profile,
                                                                   fields(profile)))
    loop = ControlLoop(collector, production.fence(executor) if production else executor,
                       config.policy, config.loop, backend.clock,
                       memory=MemoryStore(memory_path),
                       observers=[*observers, *(production.observers if production else ())],
                       may_act=production.may_act if production else None)
    unread = unread_history(loop.memory)
    if unread:  # an older or newer metctl's memory: kept, never misread; said once
        log.warning("%s: %d key(s) no policy of this version reads, kept as they are: %s",
                    memory_path, len(unread), ", ".join(unread[:5]) + (", ..." if len(unread) > 5 else ""),
                    extra={"event": "memory.unread_keys"})
    plane = None
    if control:
        plane = ControlPlane(config, leadership=production.leadership if production else None,
                             telemetry=production.telemetry if production else None)
        plane.attach(loop, step_listeners=production.step_listeners if production else None,
                     tenants=backend.tenants, slo_ms=backend.slo_ms)
    return Daemon(config, backend, collector, executor, loop, production, plane)


__all__ = ["Backend", "Daemon", "assemble"]
