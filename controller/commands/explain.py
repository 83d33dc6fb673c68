"""`metctl explain [--format table|json]` — why the daemon did (or did not) act: its last
decision or hold with the reason, each node's verdict, and the controls in force (the API)."""
from __future__ import annotations

import json

import click

from controller.api_client import api_options, status_lines
from rich.console import Console
from rich.table import Table


@click.command(name="explain")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@api_options
def command(client, fmt):
    """Explain the last decision."""
    doc = client.call("GET", "/v1/status")
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, default=str))
        return

    console = Console()
    last = doc.get("last_decision")
    if not last:
        console.print("no decision yet", markup=False)
    else:
        sizing = last.get("sizing") or {}
        head = f"last decision ({last['kind']}): {last.get('reason') or '-'}"
        if sizing:
            head += f" — {sizing['current']} -> {sizing['target']} nodes, {last.get('actions', 0)} actions"
        console.print(head, markup=False, highlight=False)
        if last.get("hold"):
            console.print(f"held: {last['hold']['cause']}: {last['hold']['words']}", markup=False,
                          highlight=False)
        if last.get("verdicts"):
            t = Table("node", "verdict", "why")
            for v in last["verdicts"]:
                t.add_row(v["node"], v["verdict"], "; ".join(v["reasons"]))
            console.print(t)
    flight = doc.get("plan_in_flight")
    if flight:
        console.print(f"plan in flight {flight['plan_id']}: phase {flight.get('phase')}, "
                      f"{flight.get('done')}/{flight.get('total')} actions", markup=False,
                      highlight=False)
    for line in status_lines(doc):
        console.print(line, markup=False, highlight=False)
