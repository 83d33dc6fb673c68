"""`metctl hbase-jars fetch [--version V] [--dir D] [--repository URL]` — the HBase jars the
HBase driver needs (hbase-client, hbase-server and their runtime dependencies), from Maven
Central with Maven, into `D/hbase-<version>/lib` (D: $METCTL_CACHE or ~/.cache/metctl). Prints
where they went and the `datastore.hbase.client_jars_dir` line to put in the config.

The same fetch as deploy/local_hbase/cluster.py (actuator/hbase_jars.py). Idempotent: jars
already there are reported at once. Exit 2 for a version that is not one (or is not on the
repository), a repository that is no http(s) URL, an unwritable folder or no Maven; exit 1, one
line, when the repository cannot be reached (also when Maven's own words for it are "No plugin
found for prefix 'dependency'").
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from actuator import hbase_jars
from controller.errors import BadInput


@click.group(name="hbase-jars")
def command() -> None:
    """The HBase client jars of the hbase data-store driver."""


@command.command(name="fetch")
@click.option("--version", "version", default=hbase_jars.HBASE_VERSION, show_default=True,
              help="HBase version as on Maven Central (match your cluster's major.minor).")
@click.option("--dir", "root", metavar="DIR", default=None,
              help="Folder to fetch into (as DIR/hbase-<version>/lib). Default: $METCTL_CACHE or ~/.cache/metctl.")
@click.option("--repository", metavar="URL", default=None,
              help="A mirror of Maven Central to fetch from instead (e.g. your Nexus or Artifactory).")
def fetch(version: str, root: str | None, repository: str | None) -> None:
    """Fetch the jars (once; a second call finds them) and print the config line."""
    t0 = time.monotonic()
    try:
        home, fetched = hbase_jars.fetch(version, Path(root).expanduser() if root else None,
                                         repository=repository)
    except hbase_jars.JarsError as err:
        if err.kind == "version":
            raise BadInput("metctl hbase-jars fetch", "--version", str(err)) from None
        if err.kind == "dir":
            raise BadInput("metctl hbase-jars fetch", "--dir", f"a folder metctl can write: {err}") from None
        if err.kind == "repository":
            raise BadInput("metctl hbase-jars fetch", "--repository", str(err)) from None
        if err.kind == "maven":
            raise BadInput("metctl hbase-jars fetch", "mvn", str(err)) from None
        raise click.ClickException(str(err)) from None
    lib = (home / "lib").resolve()
    n = sum(1 for _ in lib.glob("*.jar"))
    if fetched:
        click.echo(f"HBase {version}: {n} jars fetched into {lib} ({time.monotonic() - t0:.1f} s)")
    else:
        click.echo(f"HBase {version}: {n} jars already present in {lib}")
    click.echo("In the metctl config:\n  datastore:\n    hbase:\n"
               f"      client_jars_dir: {lib}")
    if lib == hbase_jars.default_client_jars_dir().resolve():
        click.echo("(the default: with client_jars_dir unset, metctl finds these jars too)")
