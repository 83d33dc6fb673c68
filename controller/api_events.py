"""`GET /v1/events` and its stream `GET /v1/events/stream` (server-sent events), on the API
server's event loop.

The stream first sends the stored events after `Last-Event-ID` (or `?after=N`), then each new
one as it is recorded (`event: event`, `id:` the event's id). With `?changes=1` it also sends
`event: changed` (at most ~3 a second) whenever what `/v1/status` or `/v1/cluster` show has
changed — the console refetches then instead of polling. A comment line every 15 s keeps
proxies from closing an idle stream. A client that falls 1,000 messages behind is cut off; it
reconnects with Last-Event-ID and loses nothing the store still holds.
"""
from __future__ import annotations

import asyncio
import json
from typing import Any

from controller.api_guard import OPERATOR, SECURITY_HEADERS, query_int
from controller.events import Event, EventStore, parse_kinds
from aiohttp import web
from common.redact import MASK

KEEPALIVE_S = 15.0
CHANGED_EVERY_S = 0.3
QUEUE_MAX = 1000


class _Subscriber:
    def __init__(self, kinds: frozenset[str] | None, changes: bool):
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(QUEUE_MAX)
        self.kinds, self.changes = kinds, changes
        self.overflowed = False

    def offer(self, item: tuple[str, Any]) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.overflowed = True


class EventHub:
    """Fans events and change notices out to the open streams (the server's loop only)."""

    def __init__(self, store: EventStore, live: Any = None):
        self.store = store
        self.subscribers: set[_Subscriber] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ping_pending = False
        self._live = live

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.store.listeners.append(self._from_any_thread)
        listeners = getattr(self._live, "listeners", None)
        if listeners is not None:
            listeners.append(self._changed_any_thread)

    def detach(self) -> None:
        if self._from_any_thread in self.store.listeners:
            self.store.listeners.remove(self._from_any_thread)
        listeners = getattr(self._live, "listeners", None)
        if listeners is not None and self._changed_any_thread in listeners:
            listeners.remove(self._changed_any_thread)
        for sub in list(self.subscribers):
            sub.offer(("close", None))

    # called from the loop's thread (or any other): hand over to the server's loop, never wait
    def _from_any_thread(self, event: Event) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._publish, event)

    def _changed_any_thread(self) -> None:
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._changed)

    def _publish(self, event: Event) -> None:
        for sub in self.subscribers:
            if sub.kinds is None or event.kind in sub.kinds:
                sub.offer(("event", event))
        self._changed()

    def _changed(self) -> None:
        if self._ping_pending or self.loop is None:
            return
        self._ping_pending = True
        self.loop.call_later(CHANGED_EVERY_S, self._flush_changed)

    def _flush_changed(self) -> None:
        self._ping_pending = False
        for sub in self.subscribers:
            if sub.changes:
                sub.offer(("changed", None))


def shown(server: Any, request: web.Request, event: Event) -> dict[str, Any]:
    """An event as the caller may see it: in full for an operator; for an open read without
    the free text operators typed (a command's reason and who; hold words quoting them), as
    the API's own status (controller.api.ApiServer._shown)."""
    doc = event.to_dict()
    if request.get(OPERATOR):
        return doc
    if doc["kind"] == "command":
        doc["reason"] = MASK if doc["reason"] else ""
        doc["details"] = {k: (MASK if k == "by" else v) for k, v in doc["details"].items()}
    return server._shown(request, doc)


def add_event_routes(app: Any, server: Any) -> None:
    """Register the routes on the API server (controller.api.ApiServer, its `events` store)."""
    store: EventStore = server.events
    hub = EventHub(store, server.live)
    keep = store._events.maxlen or 1000  # noqa: SLF001 — the store's own bound

    async def on_startup(app: Any) -> None:
        hub.attach(asyncio.get_running_loop())

    async def on_shutdown(app: Any) -> None:
        hub.detach()

    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)

    async def get_events(request: web.Request) -> Any:
        after = query_int(request, "after", 0, 0, 999_999_999)
        limit = query_int(request, "limit", 100, 1, keep)
        kinds = parse_kinds(request.query.get("kind"), "query")
        items = store.select(after=after, limit=limit, kinds=kinds)
        return server._json({"events": [shown(server, request, e) for e in items],
                             "last_id": store.last_id})

    async def stream(request: web.Request) -> Any:

        kinds = parse_kinds(request.query.get("kind"), "query")
        header = request.headers.get("Last-Event-ID", "")
        after = (int(header) if header.isascii() and header.isdigit() and len(header) <= 9
                 else query_int(request, "after", 0, 0, 999_999_999))
        sub = _Subscriber(kinds, request.query.get("changes") in ("1", "true"))
        hub.subscribers.add(sub)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-store"})
        response.headers.update(SECURITY_HEADERS)
        try:
            await response.prepare(request)
            sent = after
            for event in store.select(after=after, limit=keep, kinds=kinds):
                await response.write(_sse(event.id, shown(server, request, event)))
                sent = event.id
            if sub.changes:
                await response.write(b"event: changed\ndata: {}\n\n")
            while not sub.overflowed:
                try:
                    what, item = await asyncio.wait_for(sub.queue.get(), KEEPALIVE_S)
                except asyncio.TimeoutError:
                    await response.write(b": keepalive\n\n")
                    continue
                if what == "close":
                    break
                if what == "changed":
                    await response.write(b"event: changed\ndata: {}\n\n")
                elif item.id > sent:  # already sent from the backlog otherwise
                    await response.write(_sse(item.id, shown(server, request, item)))
                    sent = item.id
        except ConnectionResetError:
            pass  # the client went away
        finally:
            hub.subscribers.discard(sub)
        return response

    app.router.add_get("/v1/events", get_events)
    app.router.add_get("/v1/events/stream", stream)


def _sse(event_id: int, doc: dict[str, Any]) -> bytes:
    data = json.dumps(doc, default=str)
    return f"id: {event_id}\nevent: event\ndata: {data}\n\n".encode()


__all__ = ["add_event_routes", "EventHub"]
