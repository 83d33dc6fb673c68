"""`metctl pin --nodes N` (or `--min A --max B`) — pin the cluster size: the policy's bounds
become these until `metctl unpin` (the daemon's API)."""
from __future__ import annotations

import click

from controller.api_client import api_options, print_state
from controller.commands.pause import _who
from controller.errors import BadInput


@click.command(name="pin")
@click.option("--nodes", type=int, default=None, help="Exactly this many nodes.")
@click.option("--min", "min_", type=int, default=None, help="At least this many.")
@click.option("--max", "max_", type=int, default=None, help="At most this many.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, nodes, min_, max_, fmt):
    """Pin the cluster size."""
    if nodes is not None:
        if min_ is not None or max_ is not None:
            raise BadInput("metctl pin", "--nodes", "--nodes N alone, or --min and --max "
                           "(not both: --nodes N means --min N --max N)")
        min_ = max_ = nodes
    if min_ is None or max_ is None:
        raise BadInput("metctl pin", "--nodes", "--nodes N, or both --min and --max")
    print_state(client.call("PUT", "/v1/size", {"min": min_, "max": max_, "by": _who()}), fmt)
