"""`metctl validate FILE` — check a config, a snapshot or a scenario file without acting on it.

A mapping with `nodes` or `partitions` is a snapshot, one with `workloads` a simulator scenario,
anything else a metctl config. Exit 0 with one "ok" line, or 2 with the one-line error (file,
field, what was expected).
"""
from __future__ import annotations

import click

from controller.config import config_from, load_document, parse_model
from controller.layers import preset_of
from controller.snapshot_io import is_snapshot_data, snapshot_from_data


@click.command(name="validate")
@click.argument("file", metavar="FILE")
def command(file: str) -> None:
    """Check a config (or snapshot, or scenario) file: exit 0, or 2 with the error."""
    doc = load_document(file)
    if is_snapshot_data(doc.data):
        snap = snapshot_from_data(doc.data, doc.file, doc)
        click.echo(f"ok: {file}: snapshot with {len(snap.nodes)} nodes and "
                   f"{len(snap.partitions)} partitions")
        return
    if isinstance(doc.data, dict) and "workloads" in doc.data:
        from simulator.scenario import Scenario  # noqa: PLC0415 — only when needed: the simulator is big

        scenario = parse_model(Scenario, doc.data, doc.file, doc)
        click.echo(f"ok: {file}: simulator scenario {scenario.name!r} with "
                   f"{len(scenario.workloads)} workloads over {scenario.duration_s:g} s")
        return
    config = config_from(doc.data, doc.file, doc)
    click.echo(f"ok: {file}: metctl config for cluster {config.cluster!r}, policy preset "
               f"{preset_of(config.policy)}")
