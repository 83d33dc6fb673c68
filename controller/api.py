"""The daemon's HTTP API (`/v1/...`, JSON), served beside the synchronous control loop.

aiohttp runs in a thread of its own with its own event loop: a request never runs on the
loop's thread and never waits for it. Reads copy what the loop last published
(controller.control.LiveStatus, swapped under a lock held for microseconds); changes go to the
control store (a file, or ZooKeeper with HA), which the loop reads on its next iteration; the
dry-run plan is computed in a worker thread on the latest snapshot. See docs/control.md.

Auth: `Authorization: Bearer <token>` with the token in `control.token_file` (created 0600 when
missing). Every change needs it (401 without); reads need it when
`control.read_requires_token`. Bad JSON, unknown fields, negative durations: 400 with one line
naming the field. A client must send its whole request within `control.request_timeout_s`:
a slow client (1 byte/s) is disconnected (aiohttp's keep-alive timer for the headers — it runs
from the connection's start until a request is complete — and a deadline on the body).
"""
from __future__ import annotations

import asyncio
import json
import logging
import secrets
import ssl
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr,
                      field_validator)

from controller.api_guard import (Guard, OPERATOR, TokenBucket, is_loopback, query_int,
                                  read_json)
from controller.control import (MAX_PAUSE_S, ControlSettings, ControlState, MaintenanceWindow,
                                Pause, Pin, Protection, check_node_id, check_zone)
from controller.errors import BadInput
from aiohttp import web
from common.redact import MASK
from common.models import parse_model
from controller.control import WindowsOverride
from controller.control_store import ControlStoreError
from controller.control_store import write_private
from dataclasses import asdict

log = logging.getLogger("metctl.api")


# ------------------------------------------------------------------ the token

def ensure_token(path: str | Path) -> str:
    """The token in `path`; a new random one (0600) when the file is missing."""

    p = Path(path).expanduser()
    if not p.exists():
        write_private(p, secrets.token_urlsafe(32) + "\n")
        log.info("created API token file %s (0600)", p, extra={"event": "api.token_created"})
    else:
        st = p.stat()
        if st.st_mode & 0o077:
            # not changed for the operator (they made it so, maybe on purpose), said loudly
            log.warning("the API token file %s is readable by others (mode %04o): anyone who "
                        "can read it can pause, pin and protect; chmod 600 %s", p,
                        stat.S_IMODE(st.st_mode), p, extra={"event": "api.token_exposed"})
    token = read_token(p)
    if token is None:
        raise BadInput(str(p), "", "a token (one line of text), got an empty file")
    return token


def read_token(path: str | Path) -> str | None:
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(str(p), "", f"a readable token file ({err})") from None
    return text or None


# ------------------------------------------------------------------ request bodies

class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class PauseBody(_Body):
    for_s: StrictInt | StrictFloat | None = Field(None, gt=0, le=MAX_PAUSE_S,
                                                  description="Pause length, s (30 days at most).")
    reason: StrictStr = Field("", max_length=500)
    by: StrictStr = Field("", max_length=100)
    stop_plan: StrictBool = True


class ByBody(_Body):
    by: StrictStr = Field("", max_length=100)


class SizeBody(_Body):
    min: StrictInt = Field(..., ge=1)
    max: StrictInt = Field(..., ge=1)
    by: StrictStr = Field("", max_length=100)


class ProtectBody(_Body):
    reason: StrictStr = Field("", max_length=500)
    by: StrictStr = Field("", max_length=100)


class WindowsBody(_Body):
    windows: tuple[MaintenanceWindow, ...]
    timezone: StrictStr = "UTC"
    by: StrictStr = Field("", max_length=100)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        return check_zone(value)


# ------------------------------------------------------------------ the server

class ApiServer:
    """Serve the API in a background thread: `start()` returns (host, port); `close()`."""

    def __init__(self, settings: ControlSettings, store: Any, live: Any, *,
                 token: str | None, leadership: Any = None, gate: Any = None,
                 dry_run: Callable[[], dict[str, Any] | None] | None = None,
                 identity: str = "", wall_clock: Callable[[], float] = time.time,
                 events: Any = None, routes: tuple[Callable[[Any, Any], None], ...] = (),
                 webhooks: Any = None, size_bounds: tuple[int, int] | None = None):
        self.settings, self.store, self.live = settings, store, live
        # the policy's min_nodes..max_nodes: a pin must lie within them (None: not checked)
        self.size_bounds = size_bounds
        # controller.events.EventStore: operator commands are recorded there; `routes` add
        # more handlers (events, the console) behind the same middleware
        self.events, self.routes, self.webhooks = events, routes, webhooks
        self.token, self.leadership, self.gate = token, leadership, gate
        self.dry_run, self.identity, self.wall = dry_run, identity, wall_clock
        self.address: tuple[str, int] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: Any = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self.native_id: int | None = None  # the server thread's id (bench: its CPU time)
        self.guard = Guard(settings, token, settings.bind()[0])
        self._typed: dict[str, None] = {}  # operators' free text seen, oldest first (bounded)
        self._start_error: BaseException | None = None

    # ---- lifecycle ---------------------------------------------------------------------
    def start(self, timeout_s: float = 10.0) -> tuple[str, int]:
        self._thread = threading.Thread(target=self._serve, name="metctl-api", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout_s):
            raise RuntimeError("the API server did not start")
        if self._start_error is not None:
            raise self._start_error
        assert self.address is not None
        host, port = self.address
        scheme = "https" if self.settings.tls_cert_file else "http"
        shown = f"[{host}]" if ":" in host else host
        log.info("HTTP API on %s://%s:%d/v1/", scheme, shown, port, extra={"event": "api.serving"})
        if not self.settings.tls_cert_file and not is_loopback(host):
            log.warning("the HTTP API listens on %s:%d, beyond loopback, WITHOUT TLS: the bearer "
                        "token and every request cross the network in clear text; set "
                        "control.tls_cert_file and control.tls_key_file, or bind 127.0.0.1",
                        host, port, extra={"event": "api.exposed_without_tls"})
        return self.address

    def _serve(self) -> None:
        self.native_id = threading.get_native_id()
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._start_site())
        except BaseException as err:  # noqa: BLE001 — reported to start()
            self._start_error = err
            if self._runner is not None:
                loop.run_until_complete(self._runner.cleanup())
            loop.close()
            self._started.set()
            return
        self._started.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

    async def _start_site(self) -> None:

        app = web.Application(client_max_size=self.settings.max_body_bytes,
                              middlewares=[self.guard.middleware()])
        r = app.router
        r.add_get("/v1/status", self.get_status)
        r.add_get("/v1/decisions", self.get_decisions)
        r.add_post("/v1/pause", self.post_pause)
        r.add_post("/v1/resume", self.post_resume)
        r.add_put("/v1/size", self.put_size)
        r.add_delete("/v1/size", self.delete_size)
        r.add_put("/v1/nodes/{node}/protection", self.put_protection)
        r.add_delete("/v1/nodes/{node}/protection", self.delete_protection)
        r.add_put("/v1/windows", self.put_windows)
        r.add_delete("/v1/windows", self.delete_windows)
        r.add_post("/v1/plan", self.post_plan)
        for add in self.routes:
            add(app, self)
        # keepalive_timeout: aiohttp arms it when a connection opens and re-arms it after each
        # response; it is what closes a client that dribbles its headers.
        # shutdown_timeout: open event streams end at shutdown (on_shutdown); never wait long
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False,
                                     shutdown_timeout=2.0,
                                     keepalive_timeout=self.settings.request_timeout_s)
        await self._runner.setup()
        host, port = self.settings.bind()
        site = web.TCPSite(self._runner, host, port, reuse_address=True,
                           ssl_context=self._tls())
        await site.start()
        server = site._server  # noqa: SLF001 — the port actually bound (port 0)
        assert isinstance(server, asyncio.base_events.Server), "a started TCP site has a server"
        sock = server.sockets[0]
        self.address = (host, sock.getsockname()[1])

    def _tls(self) -> ssl.SSLContext | None:
        """The server's TLS context from control.tls_cert_file / tls_key_file (None: plain)."""
        cert, key = self.settings.tls_cert_file, self.settings.tls_key_file
        if not cert:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as err:
            why = getattr(err, "strerror", None) or getattr(err, "reason", None) or type(err).__name__
            raise BadInput(str(cert), "control.tls_cert_file",
                           f"a readable PEM certificate whose key is control.tls_key_file "
                           f"({why})") from None
        return context

    def close(self) -> None:
        if self._loop is not None and self._thread is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    # ---- plumbing ----------------------------------------------------------------------
    @staticmethod
    def _json(data: Any, status: int = 200) -> Any:
        return web.json_response(data, status=status, dumps=lambda d: json.dumps(d, default=str))

    def _error(self, status: int, message: str) -> Any:
        return self._json({"error": message}, status)

    async def _body(self, request: web.Request, model: type[BaseModel]) -> Any:

        data = await read_json(request, self.settings.request_timeout_s)
        return parse_model(model, data, "request body")

    def _change(self, fn: Callable[[ControlState], ControlState]) -> ControlState:
        try:
            return self.store.update(fn)
        except ControlStoreError as err:
            raise web.HTTPServiceUnavailable(reason=str(err)) from err

    def _command(self, subject: str, by: str, reason: str, **details: Any) -> None:
        """An operator's change, accepted and stored: one `command` event."""
        if self.events is not None:
            self.events.append("command", subject, reason, "accepted", by=by, **details)

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)

    # ---- reads -------------------------------------------------------------------------
    def status_doc(self) -> dict[str, Any]:
        now = self.wall()
        state: ControlState = self.store.state
        live = self.live.copy()
        pause = state.active_pause(now)
        leader = self.leadership.is_leader() if self.leadership is not None else True
        last = live["last_decision"]
        return {
            "identity": self.identity,
            "role": "leader" if leader else "follower",
            "mode": self.settings.mode,
            "paused": pause is not None,
            "pause": _asdict(pause),
            "pinned": {"min": state.pin.min_nodes, "max": state.pin.max_nodes,
                       "by": state.pin.by, "at_unix_s": state.pin.at_unix_s} if state.pin else None,
            "protected": {n: _asdict(p) for n, p in sorted(state.protected.items())},
            "window": self.gate.window_state() if self.gate is not None else None,
            "last_snapshot_unix_s": live["last_snapshot_unix_s"],
            "last_decision": last,
            "plan_in_flight": live["plan_in_flight"],
            "webhooks": self.webhooks.counts() if self.webhooks is not None else [],
            "now_unix_s": now,
        }

    async def get_status(self, request: web.Request) -> Any:
        return self._json(self._shown(request, self.status_doc()))

    async def get_decisions(self, request: web.Request) -> Any:
        limit = query_int(request, "limit", 20, 1, 1_000_000)
        items = self.live.copy()["decisions"]
        return self._json(self._shown(request, {"decisions": items[-limit:][::-1]}))

    def _shown(self, request: web.Request, doc: dict[str, Any]) -> dict[str, Any]:
        """`doc` as the caller may see it: in full for an operator; for an open read, without
        the free text operators typed (reasons, who), which may name people, tickets or
        worse, in its fields and in the hold words quoting it."""
        if request.get(OPERATOR):
            return doc
        state: ControlState = self.store.state
        typed = [state.pause.reason, state.pause.by] if state.pause else []
        typed += [state.pin.by] if state.pin else []
        for p in state.protected.values():
            typed += [p.reason, p.by]
        typed += [state.windows.by] if state.windows else []
        # texts of controls since lifted still sit in the decisions' hold words
        self._typed.update(dict.fromkeys(t for t in typed if len(t) >= 3))
        while len(self._typed) > 256:
            self._typed.pop(next(iter(self._typed)))
        return _masked(doc, sorted(self._typed, key=len, reverse=True))

    async def post_plan(self, request: web.Request) -> Any:
        if self.dry_run is None:
            return self._error(503, "no dry run in this process")
        doc = await self._in_thread(self.dry_run)
        if doc is None:
            return self._error(409, "no snapshot yet: the daemon has not decided anything")
        return self._json(doc)

    # ---- changes -----------------------------------------------------------------------
    async def post_pause(self, request: web.Request) -> Any:
        body = await self._body(request, PauseBody)
        now = self.wall()
        pause = Pause(reason=body.reason, by=body.by or _peer(request), at_unix_s=now,
                      until_unix_s=now + body.for_s if body.for_s is not None else None,
                      stop_plan=body.stop_plan)
        await self._in_thread(self._change, lambda s: replace(s, pause=pause))
        log.warning("paused by %s: %s", pause.by, pause.reason, extra={"event": "control.paused"})
        self._command("pause", pause.by, pause.reason, for_s=body.for_s,
                      until_unix_s=pause.until_unix_s, stop_plan=pause.stop_plan)
        return self._json(self.status_doc())

    async def post_resume(self, request: web.Request) -> Any:
        body = await self._body(request, ByBody)
        await self._in_thread(self._change, lambda s: replace(s, pause=None))
        log.warning("resumed by %s", body.by or _peer(request), extra={"event": "control.resumed"})
        self._command("resume", body.by or _peer(request), "")
        return self._json(self.status_doc())

    async def put_size(self, request: web.Request) -> Any:
        body = await self._body(request, SizeBody)
        if body.min > body.max:
            raise BadInput("request body", "min", f"at most max ({body.max}), got {body.min}")
        if self.size_bounds is not None:
            low, high = self.size_bounds
            for name, value in (("min", body.min), ("max", body.max)):
                if not low <= value <= high:
                    raise BadInput("request body", name, f"within the policy's bounds, "
                                   f"policy.min_nodes {low} .. policy.max_nodes {high} (the "
                                   f"config sets them), got {value}")
        pin = Pin(body.min, body.max, body.by or _peer(request), self.wall())
        await self._in_thread(self._change, lambda s: replace(s, pin=pin))
        self._command(f"pin {pin.min_nodes}..{pin.max_nodes}", pin.by, "", min=pin.min_nodes,
                      max=pin.max_nodes)
        return self._json(self.status_doc())

    async def delete_size(self, request: web.Request) -> Any:
        await self._in_thread(self._change, lambda s: replace(s, pin=None))
        self._command("unpin", _peer(request), "")
        return self._json(self.status_doc())

    async def put_protection(self, request: web.Request) -> Any:
        node = _node_of(request)
        body = await self._body(request, ProtectBody)
        snapshot, _ = self.live.latest()
        if snapshot is None:
            return self._error(409, f"no snapshot yet: cannot tell whether node {node} exists "
                               "(try again after the daemon's first decision)")
        known = sorted(n.id for n in snapshot.nodes)
        if node not in known:
            shown = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10
                                             else "")
            return self._error(404, f"node {node} is not in the cluster (nodes: {shown})")
        prot = Protection(body.reason, body.by or _peer(request), self.wall())
        await self._in_thread(self._change, lambda s: replace(
            s, protected={**s.protected, node: prot}))
        self._command(f"protect {node}", prot.by, prot.reason, node=node)
        return self._json(self.status_doc())

    async def put_windows(self, request: web.Request) -> Any:

        body = await self._body(request, WindowsBody)
        o = WindowsOverride(windows=body.windows, timezone=body.timezone,
                            by=body.by or _peer(request), at_unix_s=self.wall())
        await self._in_thread(self._change, lambda s: replace(s, windows=o))
        self._command("windows", o.by, "; ".join(f"{','.join(w.days)} {w.start}-{w.end}"
                                                 for w in o.windows) or "always allowed",
                      timezone=o.timezone)
        return self._json(self.status_doc())

    async def delete_windows(self, request: web.Request) -> Any:
        await self._in_thread(self._change, lambda s: replace(s, windows=None))
        self._command("windows cleared", _peer(request), "the config's windows again")
        return self._json(self.status_doc())

    async def delete_protection(self, request: web.Request) -> Any:
        node = _node_of(request)
        await self._in_thread(self._change, lambda s: replace(
            s, protected={n: p for n, p in s.protected.items() if n != node}))
        self._command(f"unprotect {node}", _peer(request), "", node=node)
        return self._json(self.status_doc())


_TYPED_FIELDS = ("reason", "by")


def _masked(doc: Any, typed: list[str], key: str = "") -> Any:
    """`doc` with the operators' free text replaced by ***: the `reason` and `by` of pause, pin,
    protections and windows, and every occurrence of those texts elsewhere (hold words)."""

    if isinstance(doc, dict):
        operator_entry = key in ("pause", "pinned", "protected_node")
        return {k: (MASK if operator_entry and k in _TYPED_FIELDS and v else
                    _masked(v, typed, "protected_node" if key == "protected" else k))
                for k, v in doc.items()}
    if isinstance(doc, list):
        return [_masked(v, typed, key) for v in doc]
    if isinstance(doc, str):
        for text in typed:
            if text in doc:
                doc = doc.replace(text, MASK)
        return doc
    return doc


def _node_of(request: web.Request) -> str:
    """The node id in the path, checked before it is stored or echoed (no paths, bounded)."""
    node = request.match_info["node"]
    try:
        return check_node_id(node)
    except ValueError as err:
        raise BadInput("path", "node", f"{err}, got {node[:40]!r}"
                       + (f" ({len(node)} characters)" if len(node) > 40 else "")) from None


def _peer(request: web.Request) -> str:
    return f"api@{request.remote or '?'}"


def _asdict(obj: Any) -> dict[str, Any] | None:
    return asdict(obj) if obj is not None else None


__all__ = ["ApiServer", "ensure_token", "read_token", "PauseBody", "SizeBody", "ProtectBody",
           "TokenBucket"]
