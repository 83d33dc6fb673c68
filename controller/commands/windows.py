"""`metctl windows set|always|clear|show` — the maintenance windows of the running daemon (its
API: PUT/DELETE /v1/windows, docs/control.md): outside every window scale-in and
reconfiguration are held (cause `window`); scale-out never is.

    metctl windows set 'sat,sun 00:00-24:00' 'mon-fri 22:00-06:00' --timezone Europe/Lisbon
    metctl windows always      # no window: always allowed (until cleared)
    metctl windows clear       # back to the config's control.windows
    metctl windows show
"""
from __future__ import annotations

import re

import click

from controller.api_client import api_options, print_state
from controller.commands.pause import _who
from controller.control import DAYS
from controller.errors import BadInput

_WINDOW = re.compile(r"^\s*(?P<days>[a-z,\-]+)\s+(?P<start>\d{1,2}:\d{2})-(?P<end>\d{1,2}:\d{2})\s*$")
_FORMAT = click.Choice(["table", "json"])


def parse_window(text: str) -> dict[str, object]:
    """'sat,sun 00:00-24:00', 'mon-fri 22:00-06:00', 'daily 02:00-04:00' -> the API's window."""
    m = _WINDOW.match(text.lower())
    days: list[str] = []
    if m is not None:
        for part in m.group("days").split(","):
            if part in ("daily", "all"):
                days += DAYS
            elif "-" in part and all(d in DAYS for d in part.split("-", 1)):
                a, b = (DAYS.index(d) for d in part.split("-", 1))
                days += [DAYS[i % 7] for i in range(a, a + (b - a) % 7 + 1)]
            elif part in DAYS:
                days.append(part)
            else:
                days = []
                break
    if m is None or not days:
        raise BadInput("metctl windows set", "WINDOW", "DAYS HH:MM-HH:MM, days as mon..sun, "
                       f"a range mon-fri or daily, e.g. 'sat,sun 00:00-24:00'; got {text!r}")
    return {"days": list(dict.fromkeys(days)), "start": m.group("start").zfill(5),
            "end": m.group("end").zfill(5)}


@click.group(name="windows")
def command() -> None:
    """The daemon's maintenance windows (scale-in and reconfiguration only inside them)."""


@command.command(name="set")
@click.argument("windows", nargs=-1, required=True, metavar="'DAYS HH:MM-HH:MM'...")
@click.option("--timezone", default="UTC", show_default=True, help="An IANA zone, e.g. Europe/Lisbon.")
@click.option("--format", "fmt", type=_FORMAT, default="table")
@api_options
def set_windows(client, windows, timezone, fmt):
    """Replace the config's windows with these until `windows clear`."""
    body = {"windows": [parse_window(w) for w in windows], "timezone": timezone, "by": _who()}
    print_state(client.call("PUT", "/v1/windows", body), fmt)


@command.command(name="always")
@click.option("--format", "fmt", type=_FORMAT, default="table")
@api_options
def always(client, fmt):
    """No window: scale-in and reconfiguration always allowed (until `windows clear`)."""
    print_state(client.call("PUT", "/v1/windows", {"windows": [], "timezone": "UTC", "by": _who()}), fmt)


@command.command(name="clear")
@click.option("--format", "fmt", type=_FORMAT, default="table")
@api_options
def clear(client, fmt):
    """Back to the config's windows (control.windows)."""
    print_state(client.call("DELETE", "/v1/windows"), fmt)


@command.command(name="show")
@click.option("--format", "fmt", type=_FORMAT, default="table")
@api_options
def show(client, fmt):
    """The windows in force and whether one is open now."""
    doc = client.call("GET", "/v1/status")
    if fmt == "json":
        print_state(doc.get("window") or {}, fmt)
        return
    w = doc.get("window") or {}
    click.echo(f"windows from {w.get('source', 'config')} ({w.get('timezone', 'UTC')}): "
               + ("; ".join(f"{','.join(x['days'])} {x['start']}-{x['end']}" for x in w.get("windows", []))
                  or "none: always allowed"))
    if w.get("configured"):
        click.echo(("open now: " if w["open"] else "closed now: ") + w["words"])
