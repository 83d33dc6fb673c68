"""Events: every decision, hold, action, failure and operator command as one structured record
(time, kind, subject, reason, outcome), kept in a bounded in-memory store that the API serves
(`GET /v1/events`, streamed at `/v1/events/stream`), `metctl events` tails and webhooks deliver.

- `EventStore` keeps the last `keep` events under a lock held only to append or copy; each new
  event is handed to the listeners (the API's streams, the webhook sender), which must not block.
- `EventRecorder` is a control-loop observer turning the loop's calls into events, plus the
  executor's finished steps (`on_steps`, fed by telemetry's StepWatcher) and the measured effect
  of each plan (its first decision's snapshot set against the one the plan was decided on).

Kinds (stable): decision, hold, action, failure, command. `subject` names what it is about (a
plan id, a step, a node, a hold cause, a control); `outcome` what came of it.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from common.redact import redact
from controller.errors import BadInput
from controller.telemetry import decision_kind
from decision.model import Plan
from decision.model import ClusterSnapshot

log = logging.getLogger("metctl.events")

KINDS: tuple[str, ...] = ("decision", "hold", "action", "failure", "command")
# step and plan states that mean something went wrong (kind `failure` rather than `action`)
FAILED_OUTCOMES = frozenset({"failed", "rolled_back", "abandoned", "error"})


@dataclass(frozen=True)
class Event:
    id: int  # increasing within one daemon run (SSE's Last-Event-ID, webhook de-duplication)
    at_unix_s: float
    kind: str
    subject: str
    reason: str
    outcome: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class EventStore:
    """The last `keep` events, oldest first; `append` never blocks on a listener."""

    def __init__(self, keep: int = 1000, wall_clock: Callable[[], float] = time.time):
        self._lock = threading.Lock()
        self._events: deque[Event] = deque(maxlen=keep)
        self._next = 1
        self._wall = wall_clock
        self.listeners: list[Callable[[Event], None]] = []

    def append(self, kind: str, subject: str, reason: str, outcome: str,
               **details: Any) -> Event:
        assert kind in KINDS, kind
        with self._lock:
            event = Event(self._next, self._wall(), kind, str(subject), redact(str(reason)),
                          str(outcome), {k: v for k, v in details.items() if v is not None})
            self._next += 1
            self._events.append(event)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:  # noqa: BLE001 — a listener never stops the one who recorded
                log.exception("event listener %r failed", listener)
        return event

    def select(self, *, after: int = 0, limit: int = 100,
               kinds: frozenset[str] | None = None) -> list[Event]:
        """The newest `limit` events with id > `after` (of `kinds`), oldest first."""
        with self._lock:
            items = [e for e in self._events if e.id > after and (kinds is None or e.kind in kinds)]
        return items[-limit:] if limit else []

    @property
    def last_id(self) -> int:
        with self._lock:
            return self._next - 1


def parse_kinds(text: str | None, where: str) -> frozenset[str] | None:
    """`decision,hold` -> the kinds; None for all. Unknown kinds are bad input."""

    if not text:
        return None
    kinds = frozenset(k.strip() for k in text.split(",") if k.strip())
    unknown = kinds - set(KINDS)
    if unknown:
        raise BadInput(where, "kind", f"some of {', '.join(KINDS)}, got {sorted(unknown)[0][:40]!r}")
    return kinds


def snapshot_summary(snapshot: ClusterSnapshot) -> dict[str, float]:
    """What a plan's effect is measured on: node count, busiest and mean node cpu, requests/s,
    slowest node's server latency (when the source reports one)."""
    cpus = [n.metrics.cpu for n in snapshot.nodes if n.metrics is not None]
    lat = [n.metrics.rpc_latency_ms for n in snapshot.nodes
           if n.metrics is not None and n.metrics.rpc_latency_ms is not None]
    out = {"nodes": float(len(snapshot.nodes)),
           "requests_per_s": float(sum(p.requests for p in snapshot.partitions))}
    if cpus:
        out["max_cpu"] = max(cpus)
        out["mean_cpu"] = sum(cpus) / len(cpus)
    if lat:
        out["max_latency_ms"] = max(lat)
    return out


def effect_words(before: dict[str, float], after: dict[str, float]) -> str:
    parts = [f"nodes {before['nodes']:.0f} -> {after['nodes']:.0f}"]
    for key, label, fmt in (("max_cpu", "busiest node cpu", "{:.0%}"),
                            ("mean_cpu", "mean cpu", "{:.0%}"),
                            ("max_latency_ms", "slowest node", "{:.0f} ms"),
                            ("requests_per_s", "requests", "{:,.0f}/s")):
        if key in before and key in after:
            parts.append(f"{label} {fmt.format(before[key])} -> {fmt.format(after[key])}")
    return "; ".join(parts)


class EventRecorder:
    """A control-loop observer recording decisions, holds, plans, steps, failures and effects."""

    def __init__(self, store: EventStore):
        self.store = store
        self._reasons: dict[str, str] = {}  # plan id -> its reason (for its later events)
        self._before: dict[str, dict[str, float]] = {}  # plan id -> snapshot it was decided on
        self._ended: list[str] = []  # plans ended whose effect the next snapshot measures
        self._last_snapshot: dict[str, float] | None = None

    def on_sample(self, now: float, samples_since_clear: int) -> None:
        pass

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:

        summary = snapshot_summary(snapshot)
        for ended in self._ended:
            before = self._before.pop(ended, None)
            if before is not None:
                self.store.append("action", ended, "effect: " + effect_words(before, summary),
                                  "measured", plan_id=ended, before=before, after=summary)
        self._ended.clear()
        self._last_snapshot = summary
        reason = plan.reason or plan.sizing.reason
        if plan_id is not None:
            self._reasons[plan_id] = reason
            self._before[plan_id] = summary
            _trim(self._reasons)
            _trim(self._before)
        self.store.append("decision", plan_id or "cluster", reason, decision_kind(plan),
                          plan_id=plan_id, current=plan.sizing.current,
                          target=plan.sizing.target, actions=len(plan.actions))

    def on_hold(self, now: float, cause: Any, words: str) -> None:
        cause = getattr(cause, "value", str(cause))
        self.store.append("failure" if cause == "error" else "hold", cause, words, "held")

    def on_action(self, now: float, event: str, plan_id: str | None, status: Any) -> None:
        reason = self._reasons.get(plan_id or "", "")
        if event == "submitted":
            self.store.append("action", plan_id or "plan", reason, "submitted", plan_id=plan_id)
            return
        why = getattr(status, "reason", "") or reason
        # a plan ends done, failed or abandoned (rolled back): anything but done went wrong
        self.store.append("action" if event == "done" else "failure", plan_id or "plan", why, event, plan_id=plan_id)
        if plan_id is not None:
            self._ended.append(plan_id)

    def on_error(self, now: float, error: BaseException) -> None:
        pass  # the loop follows every error with a hold of cause `error` (recorded there)

    def on_steps(self, plan_id: str, finished: list[dict[str, Any]]) -> None:
        """Journal rows of steps that have just finished (telemetry.StepWatcher)."""
        for row in finished:
            state = row["state"]
            started, ended = row.get("started_at"), row.get("finished_at")
            duration = ended - started if started is not None and ended is not None else None
            self.store.append("failure" if state in FAILED_OUTCOMES else "action",
                              step_words(row), row.get("error") or row.get("reason") or "", state,
                              plan_id=plan_id, op=row["op"], duration_s=duration)


def step_words(row: dict[str, Any]) -> str:
    """A step as an operator names it: `move <region> rs1 -> rs4`, `launch new-1 (read)`."""
    op, node = row["op"], row.get("node")
    if op == "launch":
        return f"launch {row.get('server_id') or node} ({row.get('profile')})"
    if op == "reconfigure":
        return f"reconfigure {node} -> {row.get('profile')}"
    if op == "move":
        return f"move {row.get('partition')} {row.get('source') or '?'} -> {row.get('target')}"
    if op == "split":
        return f"split {row.get('partition')} on {node}"
    if op == "compact":
        return f"compact {row.get('partition')} on {node}"
    return f"{op} {node}"


def _trim(d: dict, keep: int = 64) -> None:
    while len(d) > keep:
        del d[next(iter(d))]


__all__ = ["Event", "EventStore", "EventRecorder", "KINDS", "parse_kinds", "step_words",
           "snapshot_summary", "effect_words"]
