"""What `metctl run` needs to run as a service, in one place: structured logs, the Prometheus
endpoint, leader election with fencing, SIGTERM hand-over.

    prod = Production(config)
    prod.start()                                   # logs, endpoint, election, SIGTERM handler
    loop = ControlLoop(Collector(prod.watch(sources), …), prod.fence(executor), …,
                       observers=[*prod.observers], may_act=prod.may_act)
    try:
        loop.run()
    finally:
        prod.close()                               # release leadership, stop the endpoint
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import IO, Any

from controller.ha import FencedExecutor, Leadership, install_sigterm
from controller.logs import setup_logging
from controller.telemetry import (NullTelemetry, StepWatcher, Telemetry, TelemetryObserver,
                                  WatchedSource)

log = logging.getLogger("metctl.run")


class Production:
    def __init__(self, config: Any, *, stream: IO[str] | None = None):
        self.config = config
        self.logger = setup_logging(config.telemetry, stream)
        self.leadership = Leadership(config.ha, config.cluster)
        self.telemetry: Any = (
            Telemetry.create(config.telemetry, identity=self.leadership.identity)
            if config.telemetry.prometheus_enabled else NullTelemetry())
        self.leadership.add_listener(self.telemetry.set_leader)
        self.observers: Sequence[Any] = (TelemetryObserver(self.telemetry),)

    def start(self, *, handle_sigterm: bool = True) -> None:
        """Serve the endpoint, then join the election (alone: lead at once, and say so)."""
        if isinstance(self.telemetry, Telemetry):
            self.telemetry.serve()
        if handle_sigterm:
            install_sigterm(self.leadership)
        self.leadership.start()
        if not self.leadership.alone:
            log.info("following until elected", extra={"event": "ha.follower",
                                                       "identity": self.leadership.identity})

    def may_act(self) -> bool:
        return self.leadership.may_act()

    def fence(self, executor: Any) -> FencedExecutor:
        """The executor behind the leadership fence, its finished steps counted and logged."""
        journal = getattr(executor, "journal", None)
        watcher = StepWatcher(journal, self.telemetry) if journal is not None else None
        return FencedExecutor(executor, self.leadership, after_tick=watcher)

    def watch(self, sources: Iterable[Any]) -> list[Any]:
        """Metric sources whose errors and staleness are exported."""
        return [WatchedSource(s, self.telemetry) for s in sources]

    def close(self) -> None:
        self.leadership.close()
        self.telemetry.close()
