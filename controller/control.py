"""Operators in control: pause (with an expiry), a pinned size, protected nodes, observe-only
mode and maintenance windows — the state, its rules, and what the control loop asks of them.

- `ControlSettings` is the config's `control:` section (API address, token file, mode, windows).
- `ControlState` is what operators change at run time (pause, pin, protection); it lives in a
  `controller.control_store` store (a 0600 file, or ZooKeeper when HA is on) so every instance
  honours it and a new leader inherits it.
- `ControlGate` is what the loop consults: the policy with the pin applied, whether to hold a
  plan (`observe`, `paused`, `window`), whether a plan in flight must stop at its next
  consistent point (pause with stop_plan), and the plan without protected nodes' restarts,
  drains and terminations.
- `LiveStatus` is a loop observer keeping what `GET /v1/status` and `/v1/decisions` show, so
  the API reads a copy and never touches (or waits for) the loop.

Time here is the wall clock (unix seconds), injected: a pause's expiry and a window are
operator times, not the simulated clock of a simulated run.
"""
from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from controller.webhooks import WebhookSettings
from common.models import parse_model
from controller.errors import BadInput
from controller.events import step_words
from controller.telemetry import decision_kind
from dataclasses import asdict
from decision.protection import keep_nodes
from decision.model import Plan
from decision.model import ClusterSnapshot

Day = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
DAYS: tuple[Day, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def check_zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("an IANA time zone such as UTC or Europe/Lisbon") from None
    return value


class MaintenanceWindow(BaseModel):
    """A weekly time range in which scale-in and reconfiguration may run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    days: tuple[Day, ...] = Field(
        DAYS, min_length=1, description="Weekdays on which the window opens (mon..sun).")
    start: str = Field(..., description="Opening time `HH:MM` (24 h, in control.timezone).")
    end: str = Field(..., description="Closing time `HH:MM`; before `start` means the window "
                     "runs past midnight into the next day.")

    @field_validator("start", "end")
    @classmethod
    def _hhmm(cls, value: str) -> str:
        h, sep, m = value.partition(":")
        if not sep or not (h.isdigit() and m.isdigit()) or not (0 <= int(h) <= 24
                                                                 and 0 <= int(m) < 60) \
                or int(h) * 60 + int(m) > 24 * 60:
            raise ValueError("a time HH:MM between 00:00 and 24:00")
        return value

    @model_validator(mode="after")
    def _some_length(self) -> MaintenanceWindow:
        if self.start == self.end:
            raise ValueError(f"start and end differ (start {self.start} = end {self.end} is a "
                             "window of no length; 00:00-24:00 is the whole day)")
        return self

    def minutes(self, which: str) -> int:
        h, _, m = getattr(self, which).partition(":")
        return int(h) * 60 + int(m)


class ControlSettings(BaseModel):
    """The daemon's HTTP API and the operator's controls (see docs/control.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_address: str | None = Field(
        "127.0.0.1:9465", description="`host:port` the HTTP API (`/v1/...`) binds to while "
        "`metctl run` runs; loopback by default. Port 0 picks a free one. null: no API.")
    token_file: str = Field(
        "metctl-state/api-token", description="File holding the bearer token mutating API "
        "calls need; created (0600, random) when missing. The CLI reads it too.")
    read_requires_token: bool = Field(
        False, description="Also refuse read-only API calls (status, decisions, plan) without "
        "the token.")
    mode: Literal["act", "observe"] = Field(
        "act", description="`observe`: decide and explain, never act (every plan is held with "
        "cause `observe`). `metctl run --observe` sets it.")
    windows: tuple[MaintenanceWindow, ...] = Field(
        (), description="Maintenance windows. Outside all of them scale-in and "
        "reconfiguration are held (cause `window`); scale-out is always allowed. Empty: "
        "always allowed.")
    timezone: str = Field("UTC", description="Time zone of the windows (IANA name).")
    state_path: str | None = Field(
        None, description="File for pause, pin and protection when HA is off (0600, atomic "
        "writes). None: `control.json` beside loop.memory_path (or the journal).")
    request_timeout_s: float = Field(
        5.0, gt=0, description="An API client must send its whole request within this many "
        "seconds, or its connection is closed (slow clients cannot hold the server).")
    max_body_bytes: int = Field(65536, ge=1024, description="Largest request body accepted.")
    max_requests_per_s: float = Field(
        200.0, gt=0, description="The API answers at most this many requests a second (a burst "
        "of as many at once); more wait their turn without using CPU, so a flood of clients "
        "cannot take the interpreter from the control loop.")
    decisions_kept: int = Field(
        200, ge=1, description="Decisions and holds `GET /v1/decisions` can return.")
    events_kept: int = Field(
        1000, ge=10, le=1_000_000, description="Events (decisions, holds, actions, failures, "
        "commands) kept in memory for `GET /v1/events`, `metctl events` and the console.")
    console_read_without_token: bool = Field(
        False, description="Let the web console at `/` show the cluster and the controller to "
        "anyone who can reach the API address, without the token (read only: every control "
        "still needs the token). Off: the console asks for the token first.")
    webhooks: tuple[WebhookSettings, ...] = Field(
        (), description="Receivers of metctl's events: each an HTTP(S) URL the events of the "
        "chosen kinds are POSTed to, signed with HMAC-SHA256 (docs/console.md, Events).")
    tls_cert_file: str | None = Field(
        None, description="PEM certificate (chain) the API serves HTTPS with; needs "
        "tls_key_file. Without it the API speaks plain HTTP, and binding beyond loopback logs "
        "a warning.")
    tls_key_file: str | None = Field(
        None, description="PEM private key of tls_cert_file (keep it 0600).")
    tls_ca_file: str | None = Field(
        None, description="What the CLI (pause, pin, explain, …) verifies an `https://` API "
        "with: a CA bundle, or the server's own certificate when it is self-signed. None: the "
        "system's CAs.")
    allowed_hosts: tuple[str, ...] = Field(
        (), description="Names clients may reach the API by (the Host header), besides the "
        "bound address, `localhost` and IP literals; others get 421 (DNS rebinding).")

    @model_validator(mode="after")
    def _tls_pair(self) -> ControlSettings:
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ValueError("tls_cert_file and tls_key_file together (a certificate and its "
                             "key), or neither")
        return self

    @field_validator("allowed_hosts")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not name or len(name) > 253 or any(c in name for c in "/:@ \t"):
                raise ValueError(f"host names without port, scheme or path, got {name[:60]!r}")
        return value

    @field_validator("api_address")
    @classmethod
    def _host_port(cls, value: str | None) -> str | None:
        if value is None:
            return value
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError("host:port, e.g. 127.0.0.1:9465, or null for no API")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return check_zone(value)

    def bind(self) -> tuple[str, int]:
        assert self.api_address is not None
        host, _, port = self.api_address.rpartition(":")
        return host.strip("[]"), int(port)


# ------------------------------------------------------------------ the shared state

# The longest pause the API accepts: a pause is a hold for a maintenance, not a way to turn
# metctl off (stop it, or `metctl run --observe`). A pause of 1e15 s was stored, then refused on
# every restart.
MAX_PAUSE_S = 30 * 86400.0
# Operator times are unix seconds up to the end of year 9999 (what datetime can show): a stored
# expiry of 1e12 passed the 1e15 magnitude check and made every decision fail to format it.
LATEST_UNIX_S = 253402214400.0
_NODE_ID = re.compile(r"[A-Za-z0-9_.:,\[\]-]{1,255}")


def check_node_id(value: str) -> str:
    """A node id as data stores name nodes (`host,port`, `[::1]:9042`): no path, no spaces."""
    if not _NODE_ID.fullmatch(value) or set(value) <= {"."}:
        raise ValueError("a node id such as rs1.example.org,16020 (letters, digits and . _ - : , "
                         "[ ]; at most 255 characters)")
    return value


NodeId = Annotated[str, AfterValidator(check_node_id)]
UnixTime = Annotated[float, Field(ge=0, le=LATEST_UNIX_S)]


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


class StoredPause(_Stored):
    reason: str = Field("", max_length=500)
    by: str = Field("", max_length=100)
    at_unix_s: UnixTime
    until_unix_s: UnixTime | None = None
    stop_plan: bool = True


class StoredPin(_Stored):
    min_nodes: int = Field(..., ge=1)
    max_nodes: int = Field(..., ge=1)
    by: str = Field("", max_length=100)
    at_unix_s: UnixTime

    @model_validator(mode="after")
    def _ordered(self) -> StoredPin:
        if self.min_nodes > self.max_nodes:
            raise ValueError(f"min_nodes at most max_nodes ({self.max_nodes}), got {self.min_nodes}")
        return self


class StoredProtection(_Stored):
    reason: str = Field("", max_length=500)
    by: str = Field("", max_length=100)
    at_unix_s: UnixTime


class ControlFile(BaseModel):
    """The stored form of ControlState (JSON in the file or the znode), checked as strictly as
    the API checks what it stores: a state that does not validate is not used (see
    controller.control_store: the daemon starts paused instead)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    pause: StoredPause | None = None
    pin: StoredPin | None = None
    protected: dict[NodeId, StoredProtection] = Field(default_factory=dict)
    windows: dict[str, Any] | None = None


@dataclass(frozen=True)
class Pause:
    reason: str
    by: str
    at_unix_s: float
    until_unix_s: float | None = None  # None: until resumed
    stop_plan: bool = True  # a plan in flight stops at its next consistent point


@dataclass(frozen=True)
class Pin:
    min_nodes: int
    max_nodes: int
    by: str
    at_unix_s: float


@dataclass(frozen=True)
class Protection:
    reason: str
    by: str
    at_unix_s: float


class WindowsOverride(BaseModel):
    """Maintenance windows set at run time (`PUT /v1/windows`), in force instead of the
    config's until `DELETE /v1/windows`; shared through the store like pause and pin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    windows: tuple[MaintenanceWindow, ...] = Field(
        ..., description="The windows; an empty list means always allowed.")
    timezone: str = Field("UTC", description="Their time zone (IANA name).")
    by: str = ""
    at_unix_s: float = 0.0

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return check_zone(value)


@dataclass(frozen=True)
class ControlState:
    pause: Pause | None = None
    pin: Pin | None = None
    protected: Mapping[str, Protection] = field(default_factory=dict)
    windows: WindowsOverride | None = None  # None: the config's control.windows

    def active_pause(self, now_unix_s: float) -> Pause | None:
        """The pause in force at `now` (a timed pause past its expiry is over)."""
        p = self.pause
        if p is None or (p.until_unix_s is not None and now_unix_s >= p.until_unix_s):
            return None
        return p

    def to_dict(self) -> dict[str, Any]:
        return {"version": 1,
                "pause": asdict(self.pause) if self.pause else None,
                "pin": asdict(self.pin) if self.pin else None,
                "protected": {n: asdict(p) for n, p in sorted(self.protected.items())},
                "windows": self.windows.model_dump(mode="json") if self.windows else None}

    @classmethod
    def from_dict(cls, data: Any, file: str) -> ControlState:
        model = parse_model(ControlFile, data, file)
        try:
            windows = (parse_model(WindowsOverride, model.windows, file)
                       if model.windows is not None else None)
            return cls(pause=Pause(**model.pause.model_dump()) if model.pause else None,
                       pin=Pin(**model.pin.model_dump()) if model.pin else None,
                       protected={n: Protection(**p.model_dump())
                                  for n, p in model.protected.items()},
                       windows=windows)
        except TypeError as err:
            raise BadInput(file, "", f"a metctl control state ({err})") from None


# ------------------------------------------------------------------ windows

def window_open(windows: tuple[MaintenanceWindow, ...], tz: str, now_unix_s: float
                ) -> tuple[bool, str]:
    """Whether `now` lies in one of the windows (no windows: always), and words saying so."""
    if not windows:
        return True, "no maintenance windows configured"
    local = datetime.fromtimestamp(now_unix_s, ZoneInfo(tz))
    minute = local.hour * 60 + local.minute
    today = DAYS[local.weekday()]
    yesterday = DAYS[(local.weekday() - 1) % 7]
    for w in windows:
        start, end = w.minutes("start"), w.minutes("end")
        if start <= end:
            inside = today in w.days and start <= minute < end
        else:  # past midnight: opened yesterday evening or opens this evening
            inside = (today in w.days and minute >= start) or (yesterday in w.days and minute < end)
        if inside:
            return True, f"inside window {','.join(w.days)} {w.start}-{w.end} {tz}"
    return False, (f"outside every maintenance window ({local:%a %H:%M} {tz}; windows: "
                   + "; ".join(f"{','.join(w.days)} {w.start}-{w.end}" for w in windows) + ")")


# ------------------------------------------------------------------ what the loop asks

class ControlGate:
    """The loop's view of the operator's controls (see the module docstring)."""

    def __init__(self, settings: ControlSettings, store: Any,
                 wall_clock: Callable[[], float] = time.time):
        self.settings, self.store, self.wall = settings, store, wall_clock

    @property
    def state(self) -> ControlState:
        return self.store.state

    def policy(self, policy: Any) -> Any:
        """The policy with the pinned size as its bounds."""
        pin = self.state.pin
        if pin is None:
            return policy
        return policy.model_copy(update={"min_nodes": pin.min_nodes, "max_nodes": pin.max_nodes})

    def protect(self, plan: Plan) -> Any:
        protected = self.state.protected
        if not protected:
            return plan
        return keep_nodes(plan, {n: f"protected by {p.by}: {p.reason}" if p.reason
                                 else f"protected by {p.by}" for n, p in protected.items()})

    def hold(self, plan: Plan) -> tuple[str, str] | None:
        """(cause, words) when this plan must not start, else None."""
        now = self.wall()
        if self.settings.mode == "observe":
            return "observe", "observe-only mode: metctl decides and explains, never acts"
        pause = self.state.active_pause(now)
        if pause is not None:
            until = (f" until {_iso(pause.until_unix_s)}" if pause.until_unix_s is not None
                     else " until resumed")
            return "paused", f"paused by {pause.by}{until}: {pause.reason or 'no reason given'}"
        if plan.sizing.delta <= 0:
            ok, words = window_open(*self.windows(), now)
            if not ok:
                return "window", f"scale-in and reconfiguration wait: {words}"
        return None

    def plan_suspended(self) -> str | None:
        """Words when a plan in flight must not advance (paused with stop_plan), else None."""
        pause = self.state.active_pause(self.wall())
        if pause is not None and pause.stop_plan:
            return f"paused by {pause.by}: the plan in flight waits at a consistent point"
        if self.settings.mode == "observe":
            return "observe-only mode"
        return None

    def windows(self) -> tuple[tuple[MaintenanceWindow, ...], str]:
        """The windows in force: set at run time (shared store), else the config's."""
        o = self.state.windows
        return (o.windows, o.timezone) if o is not None else (self.settings.windows,
                                                               self.settings.timezone)

    def window_state(self) -> dict[str, Any]:
        windows, tz = self.windows()
        ok, words = window_open(windows, tz, self.wall())
        o = self.state.windows
        return {"configured": bool(windows), "open": ok, "words": words,
                "source": f"set by {o.by} at run time" if o is not None else "config",
                "windows": [w.model_dump() for w in windows], "timezone": tz}


def _iso(unix_s: float) -> str:
    try:
        return datetime.fromtimestamp(unix_s).astimezone().isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):  # beyond what datetime shows: never fail a hold
        return f"unix time {unix_s:.0f}"


# ------------------------------------------------------------------ what the API shows

class LiveStatus:
    """A loop observer keeping the daemon's live state for the API (one small lock; the loop
    holds it only to swap references, the API only to copy them)."""

    def __init__(self, keep: int = 200, wall_clock: Callable[[], float] = time.time,
                 record: Callable[[dict[str, Any]], None] | None = None):
        self._lock = threading.Lock()
        self._wall = wall_clock
        self._record = record
        self.decisions: deque[dict[str, Any]] = deque(maxlen=keep)
        self.last_decision: dict[str, Any] | None = None
        self.last_plan: Plan | None = None
        self.last_snapshot: ClusterSnapshot | None = None
        self.last_snapshot_unix_s: float | None = None
        self.plan_in_flight: dict[str, Any] | None = None
        self.plan_steps: list[dict[str, Any]] = []  # the plan in flight's steps (console)
        self.memory: Any = None
        # called (no arguments, any thread) after what the API shows changed; must not block
        self.listeners: list[Callable[[], None]] = []

    def on_sample(self, now: float, samples_since_clear: int) -> None:
        pass

    def on_error(self, now: float, error: BaseException) -> None:
        pass

    def on_observation(self, now: float, snapshot: ClusterSnapshot) -> None:
        """What the monitor sees while a plan runs (controller.loop: no decision on it)."""
        with self._lock:
            self.last_snapshot, self.last_snapshot_unix_s = snapshot, self._wall()
        self._changed()

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:
        entry = {
            "at_unix_s": self._wall(), "kind": decision_kind(plan), "plan_id": plan_id,
            "reason": plan.reason, "hold": None,
            "sizing": {"current": plan.sizing.current, "target": plan.sizing.target,
                       "delta": plan.sizing.delta},
            "actions": len(plan.actions),
            "verdicts": [{"node": n.node, "verdict": n.verdict, "reasons": list(n.reasons)}
                         for n in plan.health.nodes],
        }
        with self._lock:
            self.last_plan, self.last_snapshot = plan, snapshot
            self.last_snapshot_unix_s = self._wall()
            self.last_decision = entry
            self.decisions.append(entry)
        self._persist(entry)
        self._changed()

    def on_hold(self, now: float, cause: Any, words: str) -> None:
        cause = getattr(cause, "value", str(cause))
        with self._lock:
            last = self.last_decision
            if last is not None and last["hold"] is None and self._wall() - last["at_unix_s"] < 1.0 \
                    and cause not in ("stale_metrics", "error"):
                # the hold of the decision just taken: attach it rather than a second entry
                last = dict(last, hold={"cause": cause, "words": words})
                self.decisions[-1] = self.last_decision = last
                entry = last
            else:
                entry = {"at_unix_s": self._wall(), "kind": "hold", "plan_id": None, "reason": "",
                         "hold": {"cause": cause, "words": words}, "actions": 0}
                self.decisions.append(entry)
                self.last_decision = entry
        self._persist(entry)
        self._changed()

    def on_action(self, now: float, event: str, plan_id: str | None, status: Any) -> None:
        with self._lock:
            if event == "submitted":
                self.plan_in_flight = {"plan_id": plan_id, "phase": "submitted", "done": 0,
                                       "total": None, "state": "running"}
            elif self.plan_in_flight is not None and self.plan_in_flight["plan_id"] == plan_id:
                self.plan_in_flight = None
                self.plan_steps = []
        self._changed()

    def on_tick(self, status: Any) -> None:
        """After each executor tick (telemetry's after_tick chain): the plan's progress."""
        if getattr(status, "plan_id", None) is None:
            return
        doc = {"plan_id": status.plan_id, "phase": getattr(status, "phase", None),
               "state": getattr(status, "state", None),
               "done": getattr(status, "actions_done", None),
               "total": getattr(status, "actions_total", None),
               "current": getattr(status, "current", None)}
        with self._lock:
            changed = doc != self.plan_in_flight
            if doc["state"] in ("running", "resuming", "rolling_back") or doc["state"] is None:
                self.plan_in_flight = doc
        if changed:
            self._changed()

    def on_steps(self, plan_id: str, steps: list[dict[str, Any]],
                 finished: list[dict[str, Any]]) -> None:
        """The journal's steps of the plan in flight (telemetry.StepWatcher), for the console:
        what each is, its state and sub-state (a launch: booting, joining, ready)."""

        rows = [{"idx": r["idx"], "op": r["op"], "what": step_words(r), "state": r["state"],
                 "sub_state": r.get("sub_state"), "node": r.get("node"),
                 "server_id": r.get("server_id"), "profile": r.get("profile"),
                 "error": r.get("error")} for r in steps]
        with self._lock:
            self.plan_steps = rows
        self._changed()

    def _changed(self) -> None:
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:  # noqa: BLE001 — a listener never breaks the loop
                pass

    def _persist(self, entry: dict[str, Any]) -> None:
        if self._record is not None:
            try:
                self._record(entry)
            except Exception:  # noqa: BLE001 — the record must never break the loop
                pass

    def copy(self) -> dict[str, Any]:
        with self._lock:
            return {"last_decision": self.last_decision, "plan_in_flight": self.plan_in_flight,
                    "last_snapshot_unix_s": self.last_snapshot_unix_s,
                    "decisions": list(self.decisions), "plan_steps": self.plan_steps}

    def latest(self) -> tuple[Any, Any]:
        with self._lock:
            return self.last_snapshot, self.last_plan


__all__ = ["ControlSettings", "MaintenanceWindow", "ControlState", "Pause", "Pin", "Protection",
           "ControlFile", "ControlGate", "LiveStatus", "WindowsOverride", "window_open", "DAYS",
           "MAX_PAUSE_S", "LATEST_UNIX_S", "NodeId", "check_node_id"]
