"""`metctl events [--follow] [--kind K,...] [--limit N] [--format table|json]` — what the daemon
decided, held, did, failed at and was told, one line each (the API's `/v1/events`); with
`--follow`, new ones as they happen (`/v1/events/stream`) until interrupted, reconnecting after
the last one seen when the stream drops."""
from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any

import click

from controller.api_client import ApiUnreachable, api_options
from controller.events import parse_kinds
from controller.cli import one_line
import requests


def line(event: dict[str, Any]) -> str:

    at = datetime.fromtimestamp(event["at_unix_s"]).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    reason = f"  {event['reason']}" if event.get("reason") else ""
    # names come from the cluster: one terminal-safe line whatever they hold
    return one_line(f"{at}  {event['kind']:<8}  {event['subject']}  {event['outcome']}{reason}")


def _show(event: dict[str, Any], fmt: str) -> None:
    click.echo(json.dumps(event, default=str) if fmt == "json" else line(event))


@click.command(name="events")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new events as they happen.")
@click.option("--kind", "kinds", default=None, metavar="K[,K...]",
              help="Only these kinds: decision, hold, action, failure, command.")
@click.option("--limit", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="How many of the latest events to print first.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              help="One line of words per event, or one JSON object per line.")
@api_options
def command(client, follow, kinds, limit, fmt):
    """Print the daemon's events (decisions, holds, actions, failures, commands)."""
    parse_kinds(kinds, "--kind")  # bad input before any request
    query = f"/v1/events?limit={limit}" + (f"&kind={kinds}" if kinds else "")
    doc = client.call("GET", query)
    last = doc.get("last_id", 0)
    for event in doc["events"]:
        _show(event, fmt)
        last = max(last, event["id"])
    if not follow:
        return
    try:
        _follow(client, kinds, last, fmt)
    except KeyboardInterrupt:
        return


def _follow(client: Any, kinds: str | None, last: int, fmt: str) -> None:

    headers = {"Accept": "text/event-stream"}
    if client.token:
        headers["Authorization"] = f"Bearer {client.token}"
    delay = 0.5
    while True:
        try:
            with requests.get(client.base + "/v1/events/stream" + (f"?kind={kinds}" if kinds else ""),
                              headers={**headers, "Last-Event-ID": str(last)}, stream=True,
                              timeout=(client.timeout_s, 60)) as r:
                if r.status_code == 401:
                    client.call("GET", "/v1/events/stream")  # raises the 401 as bad input
                if r.status_code != 200:
                    raise ApiUnreachable(f"GET /v1/events/stream: {r.status_code}")
                delay = 0.5
                for event in _parse(r.iter_lines(decode_unicode=True)):
                    _show(event, fmt)
                    last = max(last, event["id"])
        except requests.RequestException:
            pass  # the daemon restarted or the network dropped: reconnect after `last`
        time.sleep(delay)
        delay = min(delay * 2, 10.0)


def _parse(lines: Any) -> Any:
    """Server-sent events -> the `event` messages' JSON."""
    name = "message"
    data: list[str] = []  # this message's data lines
    for raw in lines:
        if raw is None:
            continue
        if raw == "":
            if name == "event" and data:
                yield json.loads("".join(data))
            name, data = "message", []
        elif raw.startswith("event:"):
            name = raw[6:].strip()
        elif raw.startswith("data:"):
            data.append(raw[5:].strip())
