"""`metctl unpin` — back to the policy's min_nodes..max_nodes (the daemon's API)."""
from __future__ import annotations

import click

from controller.api_client import api_options, print_state


@click.command(name="unpin")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, fmt):
    """Remove the pinned size."""
    print_state(client.call("DELETE", "/v1/size"), fmt)
