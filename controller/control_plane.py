"""Wires the operator's controls into `metctl run`: the control store, the gate the loop
consults, the live status the API reads, the HTTP API server, and the control metrics.

    plane = ControlPlane(config, leadership=prod.leadership, telemetry=prod.telemetry)
    plane.attach(loop)        # loop.control = gate; live status observer; tick progress
    plane.start()             # token file, API server
    ...
    plane.close()
"""
from __future__ import annotations

import errno
import json
import logging
import os
import time
from pathlib import Path
from typing import Any, TYPE_CHECKING

from controller.control import ControlGate, LiveStatus
from controller.errors import BadInput
from controller.events import EventRecorder, EventStore
from controller.webhooks import WebhookSender
from controller.api import ApiServer, ensure_token
from controller.api_events import add_event_routes
from common.files import append_private, private_dir
from common.models import parse_model
from controller.console.routes import add_console_routes
from controller.console.view import ClusterView
from controller.control import ControlSettings
from controller.control_store import default_state_path, open_control_store
from controller.telemetry import Telemetry
from decision import decide
from decision.model import Plan

if TYPE_CHECKING:  # the config imports the sections this module serves
    from controller.config import MetctlConfig

log = logging.getLogger("metctl.control")

# The control metrics (docs/control.md lists them; a test keeps the two in step). Kept apart
# from controller.telemetry.METRICS because they are read from the control store at scrape time.
CONTROL_METRICS: tuple[tuple[str, str], ...] = (
    ("metctl_paused", "1 while an operator's pause is in force (decisions held, cause paused)."),
    ("metctl_protected_nodes", "Nodes protected from restart, drain and termination."),
    ("metctl_pinned", "1 while the cluster size is pinned (PUT /v1/size, metctl pin)."),
)


class _ProgressExecutor:
    """The loop's executor, reporting each tick's status to the live view (plan in flight)
    and the plan-progress gauges."""

    def __init__(self, executor: Any, live: LiveStatus, telemetry: Any = None):
        self._executor, self._live, self._telemetry = executor, live, telemetry

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executor, name)

    @property
    def busy(self) -> bool:
        return self._executor.busy

    def submit(self, plan: Plan, plan_id: str) -> None:
        self._executor.submit(plan, plan_id)

    def tick(self) -> Any:
        status = self._executor.tick()
        self._live.on_tick(status)
        self._progress(status)
        return status

    def _progress(self, status: Any) -> None:
        if self._telemetry is None:
            return
        if self._executor.busy:
            self._telemetry.record_plan_progress(getattr(status, "actions_done", 0) or 0,
                                                 getattr(status, "actions_total", 0) or 0)
        else:
            self._telemetry.record_plan_progress(0, 0)

    def resume(self) -> Any:
        status = self._executor.resume()
        self._live.on_tick(status)
        return status


class DecisionLog:
    """Decisions and holds appended as JSON lines (bounded: one rotation at `max_bytes`)."""

    def __init__(self, path: Path, max_bytes: int = 4 << 20):
        self.path, self.max_bytes = path, max_bytes
        self._said = False  # an unwritable record is logged once, not at every decision

    def __call__(self, entry: dict[str, Any]) -> None:
        try:
            private_dir(self.path.parent)
            if os.lstat(self.path).st_size > self.max_bytes:
                os.replace(self.path, self.path.with_suffix(".jsonl.1"))
        except FileNotFoundError:
            pass
        try:
            # 0600, never through a symbolic link (it appended to, and created, the target)
            append_private(self.path, json.dumps(entry, default=str) + "\n")
        except OSError as err:
            if not self._said:
                why = "it is a symbolic link" if err.errno == errno.ELOOP else \
                    (err.strerror or type(err).__name__)
                log.error("decisions and holds are not recorded in %s: %s", self.path, why,
                          extra={"event": "control.decision_log_unwritable"})
                self._said = True
            raise


class ControlPlane:
    def __init__(self, config: MetctlConfig, *, leadership: Any = None, telemetry: Any = None,
                 wall_clock: Any = time.time):

        self.config, self.settings = config, config.control
        self.leadership = leadership
        self.store = open_control_store(config)
        self.gate = ControlGate(self.settings, self.store, wall_clock)
        # decisions and holds also go to a file beside the control state (the API keeps the
        # last `decisions_kept` in memory)
        record = (DecisionLog(default_state_path(config).with_name("decisions.jsonl"))
                  if config.loop.memory_path or self.settings.state_path else None)
        self.live = LiveStatus(self.settings.decisions_kept, wall_clock, record=record)
        self.events = EventStore(self.settings.events_kept, wall_clock)
        self.recorder = EventRecorder(self.events)
        self.webhooks = WebhookSender(self.settings.webhooks, telemetry,
                                      leading=leadership.is_leader if leadership else None)
        self.events.listeners.append(self.webhooks.offer)
        self.telemetry = telemetry
        self.view: Any = None
        self.loop: Any = None
        self.server: Any = None
        self.wall = wall_clock
        if isinstance(telemetry, Telemetry):  # not NullTelemetry (endpoint off or no client)
            self._register_metrics(telemetry.registry)

    def _register_metrics(self, registry: Any) -> None:
        import prometheus_client as prom  # noqa: PLC0415 — optional extra: metctl[metrics]

        values = {
            "metctl_paused": lambda: 1.0 if self.store.state.active_pause(self.wall()) else 0.0,
            "metctl_protected_nodes": lambda: float(len(self.store.state.protected)),
            "metctl_pinned": lambda: 1.0 if self.store.state.pin else 0.0,
        }
        for name, help_text in CONTROL_METRICS:
            prom.Gauge(name, help_text, registry=registry).set_function(values[name])

    def attach(self, loop: Any, *, step_listeners: list | None = None,
               tenants: Any = None, slo_ms: float | None = None) -> None:
        """Into `loop`: the gate, the live status, events and the console's cluster view.
        `step_listeners` is telemetry's StepWatcher list (controller.production.Production);
        `tenants`/`slo_ms` feed the console's latency chart (controller.console.view)."""

        self.loop = loop
        loop.control = self.gate
        self.view = ClusterView(loop.policy, protected=self.protected_nodes, tenants=tenants,
                                slo_ms=slo_ms if slo_ms is not None else loop.policy.latency_slo_ms,
                                telemetry=self.telemetry, simulated=tenants is not None)
        self.view.listeners.append(self.live._changed)  # noqa: SLF001 — one change signal
        loop.observers.extend([self.live, self.recorder, self.view])
        if step_listeners is not None:
            step_listeners.append(self.live.on_steps)
            step_listeners.append(lambda plan_id, steps, finished:
                                  self.recorder.on_steps(plan_id, finished))
        # the executor itself checks protection before each restart, drain and terminate, so a
        # plan submitted before the protection honours it too
        inner = loop.executor
        while hasattr(inner, "executor") or hasattr(inner, "_executor"):
            inner = getattr(inner, "executor", None) or getattr(inner, "_executor")
        inner.protected = self.protected_nodes
        loop.executor = _ProgressExecutor(loop.executor, self.live, self.telemetry)

    def protected_nodes(self) -> dict[str, str]:
        """node -> why, for the executor (read from the store's in-memory copy)."""
        return {n: f"protected by {p.by}" + (f": {p.reason}" if p.reason else "")
                for n, p in self.store.state.protected.items()}

    def dry_run(self) -> dict[str, Any] | None:
        """The plan the daemon would make now on its latest snapshot (nothing is kept)."""

        snapshot, _ = self.live.latest()
        if snapshot is None or self.loop is None:
            return None
        plan = decide(snapshot, self.gate.policy(self.loop.policy), self.loop.memory)
        plan = self.gate.protect(plan)
        doc = plan.to_dict()
        held = self.gate.hold(plan) if not plan.is_empty else None
        doc["would_hold"] = {"cause": held[0], "words": held[1]} if held else None
        return doc

    def start(self) -> tuple[str, int] | None:
        self.webhooks.start()
        if self.settings.api_address is None:
            return None

        token = ensure_token(self.settings.token_file)
        identity = getattr(self.leadership, "identity", "") if self.leadership else ""
        routes: list[Any] = [add_event_routes]
        if self.view is not None:
            routes.append(add_console_routes(self.view))
        policy = self.config.policy
        self.server = ApiServer(self.settings, self.store, self.live, token=token,
                                size_bounds=(policy.min_nodes, policy.max_nodes),
                                leadership=self.leadership, gate=self.gate,
                                dry_run=self.dry_run, identity=identity, wall_clock=self.wall,
                                events=self.events, routes=tuple(routes),
                                webhooks=self.webhooks)
        try:
            return self.server.start()
        except OSError as err:
            # Refuse to start rather than act with no way for an operator to pause it (and a
            # second daemon on a port in use is a mistake, not a fallback).
            self.server = None
            raise BadInput("control.api_address", self.settings.api_address,
                           f"an address this host can listen on "
                           f"({err.strerror or type(err).__name__}); `--api off` runs without "
                           "the API") from None

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        self.webhooks.close()
        self.store.close()


def with_control_overrides(config: MetctlConfig, *, api: str | None = None, observe: bool = False) -> MetctlConfig:
    """`metctl run --api HOST:PORT --observe` on top of the config's control section."""
    update: dict[str, Any] = {}
    if api is not None:
        update["api_address"] = None if api.lower() in ("none", "null", "off") else api
    if observe:
        update["mode"] = "observe"
    if not update:
        return config

    control = parse_model(ControlSettings, {**config.control.model_dump(), **update}, "--api")
    return config.model_copy(update={"control": control})


__all__ = ["ControlPlane", "CONTROL_METRICS", "DecisionLog", "with_control_overrides"]
