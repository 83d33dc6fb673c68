"""`metctl protect NODE [--reason TEXT]` — never restart, drain or terminate NODE, even in a
plan already running (the daemon's API)."""
from __future__ import annotations

from urllib.parse import quote

import click

from controller.api_client import api_options, print_state
from controller.commands.pause import _who


@click.command(name="protect")
@click.argument("node")
@click.option("--reason", default="", help="Why (shown in status and in plans).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, node, reason, fmt):
    """Protect a node from restart, drain and termination."""
    print_state(client.call("PUT", f"/v1/nodes/{quote(node, safe='')}/protection",
                            {"reason": reason, "by": _who()}), fmt)
