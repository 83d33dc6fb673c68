"""`metctl plan` — dry run: read a snapshot, decide, print the plan (table or stable JSON).

`--state FILE` carries the decision memory (MET Algorithm 1's step, whether the first decision
was made) from one run to the next, exactly as the daemon keeps it, so a sequence of snapshots
replays the daemon's decisions. The memory is written only once the plan is ready, and before
it is printed: a failed run leaves the state as it was.
"""
from __future__ import annotations

import shutil
import sys

import click

from common.cyclic_gc import cyclic_gc_paused
from controller.config_files import FILE_OR_NAME, load_given_config
from controller.json_out import plan_to_json
from controller.snapshot_io import read_snapshot
from controller.state import read_memory, write_memory
from decision import decide
from decision.model import DecisionMemory
from decision.policy import PolicyConfig


@click.command(name="plan")
@click.option("--snapshot", "snapshot_file", required=True, metavar="FILE", type=FILE_OR_NAME,
              help="ClusterSnapshot to plan for (JSON if it ends in .json, else YAML), or a "
                   "shipped one by name: example:met-5-nodes (metctl config list).")
@click.option("--config", "config_file", metavar="FILE", default=None, type=FILE_OR_NAME,
              help="metctl config (YAML, or config:NAME); its `policy:` section decides. "
                   "Default: built-in.")
@click.option("--state", "state_file", metavar="FILE", default=None,
              help="Decision memory: read if it exists, updated memory written back.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="`json` is stable (field names never change).")
@click.option("--all", "show_all", is_flag=True,
              help="Table: every node and action (default: the first 40 of each, most loaded first).")
def command(snapshot_file: str, config_file: str | None, state_file: str | None,
            fmt: str, show_all: bool) -> None:
    """Print the plan the policy makes for a snapshot (nothing is changed)."""
    # Reading and deciding pause the cyclic collector already; rendering a large plan makes
    # ~100,000 more dicts and rows, each few hundred of them starting a walk of every live
    # object. Pausing defers that work past the command (the collector comes back on).
    with cyclic_gc_paused():
        text, memory = _plan_text(snapshot_file, config_file, state_file, fmt, show_all)
    if state_file:
        write_memory(state_file, memory)
    click.echo(text, nl=False)


def _plan_text(snapshot_file: str, config_file: str | None, state_file: str | None,
               fmt: str, show_all: bool) -> tuple[str, DecisionMemory]:
    if config_file is None:
        # The default config's policy is PolicyConfig(); importing the whole config (every
        # section's settings: drivers, HA, the API, telemetry) cost ~0.1 s per plan.
        policy = PolicyConfig()
    else:
        policy = load_given_config(config_file).policy
    snapshot = read_snapshot(snapshot_file)
    memory = read_memory(state_file) if state_file else DecisionMemory()
    plan = decide(snapshot, policy, memory)
    if fmt == "json":
        text = plan_to_json(plan)
    else:
        from controller.render import SUMMARY_ROWS, plan_to_table  # noqa: PLC0415 — Rich: tables only
        tty = sys.stdout.isatty()
        width = shutil.get_terminal_size((140, 24)).columns if tty else 140
        text = plan_to_table(plan, snapshot, width=width, color=tty,
                             rows=None if show_all else SUMMARY_ROWS)
    return text, plan.memory
