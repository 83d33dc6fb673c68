"""Telemetry: the Prometheus endpoint (what metctl sees, decides and does) and its settings.

`METRICS` is the one list of every metric metctl exports (name as scraped, type, labels,
meaning); the README's table and a test that scrapes the live endpoint are checked against it.
`Telemetry` records into its own registry and serves it over HTTP (bound to 127.0.0.1 by
default). prometheus-client (`metctl[metrics]`) is imported only when telemetry is created, so
the core install works without it; without it `Telemetry.create` returns a recorder that
drops everything and says why once.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from controller.logs import decision_kind, log_action  # decision_kind: re-exported
import time
from decision.model import Plan
from decision.model import ClusterSnapshot

log = logging.getLogger("metctl.telemetry")


class TelemetrySettings(BaseModel):
    """The Prometheus endpoint and the logs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prometheus_enabled: bool = Field(
        True, description="Serve the Prometheus endpoint while `metctl run` runs."
    )
    prometheus_address: str = Field(
        "127.0.0.1:9464",
        description="`host:port` the Prometheus endpoint binds to (path /metrics). Loopback by "
        "default; use 0.0.0.0:PORT to let a remote Prometheus scrape it. Port 0 picks a free one.",
    )
    log_format: Literal["auto", "json", "human"] = Field(
        "auto",
        description="Log line format on stderr: `json` (one object a line), `human`, or `auto` "
        "(human on a terminal, JSON otherwise — e.g. under systemd or in a container).",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Least severe log level written."
    )

    @field_validator("prometheus_address")
    @classmethod
    def _host_port(cls, value: str) -> str:
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError("host:port, e.g. 127.0.0.1:9464")
        return value

    def bind(self) -> tuple[str, int]:
        host, _, port = self.prometheus_address.rpartition(":")
        return host.strip("[]"), int(port)


@dataclass(frozen=True)
class MetricSpec:
    name: str  # as it appears in a scrape (counters end in _total)
    kind: Literal["gauge", "counter", "histogram"]
    labels: tuple[str, ...]
    help: str


# The one documented list. Keep README's table in step (a test compares them).
METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("metctl_cluster_nodes", "gauge", (),
               "Nodes in the cluster at the last snapshot."),
    MetricSpec("metctl_cluster_target_nodes", "gauge", (),
               "Node count the last decision aims for."),
    MetricSpec("metctl_node_verdict", "gauge", ("node", "verdict"),
               "1 for each node's verdict at the last decision (overloaded, underloaded, "
               "healthy, unknown)."),
    MetricSpec("metctl_group_nodes", "gauge", ("group",),
               "Nodes given to each partition group (read, write, read_write, scan) by the last "
               "decision."),
    MetricSpec("metctl_group_partitions", "gauge", ("group",),
               "Partitions in each group at the last decision."),
    MetricSpec("metctl_decisions_total", "counter", ("kind",),
               "Decisions taken, by kind (scale_out, scale_in, rebalance, none)."),
    MetricSpec("metctl_holds_total", "counter", ("reason",),
               "Decisions held back (nothing done), by reason (e.g. stale_metrics, cooldown, "
               "not_leader)."),
    MetricSpec("metctl_actions_total", "counter", ("op", "result"),
               "Actions carried out, by op (launch, reconfigure, move, compact, drain, "
               "terminate) and journaled result (done, failed, skipped, cancelled, "
               "rolled_back)."),
    MetricSpec("metctl_action_duration_seconds", "histogram", ("op",),
               "How long each action took, in seconds."),
    MetricSpec("metctl_metric_source_errors_total", "counter", ("source",),
               "Failed reads from a metric source."),
    MetricSpec("metctl_metric_staleness_seconds", "gauge", ("source",),
               "Age of the newest sample from each metric source, in seconds."),
    MetricSpec("metctl_last_decision_timestamp_seconds", "gauge", (),
               "Unix time of the last decision."),
    MetricSpec("metctl_leader", "gauge", ("identity",),
               "1 while this instance leads (acts), 0 while it follows."),
    MetricSpec("metctl_plan_actions", "gauge", (),
               "Actions in the plan in flight (0 when none runs)."),
    MetricSpec("metctl_plan_actions_done", "gauge", (),
               "Actions of the plan in flight that have finished."),
    MetricSpec("metctl_tenant_latency_seconds", "gauge", ("tenant",),
               "Each tenant's latency at the last sample (simulated: the workload's mean "
               "response time; real: its table's request-weighted server latency)."),
    MetricSpec("metctl_tenant_slo_seconds", "gauge", ("tenant",),
               "The latency objective each tenant is held to."),
    MetricSpec("metctl_webhook_deliveries_total", "counter", ("webhook", "result"),
               "Webhook deliveries by webhook name and result (delivered, retried, dropped)."),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)

_LABEL_OK = re.compile(r"[^a-z0-9_]+")


def label_token(value: str, limit: int = 40) -> str:
    """A short snake_case label value (labels must stay few: reasons are enumerated causes)."""
    token = _LABEL_OK.sub("_", str(value).lower()).strip("_")
    return (token or "unknown")[:limit]


class Telemetry:
    """Records metctl's state into a private registry; `serve()` exposes it over HTTP."""

    def __init__(self, settings: TelemetrySettings | None = None, identity: str = ""):
        import prometheus_client as prom  # noqa: PLC0415 — optional dependency: metctl[metrics]

        # `*_created` series would double the names a scraper sees for no use to operators
        prom.disable_created_metrics()
        self.settings = settings or TelemetrySettings()
        self.identity = identity
        self.registry = prom.CollectorRegistry(auto_describe=True)
        self._server: Any = None
        self.address: tuple[str, int] | None = None
        types = {"gauge": prom.Gauge, "counter": prom.Counter, "histogram": prom.Histogram}
        self.m: dict[str, Any] = {}
        for spec in METRICS:
            # prometheus-client appends _total to counters itself
            name = spec.name.removesuffix("_total") if spec.kind == "counter" else spec.name
            extra = {}
            if spec.kind == "histogram":
                extra["buckets"] = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800)
            self.m[spec.name] = types[spec.kind](
                name, spec.help, spec.labels, registry=self.registry, **extra)
        self.m["metctl_leader"].labels(identity=identity).set(0)

    @classmethod
    def create(cls, settings: TelemetrySettings | None = None, identity: str = "") -> Any:
        """A Telemetry, or a NullTelemetry when prometheus-client is not installed."""
        try:
            return cls(settings, identity)
        except ImportError:
            log.warning("no Prometheus endpoint: install metctl[metrics] (prometheus-client)",
                        extra={"event": "telemetry.disabled"})
            return NullTelemetry()

    # ---- serving ----------------------------------------------------------------------------
    def serve(self) -> tuple[str, int]:
        """Start the HTTP endpoint in a background thread; returns the (host, port) bound."""
        from prometheus_client import start_http_server  # noqa: PLC0415 — optional extra: metctl[metrics]

        host, port = self.settings.bind()
        self._server, _thread = start_http_server(port, addr=host, registry=self.registry)
        self.address = (host, self._server.server_address[1])
        log.info("Prometheus endpoint on http://%s:%d/metrics", *self.address,
                 extra={"event": "telemetry.serving"})
        return self.address

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def exposition(self) -> str:
        from prometheus_client import generate_latest  # noqa: PLC0415 — optional extra: metctl[metrics]

        return generate_latest(self.registry).decode()

    # ---- recording --------------------------------------------------------------------------
    def set_leader(self, leader: bool, why: str = "") -> None:
        self.m["metctl_leader"].labels(identity=self.identity).set(1 if leader else 0)

    def record_snapshot(self, snapshot: ClusterSnapshot) -> None:
        self.m["metctl_cluster_nodes"].set(len(snapshot.nodes))

    def record_plan(self, plan: Plan, at_unix_s: float) -> None:
        """A decision: target size, per-node verdicts, per-group counts, decision kind."""
        self.m["metctl_cluster_target_nodes"].set(plan.sizing.target)
        verdicts = self.m["metctl_node_verdict"]
        verdicts.clear()  # nodes come and go: only the last decision's nodes are reported
        for node in plan.health.nodes:
            verdicts.labels(node=node.node, verdict=node.verdict).set(1)
        for group in plan.groups:
            self.m["metctl_group_nodes"].labels(group=group.group).set(group.nodes)
            self.m["metctl_group_partitions"].labels(group=group.group).set(group.partitions)
        self.m["metctl_decisions_total"].labels(kind=decision_kind(plan)).inc()
        self.m["metctl_last_decision_timestamp_seconds"].set(at_unix_s)

    def record_hold(self, reason: str) -> None:
        self.m["metctl_holds_total"].labels(reason=label_token(reason)).inc()

    def record_action(self, op: str, result: str, duration_s: float | None) -> None:
        self.m["metctl_actions_total"].labels(op=label_token(op), result=label_token(result)).inc()
        if duration_s is not None:
            self.m["metctl_action_duration_seconds"].labels(op=label_token(op)).observe(duration_s)

    def record_plan_progress(self, done: int, total: int) -> None:
        self.m["metctl_plan_actions_done"].set(done)
        self.m["metctl_plan_actions"].set(total)

    def record_tenant_latency(self, tenant: str, seconds: float, slo_seconds: float | None) -> None:
        tenant = str(tenant)[:80]
        self.m["metctl_tenant_latency_seconds"].labels(tenant=tenant).set(seconds)
        if slo_seconds is not None:
            self.m["metctl_tenant_slo_seconds"].labels(tenant=tenant).set(slo_seconds)

    def record_webhook(self, name: str, result: str) -> None:
        self.m["metctl_webhook_deliveries_total"].labels(webhook=label_token(name),
                                                         result=result).inc()

    def record_source_error(self, source: str) -> None:
        self.m["metctl_metric_source_errors_total"].labels(source=label_token(source)).inc()

    def record_staleness(self, source: str, age_s: float) -> None:
        self.m["metctl_metric_staleness_seconds"].labels(source=label_token(source)).set(age_s)


class NullTelemetry:
    """Telemetry that records nothing (prometheus-client missing or the endpoint off)."""

    address = None

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class TelemetryObserver:
    """A control-loop observer (controller.loop.LoopObserver's methods) feeding Telemetry."""

    def __init__(self, telemetry: Any, wall_clock: Any = None):

        self.telemetry = telemetry
        self._wall = wall_clock or time.time

    def on_sample(self, now: float, samples_since_clear: int) -> None:
        pass

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:
        self.telemetry.record_snapshot(snapshot)
        self.telemetry.record_plan(plan, self._wall())

    def on_hold(self, now: float, cause: Any, words: str) -> None:
        self.telemetry.record_hold(getattr(cause, "value", str(cause)))

    def on_action(self, now: float, event: str, plan_id: str | None, status: Any) -> None:
        pass  # per-action results come from the journal (StepWatcher)

    def on_error(self, now: float, error: BaseException) -> None:
        pass


_STEP_FINISHED = ("done", "failed", "skipped", "cancelled", "rolled_back")


class StepWatcher:
    """After each executor tick: every journaled step that has just finished is counted
    (actions by op and result, durations) and logged with its reason and plan id."""

    def __init__(self, journal: Any, telemetry: Any, logger: logging.Logger | None = None,
                 listeners: list | None = None):
        self.journal, self.telemetry = journal, telemetry
        self.log = logger or logging.getLogger("metctl.actuator")
        self._seen: set[tuple[str, int]] = set()
        self._last: tuple | None = None
        # called with (plan_id, every step row, the rows that have just finished): the live
        # status (plan progress) and the event store; the list is shared, filled later
        self.listeners = listeners if listeners is not None else []

    def __call__(self, status: Any) -> None:
        plan_id = getattr(status, "plan_id", None)
        key = (plan_id, getattr(status, "state", None), getattr(status, "actions_done", None),
               getattr(status, "phase", None), getattr(status, "current", None))
        if plan_id is None or key == self._last:
            return  # nothing visibly changed: spare the journal a read
        self._last = key

        steps = self.journal.load_steps(plan_id)
        just_finished = []
        for step in steps:
            if step["state"] not in _STEP_FINISHED or (plan_id, step["idx"]) in self._seen:
                continue
            self._seen.add((plan_id, step["idx"]))
            just_finished.append(step)
            started, finished = step.get("started_at"), step.get("finished_at")
            duration = finished - started if started is not None and finished is not None else None
            self.telemetry.record_action(step["op"], step["state"], duration)
            log_action(self.log, _StepView(step), plan_id, step["state"], duration,
                       error=step.get("error"))
        for listener in self.listeners:
            try:
                listener(plan_id, steps, just_finished)
            except Exception:  # noqa: BLE001 — a listener never breaks the executor's tick
                self.log.exception("step listener %r failed", listener)


class _StepView:
    """A journal step row read like a decision.model.Action (for log_action)."""

    def __init__(self, row: dict):
        self.__dict__.update(row)


class WatchedSource:
    """A metrics source (monitor.source.MetricsSource) whose failures and staleness are
    exported: every error (raised, or reported in `Sample.errors`) counts once; at each poll the
    staleness gauge is set to the age of the last sample that came back without errors
    (0 right after a clean one; it grows while the source keeps failing)."""

    def __init__(self, source: Any, telemetry: Any, name: str | None = None,
                 clock: Any = None):

        self.source, self.telemetry = source, telemetry
        self.name = label_token(name or type(source).__name__)
        self._clock = clock or time.monotonic
        self._last_ok: float | None = None
        self._first: float | None = None

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.source, attr)

    def _staleness(self, now: float) -> None:
        since = self._last_ok if self._last_ok is not None else self._first
        assert since is not None, "sample() sets _first before any staleness is recorded"
        self.telemetry.record_staleness(self.name, max(0.0, now - since))

    def sample(self) -> Any:
        now = self._clock()
        if self._first is None:
            self._first = now
        try:
            sample = self.source.sample()
        except Exception:
            self.telemetry.record_source_error(self.name)
            self._staleness(now)
            raise
        for _ in getattr(sample, "errors", ()):
            self.telemetry.record_source_error(self.name)
        if not getattr(sample, "errors", ()):
            self._last_ok = now
        self._staleness(now)
        return sample
