"""`metctl unprotect NODE` — lift a node's protection (the daemon's API)."""
from __future__ import annotations

from urllib.parse import quote

import click

from controller.api_client import api_options, print_state


@click.command(name="unprotect")
@click.argument("node")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, node, fmt):
    """Lift a node's protection."""
    print_state(client.call("DELETE", f"/v1/nodes/{quote(node, safe='')}/protection"), fmt)
