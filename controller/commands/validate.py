"""`metctl validate FILE` — check a config, a snapshot or a scenario file without acting on it.

A mapping with `nodes` or `partitions` is a snapshot, one with `workloads` a simulator scenario,
one without `cluster` whose keys are all a calibration file's (`timeouts_s`; `hardware`, `costs`,
`actions`) a calibration file, anything else a metctl config, which must name its `cluster` and `datastore.driver`. FILE may be
a shipped file by name (config:met, example:met-5-nodes, scenario:sudden-spike,
calibration:simulator). Exit 0 with one "ok" line, or 2 with the one-line error (file,
field, what was expected).
"""
from __future__ import annotations

from pathlib import Path

import click

from controller import calibration
from controller.config import config_from, load_document, parse_model
from controller.config_files import FILE_OR_NAME, change_marks, require_named
from controller.layers import preset_of
from controller.snapshot_io import is_snapshot_data, snapshot_from_data


@click.command(name="validate")
@click.argument("file", metavar="FILE", type=FILE_OR_NAME)
def command(file: str) -> None:
    """Check a config (or snapshot, scenario or calibration) file: exit 0, or 2 with the error."""
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
    section = calibration.kind_of(doc.data)
    if section is not None:
        calibration.load(section, doc.file)
        click.echo(f"ok: {file}: {section} calibration file ({calibration.KINDS[section].what}; "
                   f"{section}.calibration: FILE in a config)")
        return
    require_named(doc.file, doc.data)  # an empty file is no config (issue 24 item 5)
    config = config_from(doc.data, doc.file, doc)
    click.echo(f"ok: {file}: metctl config for cluster {config.cluster!r}, policy preset "
               f"{preset_of(config.policy)}")
    marks = change_marks(Path(doc.file).read_text(errors="replace"))  # read within bounds above
    if marks:
        shown = ", ".join(map(str, marks[:10])) + (" …" if len(marks) > 10 else "")
        click.echo(f"warning: {file}: {len(marks)} line(s) still marked `# CHANGE` (lines {shown}): "
                   "set your values and delete the marks; `metctl run` refuses the file until then",
                   err=True)
