"""`metctl pause [--for 2h] [--reason TEXT] [--finish-plan]` — hold every decision (cause
`paused`) until resumed or the time is up; a plan in flight stops at its next consistent point
unless --finish-plan. Calls the daemon's API (docs/control.md)."""
from __future__ import annotations

import click

from controller.api_client import api_options, parse_duration, print_state
import getpass
import socket


@click.command(name="pause")
@click.option("--for", "for_", default=None, metavar="DURATION", help="e.g. 30m, 2h, 1d (default: until resumed).")
@click.option("--reason", default="", help="Why (shown in status and holds).")
@click.option("--finish-plan", is_flag=True, help="Let a plan in flight finish.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, for_, reason, finish_plan, fmt):
    """Pause the daemon's actions (decisions are still made and shown)."""
    body = {"reason": reason, "stop_plan": not finish_plan, "by": _who()}
    if for_ is not None:
        body["for_s"] = parse_duration(for_)
    print_state(client.call("POST", "/v1/pause", body), fmt)


def _who() -> str:
    try:
        return f"{getpass.getuser()}@{socket.gethostname()}"
    except Exception:  # noqa: BLE001
        return "cli"
