"""`metctl config list | show NAME` — the configs, example snapshots and scenarios metctl ships
inside its package, by name, so an installed copy can use and copy them from any directory:

    metctl config list                           every shipped file by name, with its first line
    metctl config show production/ec2 > metctl.yaml    a template to start from
    metctl plan --snapshot example:met-5-nodes   the same names wherever a command reads a file
"""
from __future__ import annotations

import click

from controller.config_files import KINDS, resolve, shipped


def _first_line(path) -> str:
    for line in path.read_text().splitlines():
        text = line.lstrip("# ").strip()
        if text:
            return text if line.startswith("#") else ""
    return ""


@click.group(name="config")
def command() -> None:
    """The configs, examples and scenarios metctl ships (by name)."""


@command.command(name="list")
def list_files() -> None:
    """Every shipped file by name (use it as KIND:NAME, e.g. example:met-5-nodes)."""
    for kind in KINDS.values():
        click.echo(f"{kind.name}:  ({kind.what})")
        files = {n: f for n, f in shipped(kind.name).items() if f.suffix == ".json" or "." not in n}
        for name, path in files.items():
            line = _first_line(path)
            click.echo(f"  {kind.name}:{name}" + (f"  — {line[:90]}" if line else ""))


@command.command(name="show")
@click.argument("name")
def show(name: str) -> None:
    """Print a shipped file: NAME is a config (met, production/ec2) or KIND:NAME."""
    click.echo(open(resolve(name if ":" in name else f"config:{name}"), encoding="utf-8").read(),
               nl=False)
