"""`metctl snapshot` — collect from live sources (Ganglia gmond/gmetad or Prometheus with
node_exporter, HBase RegionServer /jmx, or with `datastore.driver: cassandra` each Cassandra
node's system_views and gossip) and print the ClusterSnapshot the controller would decide on,
as JSON (the contract `metctl plan --snapshot` reads back) or a table.

Flags override the config's `monitor:` section (`--ganglia` replaces a configured Prometheus and
`--prometheus` a configured Ganglia: they are two sources of the same node metrics); any one
source alone is enough. Request rates
come from the difference of two samples, so with `--samples 1` partitions have no rate and the
snapshot says so.
"""
from __future__ import annotations

import contextlib
import logging
import sys
import time
from typing import Any, TYPE_CHECKING

import click
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from controller.options import FiniteFloat
from controller.config_files import FILE_OR_NAME, load_given_config
from controller.errors import BadInput
from controller.snapshot_archive import DEFAULT_KEEP, SnapshotArchive
from controller.snapshot_io import dump_snapshot
from decision.model import ClusterSnapshot
from monitor.collector import Collector
from monitor.live import live_sources
from monitor.settings import MonitorSettings
from controller.live import open_cassandra
from monitor.live import cassandra_sources
from pathlib import Path

if TYPE_CHECKING:  # the config imports the sections this module serves
    from controller.config import MetctlConfig

_FLAG_OF = {"ganglia_endpoints": "--ganglia", "hbase_jmx_urls": "--hbase-jmx",
            "prometheus_url": "--prometheus"}


def _settings(base: MonitorSettings, ganglia: tuple[str, ...], jmx: tuple[str, ...],
              config_file: str | None, prometheus: str | None = None,
              cassandra: bool = False) -> MonitorSettings:
    updates: dict[str, Any] = {}
    if ganglia:
        updates["ganglia_endpoints"] = ganglia
        if prometheus is None:
            updates["prometheus_url"] = ""  # the flag's source replaces the config's
    if prometheus is not None:
        updates["prometheus_url"] = prometheus
        if not ganglia:
            updates["ganglia_endpoints"] = ()
    if jmx:
        updates["hbase_jmx_urls"] = jmx
    try:
        settings = MonitorSettings.model_validate({**base.model_dump(), **updates})
    except ValidationError as err:
        first = err.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else ""
        where = _FLAG_OF.get(field, f"monitor.{field}")
        raise BadInput("command line" if field in updates else (config_file or "config"),
                       where, first["msg"].removeprefix("Value error, ")) from None
    if not cassandra and not (settings.ganglia_endpoints or settings.prometheus_url
                              or settings.hbase_jmx_urls):
        raise BadInput(config_file or "command line", "--ganglia / --prometheus / --hbase-jmx",
                       "at least one source: a gmond/gmetad HOST:PORT, a Prometheus URL or a "
                       "RegionServer URL (flags, or monitor.ganglia_endpoints / "
                       "monitor.prometheus_url / monitor.hbase_jmx_urls in --config)")
    return settings


def _fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "—"
    return f"{x * 100:.1f}%" if pct else f"{x:,.1f}"


def snapshot_table(snapshot: ClusterSnapshot, verdict: tuple[bool, str]) -> list[Any]:
    """Rich renderables: nodes, partitions, what is missing, and whether a decision could use it."""
    nodes = Table(title=f"Nodes ({len(snapshot.nodes)}) at {snapshot.taken_at:%Y-%m-%d %H:%M:%S} UTC")
    for col in ("node", "profile", "state", "cpu", "io_wait", "memory"):
        nodes.add_column(col, justify="right" if col in ("cpu", "io_wait", "memory") else "left")
    for n in snapshot.nodes:
        m = n.metrics
        nodes.add_row(n.id, n.profile, n.state, *(
            (_fmt(m.cpu, True), _fmt(m.io_wait, True), _fmt(m.memory, True)) if m
            else ("[yellow]missing[/]", "—", "—")))
    parts = Table(title=f"Partitions ({len(snapshot.partitions)}), requests per second")
    for col in ("partition", "table", "node", "reads", "writes", "scans", "size_mb", "locality"):
        parts.add_column(col, justify="right" if col in ("reads", "writes", "scans", "size_mb",
                                                         "locality") else "left")
    for p in snapshot.partitions:
        parts.add_row(p.id[:12], p.table, p.node, _fmt(p.reads), _fmt(p.writes), _fmt(p.scans),
                      _fmt(p.size_mb), _fmt(p.locality, True))
    out: list[Any] = [nodes, parts]
    if snapshot.missing:
        out.append("[bold yellow]Missing[/]\n" + "\n".join(f"  - {m}" for m in snapshot.missing))
    ok, why = verdict
    out.append(("[green]complete enough to decide on[/]: " if ok
                else "[red]not complete enough to decide on[/]: ") + why)
    return out


@click.command(name="snapshot")
@click.option("--config", "config_file", metavar="FILE", default=None, type=FILE_OR_NAME,
              help="metctl config (YAML); its `monitor:` section names the sources (with "
                   "`datastore.driver: cassandra`, the Cassandra nodes are one).")
@click.option("--ganglia", multiple=True, metavar="HOST:PORT",
              help="gmond or gmetad XML port (repeat for fail-over); overrides the config.")
@click.option("--prometheus", metavar="URL", default=None,
              help="Prometheus scraping node_exporter on the hosts, e.g. http://prom:9090 "
                   "(instead of --ganglia); overrides the config.")
@click.option("--hbase-jmx", "hbase_jmx", multiple=True, metavar="URL",
              help="RegionServer info URL, e.g. http://rs1:16030 (repeat for each server); "
                   "overrides the config.")
@click.option("--samples", type=click.IntRange(min=1), default=2, show_default=True,
              help="Samples to take; request rates need at least 2.")
@click.option("--interval", type=FiniteFloat(0.0, 86400.0), default=5.0, show_default=True,
              help="Seconds between samples.")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default="json",
              show_default=True, help="`json` is the ClusterSnapshot contract (`metctl plan "
                                      "--snapshot` reads it back).")
@click.option("--every", type=FiniteFloat(0.001, 86400.0 * 7), default=None, metavar="S",
              help="Take a snapshot every S seconds until interrupted (or --count) and keep each "
                   "in --keep-dir instead of printing it; `metctl scenario from-snapshots` "
                   "replays them.")
@click.option("--count", type=click.IntRange(min=1), default=None,
              help="With --every: stop after this many snapshots.")
@click.option("--keep-dir", type=click.Path(file_okay=False), default="metctl-state/snapshots",
              show_default=True, help="With --every: where the snapshots are kept.")
@click.option("--keep-snapshots", type=click.IntRange(min=1), default=DEFAULT_KEEP, show_default=True,
              help="With --every: at most this many snapshots are kept; the oldest go first.")
def command(config_file: str | None, ganglia: tuple[str, ...], prometheus: str | None,
            hbase_jmx: tuple[str, ...], samples: int, interval: float, fmt: str,
            every: float | None = None, count: int | None = None, keep_dir: str = "metctl-state/snapshots",
            keep_snapshots: int = DEFAULT_KEEP) -> None:
    """Collect from live sources and print the ClusterSnapshot metctl sees."""
    if count is not None and every is None:
        raise BadInput("command line", "--count", "only with --every S")
    archive = None
    if every is not None:
        try:
            archive = SnapshotArchive(keep_dir, keep_snapshots)
        except OSError as err:
            raise BadInput(keep_dir, "--keep-dir", f"a directory metctl can create and write "
                           f"({err.strerror or type(err).__name__})") from None
    config = load_given_config(config_file)
    cassandra = config.datastore.driver == "cassandra"
    if cassandra and hbase_jmx:
        raise BadInput("command line", "--hbase-jmx", "no RegionServer URL with datastore.driver "
                       f"cassandra in {config_file} (its counters come from system_views over CQL)")
    settings = _settings(config.monitor, ganglia, hbase_jmx, config_file, prometheus,
                         cassandra=cassandra)
    store = None
    if cassandra:
        store, sources = _cassandra_sources(config, settings, config_file or "config")
    else:
        sources = live_sources(settings)
    try:
        if archive is not None and every is not None:
            _keep_every(sources, settings, samples, interval, every, count, archive)
        else:
            _collect(sources, settings, samples, interval, fmt,
                     per_partition=cassandra or bool(settings.hbase_jmx_urls))
    finally:
        if store is not None:
            store.close()


def _cassandra_sources(config: MetctlConfig, settings: MonitorSettings, path: str) -> tuple[Any, list[Any]]:
    """datastore.driver cassandra: each node's system_views and gossip's server list (plus
    Ganglia if configured), through the same driver `metctl run` opens (read-only here)."""


    if settings.hbase_jmx_urls:
        raise BadInput(path, "monitor.hbase_jmx_urls",
                       "empty with datastore.driver cassandra (its per-table counters come from "
                       "system_views over CQL)")
    cs = config.datastore.cassandra
    store = open_cassandra(config, path, Path(config.executor.journal_path).parent)
    return store, cassandra_sources(settings, store.session, store, keyspaces=cs.keyspaces,
                                    timeout_s=cs.query_timeout_s)


def _keep_every(sources: list[Any], settings: MonitorSettings, samples: int, interval: float,
                every: float, count: int | None, archive: SnapshotArchive) -> None:
    """One collector polled for the whole series (rates from consecutive samples, smoothed as
    the daemon smooths them); a snapshot every `every` seconds, kept in the archive."""
    err = Console(stderr=True)
    collector = Collector(sources, settings)
    taken = 0
    start = time.monotonic()
    try:
        while count is None or taken < count:
            for i in range(samples):
                collector.poll(time.time())
                if i + 1 < samples:
                    time.sleep(interval)
            snapshot = collector.snapshot(time.time())
            path = archive.add(snapshot)
            taken += 1
            ok, why = collector.complete_enough(snapshot)
            err.print(f"snapshot {taken}: {len(snapshot.nodes)} nodes, {len(snapshot.partitions)} partitions"
                      f"{'' if ok else ' (incomplete: ' + why + ')'} -> {path}", highlight=False)
            if count is not None and taken >= count:
                break
            time.sleep(max(0.0, start + taken * every - time.monotonic()))
    except KeyboardInterrupt:
        err.print(f"interrupted: {taken} snapshots kept in {archive.directory}")


def _collect(sources: list[Any], settings: MonitorSettings, samples: int, interval: float, fmt: str,
             per_partition: bool) -> None:
    err = Console(stderr=True)
    if samples == 1 and per_partition:
        err.print("[yellow]note[/]: request rates need at least 2 samples (--samples 2); "
                  "with 1 sample partitions have no rate and are listed as missing")
    collector = Collector(sources, settings)
    # each source's failure is said once, in the snapshot's `missing` (the sources log it at
    # every poll for the daemon: here it came once a sample, then again in the verdict)
    with err.status("sampling…") as status, _quiet("metctl.monitor", "monitor"):
        for i in range(samples):
            status.update(f"sample {i + 1} of {samples}")
            collector.poll(time.time())
            if i + 1 < samples:
                time.sleep(interval)
    snapshot = collector.snapshot(time.time())
    if not snapshot.nodes and not snapshot.partitions:
        # nothing to print: an empty snapshot on stdout would be read as a cluster of none.
        # ClickException: exit 1 with one line (controller.cli.main drops a bare Exit's code).
        raise click.ClickException("no source answered: " + "; ".join(snapshot.missing))
    verdict = collector.complete_enough(snapshot)
    if fmt == "json":
        sys.stdout.write(dump_snapshot(snapshot, "json"))
        err.print(("complete enough to decide on: " if verdict[0]
                   else "not complete enough to decide on: ") + verdict[1], highlight=False)
    else:
        out = Console(width=max(100, Console().width))
        for renderable in snapshot_table(snapshot, verdict):
            out.print(renderable)


@contextlib.contextmanager
def _quiet(*loggers: str):
    """Only errors from these loggers while the block runs."""
    saved = [(logging.getLogger(n), logging.getLogger(n).level) for n in loggers]
    for logger, _ in saved:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)
