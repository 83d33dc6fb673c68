"""`metctl explain [--format table|json]` — why the daemon did (or did not) act: its last
decision or hold with the reason, each node's verdict, and the controls in force (the API)."""
from __future__ import annotations

import json
from typing import Any

import click

from controller.api_client import api_options, status_lines
from rich.console import Console
from rich.table import Table


def explain_lines(doc: dict[str, Any]) -> list[Any]:
    """What `explain` prints for a `GET /v1/status` document: str lines and a rich Table of
    the verdicts. A round ends in a plan or a hold, said with the same words as the live view
    and the end-of-run line (`hold (<cause>)`, controller/hold_causes.py)."""
    out: list[Any] = []
    last = doc.get("last_decision")
    if not last:
        out.append("no decision yet")
    else:
        sizing = last.get("sizing") or {}
        hold = last.get("hold")
        if hold:
            head = f"last decision: hold ({hold['cause']}): {hold['words']}"
        else:
            head = f"last decision: {last['kind']}: {last.get('reason') or '-'}"
        if sizing:
            head += (f" — {sizing['current']} -> {sizing['target']} nodes, "
                     f"{last.get('actions', 0)} actions")
            if hold and last.get("actions"):
                head += " not carried out"
        out.append(head)
        if hold and last.get("actions") and last.get("reason"):
            out.append(f"the plan held back: {last['reason']}")
        if last.get("verdicts"):
            t = Table("node", "verdict", "why")
            for v in last["verdicts"]:
                t.add_row(v["node"], v["verdict"], "; ".join(v["reasons"]))
            out.append(t)
    flight = doc.get("plan_in_flight")
    if flight:
        out.append(f"plan in flight {flight['plan_id']}: phase {flight.get('phase')}, "
                   f"{flight.get('done')}/{flight.get('total')} actions")
    out.extend(status_lines(doc))
    return out


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
    for line in explain_lines(doc):
        if isinstance(line, str):
            console.print(line, markup=False, highlight=False)
        else:
            console.print(line)
