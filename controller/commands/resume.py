"""`metctl resume` — end a pause (the daemon's API)."""
from __future__ import annotations

import click

from controller.api_client import api_options, print_state
from controller.commands.pause import _who


@click.command(name="resume")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, fmt):
    """Resume after `metctl pause`."""
    print_state(client.call("POST", "/v1/resume", {"by": _who()}), fmt)
