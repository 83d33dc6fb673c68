"""What every request to the daemon's HTTP API goes through before its handler, whatever the
route (the `/v1` API and the console's routes alike): one aiohttp middleware, in this order.

1. Host check. A browser page whose name an attacker made resolve to 127.0.0.1 (DNS rebinding)
   sends its own name as Host; such requests get 421. Accepted: the address the API is bound
   to, the loopback names, any IP literal (a rebinding attack has a DNS name by definition),
   and `control.allowed_hosts`.
2. Who asks. A valid bearer token makes an operator. Compared in constant time as bytes, so a
   non-ASCII header is simply not the token.
3. Rate. Operators and anonymous callers have budgets of their own (`control.max_requests_per_s`
   each): a flood of anonymous reads never delays `metctl resume`. Over the budget a request
   waits its turn without CPU; one that would wait more than MAX_WAIT_S gets 429.
4. Origin and auth. A change a browser says comes from another origin (Origin,
   Sec-Fetch-Site) is 403 (CSRF). Changes need the token (401 without, naming no file: the
   body is for anyone who asks); reads too with `control.read_requires_token`, except the
   console's page and packaged assets (`/`, `/console/...`), which hold no data.
5. Answers carry SECURITY_HEADERS (Content-Security-Policy without inline script, nosniff,
   no framing). Errors. BadInput is 400 with its one line; aiohttp's own errors keep their status as JSON;
   anything else is 500 "internal error" with the details in the daemon's log (one JSON line),
   never Python error text in the answer.

Request bodies are read with a deadline and parsed with common.documents.parse_json (bounded
depth and number length): `[[[[…` 60 KB deep is a 400 naming the nesting, not a RecursionError.
"""
from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import time
from collections.abc import Iterable
from typing import Any

from common.documents import parse_json
from controller.errors import BadInput
from aiohttp import web

log = logging.getLogger("metctl.api")

# A request that would wait longer than this for its turn is refused (429), so a flood cannot
# pile up an unbounded queue of sleeping requests.
MAX_WAIT_S = 10.0
# The request attribute saying whether the caller showed a valid token (handlers read it).
OPERATOR = "metctl_operator"


class TokenBucket:
    """`rate` turns a second, up to `rate` at once; `take(now)` books the next turn and returns
    how long to wait for it (0: now). Only the server's event-loop thread calls it."""

    def __init__(self, rate: float):
        self.rate, self.capacity = rate, max(1.0, rate)
        self.tokens = self.capacity
        self.at: float | None = None

    def take(self, now: float) -> float:
        if self.at is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def give_back(self) -> None:
        """A booked turn not used (the request was refused instead of waiting)."""
        self.tokens = min(self.capacity, self.tokens + 1.0)


class ClientTooSlow(Exception):
    """The request body did not arrive within control.request_timeout_s."""


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_of(header: str) -> str:
    """The host part of a Host header: `[::1]:9465` -> `::1`, `a.b:80` -> `a.b`."""
    header = header.strip()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    if header.count(":") == 1:
        return header.split(":", 1)[0]
    return header


class Guard:
    """The middleware's state: the token, the two budgets, the names this API answers to."""

    def __init__(self, settings: Any, token: str | None, bound_host: str):
        self.settings, self.token = settings, token
        self.anonymous = TokenBucket(settings.max_requests_per_s)
        self.operators = TokenBucket(settings.max_requests_per_s)
        names: Iterable[str] = (bound_host, "localhost", *settings.allowed_hosts)
        self.hosts = {n.lower().rstrip(".") for n in names}
        # routes that change nothing although not GET (the dry-run plan)
        self.open_posts: set[str] = {"/v1/plan"}

    def host_allowed(self, header: str | None) -> bool:
        if header is None:  # HTTP/1.0 without Host: not a browser
            return True
        host = host_of(header).lower().rstrip(".")
        try:
            ipaddress.ip_address(host)
            return True
        except ValueError:
            return host in self.hosts

    def authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if self.token is None or scheme.lower() != "bearer":
            return False
        # surrogateescape: aiohttp hands undecodable header bytes over as lone surrogates
        return hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"),
                                   self.token.encode())

    def middleware(self) -> Any:

        @web.middleware
        async def guard(request: web.Request, handler: Any) -> Any:
            return await self.handle(request, handler)
        return guard

    async def handle(self, request: web.Request, handler: Any) -> Any:

        if not self.host_allowed(request.headers.get("Host")):
            return error(421, "this API answers to its own address, the loopback names and "
                         "control.allowed_hosts only (a Host header naming something else is "
                         "how DNS rebinding reaches it)")
        operator = self.authorized(request)
        request[OPERATOR] = operator
        bucket = self.operators if operator else self.anonymous
        wait = bucket.take(time.monotonic())
        if wait > MAX_WAIT_S:
            bucket.give_back()
            return error(429, f"too many requests (control.max_requests_per_s "
                         f"{self.settings.max_requests_per_s:g}); try again shortly",
                         headers={"Retry-After": str(int(MAX_WAIT_S))})
        if wait > 0:
            await asyncio.sleep(wait)
        if request.method not in ("GET", "HEAD") and not same_origin(request):
            # a browser sends Origin with every cross-site POST/PUT/DELETE: another site's
            # page must not drive the daemon through an operator's browser (CSRF)
            return error(403, "cross-origin requests are refused")
        changes = request.method not in ("GET", "HEAD") and request.path not in self.open_posts
        public = request.method in ("GET", "HEAD") and is_public(request.path)
        if (changes or (self.settings.read_requires_token and not public)) and not operator:
            return error(401, "a valid bearer token is required (Authorization: Bearer <token>, "
                         "the token in the daemon's control.token_file)")
        try:
            response = await handler(request)
            if not response.prepared:  # a stream sets them itself before it starts
                response.headers.update(SECURITY_HEADERS)
            return response
        except BadInput as err:
            return error(400, err.line())
        except web.HTTPException as err:
            if err.status >= 400:
                return error(err.status, err.reason)
            raise
        except ClientTooSlow:
            return error(408, f"request body not received within "
                         f"{self.settings.request_timeout_s:g} s")
        except Exception:  # noqa: BLE001 — a bad request never stops the server
            log.exception("API %s %s failed", request.method, request.path[:200],
                          extra={"event": "api.error"})
            return error(500, "internal error (the daemon's log has the details)")


# Sent with every answer: the console's page may run only its own packaged script (no inline
# script, nothing from another origin), never inside another site's frame.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def is_public(path: str) -> bool:
    """The console's page and its packaged assets hold no data (the data comes from /v1,
    under the read rules), so the page can load and ask for the token."""
    return path == "/" or path.startswith("/console/")


def same_origin(request: web.Request) -> bool:
    """False when the browser says the request comes from another origin (its Origin header,
    or Sec-Fetch-Site when there is no Origin); tools that send neither (curl, the CLI) pass."""
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin == f"{request.scheme}://{request.host}"
    return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
    return web.json_response({"error": message}, status=status, headers=headers)


async def read_json(request: web.Request, timeout_s: float) -> Any:
    """The request's JSON body ({} when empty), read within `timeout_s` and parsed with the
    same depth and number limits as every file metctl reads."""
    try:
        raw = await asyncio.wait_for(request.read(), timeout_s)
    except asyncio.TimeoutError:
        raise ClientTooSlow() from None
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput("request body", f"byte {err.start}", "UTF-8 text") from None
    return parse_json(text, "request body", "JSON")


def query_int(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    """A whole-number query parameter in [low, high] (ASCII digits only: `²` is a digit to
    str.isdigit, not to int)."""
    raw = request.query.get(name)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9) or not low <= int(raw) <= high:
        raise BadInput("query", name, f"a whole number from {low} to {high}, got {raw[:20]!r}")
    return int(raw)


__all__ = ["Guard", "TokenBucket", "ClientTooSlow", "OPERATOR", "MAX_WAIT_S", "error",
           "SECURITY_HEADERS", "is_public", "same_origin",
           "read_json", "query_int", "is_loopback", "host_of"]
