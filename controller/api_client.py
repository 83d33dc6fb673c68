"""The CLI side of the daemon's HTTP API: `metctl pause|resume|pin|unpin|protect|unprotect|explain`.

Each verb calls `--api URL` (default: http:// + control.api_address of `--config`) with the
bearer token from `--token-file` (default: control.token_file). A refused request (400, 401,
404) is bad input (exit 2, one line naming what was wrong); an unreachable daemon or a server
error exits 1.
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any

import click

from controller.config_files import FILE_OR_NAME, load_given_config
from controller.errors import BadInput
from controller.api import read_token
from datetime import datetime
import requests


class ApiUnreachable(RuntimeError):
    """The daemon could not be reached or failed (the CLI exits 1)."""


def api_options(fn: Any) -> Any:
    @click.option("--config", "config_path", type=FILE_OR_NAME, default=None,
                  help="metctl config (for control.api_address and control.token_file).")
    @click.option("--api", "api", default=None, metavar="URL",
                  help="The daemon's API, e.g. http://127.0.0.1:9465 (default from the config).")
    @click.option("--token-file", "token_file", type=click.Path(dir_okay=False), default=None,
                  help="File with the API token (default: control.token_file).")
    @functools.wraps(fn)
    def wrapper(config_path: str | None, api: str | None, token_file: str | None, **kw: Any):
        return fn(client=ApiClient.from_options(config_path, api, token_file), **kw)
    return wrapper


class ApiClient:
    def __init__(self, base: str, token: str | None, token_file: str, timeout_s: float = 10.0,
                 verify: str | bool = True):
        self.base, self.token, self.token_file, self.timeout_s = base.rstrip("/"), token, token_file, timeout_s
        self.verify = verify  # requests' verify: True (the system's CAs) or a CA file

    @classmethod
    def from_options(cls, config_path: str | None, api: str | None,
                     token_file: str | None) -> ApiClient:

        control = load_given_config(config_path).control
        if api is None:
            if control.api_address is None:
                raise BadInput(config_path or "(default config)", "control.api_address",
                               "an API address (or pass --api URL)")
            host, port = control.bind()
            scheme = "https" if control.tls_cert_file else "http"
            api = f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"
        if not re.match(r"^https?://[^/\s]+", api):
            raise BadInput("--api", "", f"a URL such as http://127.0.0.1:9465, got {api!r}")
        path = token_file or control.token_file
        return cls(api, read_token(path), path, verify=control.tls_ca_file or True)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            r = requests.request(method, self.base + path, json=body, headers=headers,
                                 timeout=self.timeout_s, verify=self.verify)
        except requests.exceptions.SSLError:
            raise ApiUnreachable(f"the metctl API at {self.base} did not present a certificate "
                                 "this CLI trusts (control.tls_ca_file)") from None
        except requests.RequestException as err:
            raise ApiUnreachable(f"the metctl API at {self.base} is unreachable "
                                 f"({type(err).__name__}); is `metctl run` serving it?") from None
        try:
            doc = r.json()
        except ValueError:
            doc = {"error": r.text[:200]}
        if r.status_code == 401:
            raise BadInput(self.token_file, "", "the daemon's API token (401: "
                           + ("no token file" if self.token is None else "token refused") + ")")
        if 400 <= r.status_code < 500:
            raise BadInput(f"{method} {path}", "", f"{doc.get('error', r.reason)} ({r.status_code})")
        if r.status_code >= 400:
            raise ApiUnreachable(f"{method} {path}: {doc.get('error', r.reason)} ({r.status_code})")
        return doc


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd]?)$")


def parse_duration(text: str) -> float:
    """`90`, `90s`, `15m`, `2h`, `1d` -> seconds (> 0)."""
    m = _DURATION.match(text.strip().lower())
    if not m or float(m.group(1)) <= 0:
        raise BadInput("--for", "", f"a duration > 0 such as 90s, 15m, 2h or 1d, got {text!r}")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def print_state(doc: dict[str, Any], fmt: str = "table") -> None:
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, default=str))
        return
    for line in status_lines(doc):
        click.echo(line)


def status_lines(doc: dict[str, Any]) -> list[str]:

    def when(t: float | None) -> str:
        # what the server applied is shown whatever its value: rendering never turns an
        # applied change into an error
        try:
            return datetime.fromtimestamp(t).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z") if t else "-"
        except (OverflowError, ValueError, OSError, TypeError):
            return f"unix time {t}"

    lines = [f"{doc.get('identity') or 'metctl'}: {doc.get('role')}, mode {doc.get('mode')}"]
    p = doc.get("pause")
    if doc.get("paused") and p:
        until = when(p.get("until_unix_s")) if p.get("until_unix_s") else "resumed"
        lines.append(f"paused by {p['by']} until {until}: {p.get('reason') or '(no reason)'}")
    else:
        lines.append("not paused")
    pin = doc.get("pinned")
    lines.append(f"size pinned to {pin['min']}..{pin['max']} by {pin['by']}" if pin else "size not pinned")
    prot = doc.get("protected") or {}
    lines.append("protected: " + (", ".join(f"{n} ({v['reason'] or v['by']})" for n, v in prot.items())
                                  if prot else "none"))
    w = doc.get("window")
    if w and w.get("configured"):
        lines.append(("window open: " if w["open"] else "window closed: ") + w["words"])
    return lines


__all__ = ["ApiClient", "api_options", "parse_duration", "print_state", "status_lines"]
