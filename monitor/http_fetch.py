"""One bounded HTTP GET for the metric sources that poll servers (Prometheus' query API, each
RegionServer's /jmx): a connect timeout, then ONE deadline for sending the request, the server's
work and the complete answer — not per socket read: a watchdog shuts the socket down when it
passes, so a server dripping a byte at a time is cut off; a byte limit on what is read (and on
Content-Length before reading); no redirects (http.client follows none; a 3xx is an error);
credentials in the URL sent as basic auth and never shown (`shown_url`).

    status, body = get(url, "/jmx?qry=...", where="hbase http://rs1:16030", deadline=...,
                       connect_timeout_s=2, max_bytes=64 << 20,
                       timeout_setting="monitor.http.read_timeout_s",
                       size_setting="monitor.http.max_mb")

Every failure is a FetchError whose message starts with `where` and names the setting to change.
"""
from __future__ import annotations

import base64
import http.client
import os
import socket
import threading
import time
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from common.net_reason import net_reason


class FetchError(Exception):
    """The answer could not be had (message: where, what, and the setting that bounds it)."""


def shown_url(url: str) -> str:
    """`url` as it may be printed: without user:password@."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=host).geturl()


def _cut(sock: socket.socket | None) -> None:
    """Shut the connection down under a reader blocked in another thread (shutdown, unlike close,
    wakes a blocked recv). On a duplicate of the raw descriptor: the reading thread still holds
    the TLS object of an https connection, which must not be torn down under it."""
    if sock is None:
        return
    try:
        with socket.socket(fileno=os.dup(sock.fileno())) as raw:
            raw.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: nothing left to wake


def get(url: str, target: str, *, where: str, connect_timeout_s: float, read_timeout_s: float,
        max_bytes: int, timeout_setting: str, size_setting: str,
        headers: dict[str, str] | None = None, deadline: float | None = None,
        sink: Callable[[bytes], None] | None = None) -> tuple[int, bytes]:
    """(status, body) of `GET target` on `url`'s server: connected within connect_timeout_s,
    the complete answer within read_timeout_s after that (and by `deadline`, a time.monotonic()
    instant, when given: a poll's several requests may share one). Raises FetchError for no
    connection, no complete answer in time, an answer over max_bytes, a redirect, or a failed
    exchange. With `sink`, a 200 answer's body goes to it chunk by chunk as it arrives (nothing
    is kept here; body is b""), and any other answer's body is not read."""
    parts = urlsplit(url)
    https = parts.scheme == "https"
    sent = {"User-Agent": "metctl", **(headers or {})}
    if parts.username is not None:
        user_pass = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        sent["Authorization"] = "Basic " + base64.b64encode(user_pass.encode()).decode("ascii")
    late = f"{where}: no complete answer within {read_timeout_s:g} s ({timeout_setting})"
    limit = f"the {max_bytes / 2**20:g} MiB limit ({size_setting})"
    cls = http.client.HTTPSConnection if https else http.client.HTTPConnection
    connect_s = connect_timeout_s if deadline is None else \
        min(connect_timeout_s, deadline - time.monotonic())
    if connect_s <= 0:
        raise FetchError(late + " (no time left to connect)")
    conn = cls(parts.hostname or "", parts.port or (443 if https else 80), timeout=connect_s)
    resp: http.client.HTTPResponse | None = None
    try:
        try:
            conn.connect()  # TCP (and TLS: certificates checked) within connect_timeout_s
        except OSError as err:
            raise FetchError(f"{where}: cannot connect: {net_reason(err)}") from err
        # held here: http.client drops conn.sock once it has the headers of a closing answer,
        # while the body is still read through it
        sock = conn.sock
        ends = time.monotonic() + read_timeout_s
        deadline = ends if deadline is None else min(deadline, ends)
        expired = threading.Event()

        def on_deadline() -> None:
            expired.set()
            _cut(sock)

        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), on_deadline)
        watchdog.daemon = True
        watchdog.start()
        try:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            conn.request("GET", target, headers=sent)
            resp = conn.getresponse()
            if 300 <= resp.status < 400:
                moved = (resp.getheader("Location") or "?")[:100]
                raise FetchError(f"{where}: answered HTTP {resp.status} to {shown_url(moved)}; "
                                 "redirects are not followed")
            length = resp.getheader("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                raise FetchError(f"{where}: answer of {int(length)} bytes is larger than {limit}")
            body = bytearray()
            read = 0
            while sink is None or resp.status == 200:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or expired.is_set():
                    raise FetchError(late + f" (read {read} bytes)")
                sock.settimeout(remaining)
                chunk = resp.read1(262144)  # what has arrived, not "wait for 256 KiB"
                if not chunk:
                    break
                read += len(chunk)
                if read > max_bytes:
                    raise FetchError(f"{where}: answer larger than {limit}")
                if sink is None:
                    body += chunk
                else:
                    sink(chunk)
            if expired.is_set():  # the watchdog's shutdown ended the body early
                raise FetchError(late + f" (read {read} bytes)")
        except (OSError, http.client.HTTPException) as err:
            # every socket timeout was set to what was left of the deadline: it has passed
            if expired.is_set() or isinstance(err, TimeoutError):
                raise FetchError(late) from err
            raise FetchError(f"{where}: request failed: {net_reason(err)}") from err
        finally:
            watchdog.cancel()
        return resp.status, bytes(body)
    finally:
        if resp is not None:
            resp.close()  # it holds the socket after http.client let go of it
        conn.close()


__all__ = ["FetchError", "get", "shown_url"]
