"""Webhooks: metctl's events POSTed as JSON to other tools (chat, paging), signed with
HMAC-SHA256, delivered from a thread of their own so the control loop never waits for them.

Each webhook has its own bounded queue and one delivery at a time (events arrive in order).
A failed delivery (connection refused, a timeout, a non-2xx answer) is retried after
`backoff_s`, doubling each time, `retries` times, then dropped and counted; a full queue drops
the newest event and counts it too. The loop only hands the event over (`offer`, a non-blocking
call into the sender's event loop), so a receiver that is down, slow or stalls its socket costs
the loop nothing. The secret is read once from its file (or environment variable) and never
logged; neither is the URL, which may carry a token of its own (chat webhooks do): logs and
metrics name a webhook by its `name`.

Receivers check `X-Metctl-Signature: sha256=<hex HMAC-SHA256 of the raw body with the secret>`
and may de-duplicate on `X-Metctl-Delivery` (the event id).
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import os
import threading
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pathlib import Path
import aiohttp

log = logging.getLogger("metctl.webhooks")

Kind = Literal["decision", "hold", "action", "failure", "command"]
RESULTS = ("delivered", "retried", "dropped")


class WebhookSettings(BaseModel):
    """One receiver of metctl's events (`control.webhooks`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(..., min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.-]+$",
                      description="Short name used in logs and metrics (the URL never is).")
    url: str = Field(..., description="http:// or https:// URL the events are POSTed to.")
    kinds: tuple[Kind, ...] = Field(
        ("decision", "hold", "action", "failure", "command"), min_length=1,
        description="Event kinds sent (decision, hold, action, failure, command).")
    secret_file: str | None = Field(
        None, description="File holding the HMAC-SHA256 secret (first line).")
    secret_env: str | None = Field(
        None, description="Environment variable holding the secret (instead of secret_file).")
    timeout_s: float = Field(5.0, gt=0, le=300, description="Deadline of one delivery attempt "
                             "(connect, send, answer), s.")
    retries: int = Field(3, ge=0, le=20, description="Attempts after the first before the "
                         "event is dropped (and counted).")
    backoff_s: float = Field(1.0, ge=0, le=3600, description="Wait before the first retry, "
                             "s; doubles each retry (at most 10 minutes).")
    queue_max: int = Field(1000, ge=1, le=100_000, description="Events waiting for this "
                           "receiver; past it new events are dropped (and counted).")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("an http:// or https:// URL with a host")
        return value

    @model_validator(mode="after")
    def _one_secret(self) -> WebhookSettings:
        if (self.secret_file is None) == (self.secret_env is None):
            raise ValueError("give exactly one of secret_file and secret_env (the HMAC secret)")
        return self

    def read_secret(self) -> bytes:
        if self.secret_env is not None:
            value = os.environ.get(self.secret_env, "").strip()
            where = f"environment variable {self.secret_env}"
        else:
            try:
                value = Path(self.secret_file or "").expanduser().read_text().strip()
            except (OSError, UnicodeDecodeError) as err:
                raise ValueError(f"secret_file unreadable ({type(err).__name__})") from None
            value = value.splitlines()[0] if value else ""
            where = "secret_file"
        if not value:
            raise ValueError(f"{where} is empty")
        return value.encode()


def signature(secret: bytes, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


class _Hook:
    def __init__(self, settings: WebhookSettings, secret: bytes):
        self.settings, self.secret = settings, secret
        self.queue: asyncio.Queue[Any] | None = None
        self.counts = dict.fromkeys(RESULTS, 0)


class WebhookSender:
    """Deliver events to the configured webhooks; `offer(event)` is safe from any thread."""

    def __init__(self, hooks: tuple[WebhookSettings, ...], telemetry: Any = None,
                 leading: Any = None):
        self.telemetry = telemetry
        # with HA every instance decides, but only the leader's decisions, holds and actions
        # are news: a follower sends only the commands its own API accepted
        self.leading = leading or (lambda: True)
        self.hooks: list[_Hook] = []
        for h in hooks:
            try:
                self.hooks.append(_Hook(h, h.read_secret()))
            except ValueError as err:
                # the loop's duty comes first: a missing secret costs this webhook, not metctl
                log.error("webhook %s is off: %s", h.name, err,
                          extra={"event": "webhook.disabled", "webhook": h.name})
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    def start(self) -> None:
        if not self.hooks:
            return
        self._thread = threading.Thread(target=self._run, name="metctl-webhooks", daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        for hook in self.hooks:
            hook.queue = asyncio.Queue(hook.settings.queue_max)
        tasks = [loop.create_task(self._deliver_all(h)) for h in self.hooks]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            for t in tasks:
                t.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.close()

    def close(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._thread = None

    # ---- handing over (any thread; never waits) -------------------------------------------
    def offer(self, event: Any) -> None:
        loop = self._loop
        if event.kind != "command" and not self.leading():
            return
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._enqueue, event)
            except RuntimeError:
                pass  # the sender is closing

    def _enqueue(self, event: Any) -> None:
        for hook in self.hooks:
            if event.kind not in hook.settings.kinds or hook.queue is None:
                continue
            try:
                hook.queue.put_nowait(event)
            except asyncio.QueueFull:
                self._count(hook, "dropped")
                if hook.counts["dropped"] in (1, 10, 100) or hook.counts["dropped"] % 1000 == 0:
                    log.warning("webhook %s: queue full (%d events), event %d dropped; "
                                "%d dropped so far", hook.settings.name, hook.settings.queue_max,
                                event.id, hook.counts["dropped"],
                                extra={"event": "webhook.dropped", "webhook": hook.settings.name})

    def counts(self) -> list[dict[str, Any]]:
        """Per webhook: delivered, retried, dropped, queued (for /v1/status)."""
        return [{"name": h.settings.name, **h.counts,
                 "queued": h.queue.qsize() if h.queue is not None else 0} for h in self.hooks]

    def _count(self, hook: _Hook, result: str) -> None:
        hook.counts[result] += 1
        if self.telemetry is not None:
            self.telemetry.record_webhook(hook.settings.name, result)

    # ---- delivering (the sender's thread) -------------------------------------------------
    async def _deliver_all(self, hook: _Hook) -> None:

        s = hook.settings
        timeout = aiohttp.ClientTimeout(total=s.timeout_s)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            assert hook.queue is not None
            while True:
                event = await hook.queue.get()
                await self._deliver(session, hook, event)

    async def _deliver(self, session: Any, hook: _Hook, event: Any) -> None:
        s = hook.settings
        body = json.dumps(event.to_dict(), default=str, sort_keys=True).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "metctl-webhook",
                   "X-Metctl-Event": event.kind, "X-Metctl-Delivery": str(event.id),
                   "X-Metctl-Signature": signature(hook.secret, body)}
        last = ""
        for attempt in range(s.retries + 1):
            try:
                async with session.post(s.url, data=body, headers=headers,
                                        allow_redirects=False) as r:
                    if 200 <= r.status < 300:
                        self._count(hook, "delivered")
                        return
                    last = f"HTTP {r.status}"
            except Exception as err:  # noqa: BLE001 — refused, reset, timed out, bad answer
                # the type only: the text of a client error may quote the URL
                last = "timed out" if isinstance(err, asyncio.TimeoutError) else type(err).__name__
            if attempt < s.retries:
                self._count(hook, "retried")
                await asyncio.sleep(min(600.0, s.backoff_s * 2 ** attempt))
        self._count(hook, "dropped")
        log.warning("webhook %s: event %d (%s) dropped after %d attempts (last: %s); %d dropped "
                    "so far", s.name, event.id, event.kind, s.retries + 1, last,
                    hook.counts["dropped"],
                    extra={"event": "webhook.dropped", "webhook": s.name})


__all__ = ["WebhookSettings", "WebhookSender", "signature", "RESULTS"]
