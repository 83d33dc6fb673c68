"""`metctl run` — the daemon: the control loop on the configured cluster.

With no arguments it runs the embedded demo (configs/demo.yaml): MET on a simulated HBase
cluster replaying a shipped scenario, with a live view of nodes, profiles, load and decisions
(log lines instead when there is no terminal, e.g. in CI), and writes the same report as
`metctl simulate` at the end. `--once` runs until the first decision round and exits.

With a live config (infrastructure ec2 | openstack | local, datastore hbase | cassandra) it runs
the daemon on the real cluster, with the configured infrastructure driver, the journaled
executor and real time:
- hbase: Ganglia + RegionServer /jmx + the HBase driver's server list as sources, the HBase
  driver (py4j gateway) with its restart command; HBase's balancer is off while metctl runs and
  restored (if it was on) when it stops;
- cassandra: Ganglia + each node's system_views (CQL) + gossip's server list as sources, the
  Cassandra driver (CQL + NodeTool through datastore.cassandra's commands; docs/cassandra.md).
Each decision and hold is printed as one line.
"""
from __future__ import annotations

import re

import contextlib
import logging
import signal
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from common.redact import redact
from controller.config import load_config
from controller.errors import BadInput
from controller.loop import HoldCause, LoopObserver
from controller.report import write_report
from controller.snapshot_archive import DEFAULT_KEEP
from simulator.adapters import SimClock

DEMO_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "demo.yaml"
log = logging.getLogger("metctl.run")


class PacedSimClock(SimClock):
    """Simulated time that also lets real time pass (`speed` simulated seconds per real one),
    so a person can watch the live view. speed 0: as fast as possible."""

    def __init__(self, cluster, speed: float):
        super().__init__(cluster)
        self.speed = speed

    def sleep(self, seconds: float) -> None:
        if self.speed > 0 and seconds > 0:
            step = max(1.0, self.speed / 4)  # advance in slices so the view moves smoothly
            left = seconds
            while left > 1e-9:
                d = min(step, left)
                t0 = time.perf_counter()
                super().sleep(d)
                spare = d / self.speed - (time.perf_counter() - t0)
                if spare > 0:
                    time.sleep(spare)
                left -= d
        else:
            super().sleep(seconds)


class LiveView(LoopObserver):
    """What an operator watches: nodes with profile, load and partitions; the last decision."""

    def __init__(self) -> None:
        self.run: Any = None
        self.last_decision = "-"
        self.last_hold = "-"
        self.last_action = "-"

    def on_decision(self, now, plan, plan_id, snapshot) -> None:
        self.last_decision = (f"{now / 60:5.1f} min  {plan.reason or plan.sizing.reason}  "
                              f"({len(plan.actions)} actions{', plan ' + plan_id if plan_id else ''})")

    def on_hold(self, now, cause: HoldCause, words: str) -> None:
        self.last_hold = f"{now / 60:5.1f} min  {cause.value}: {words}"

    def on_action(self, now, event, plan_id, status) -> None:
        self.last_action = f"{now / 60:5.1f} min  plan {plan_id}: {event}"

    def render(self) -> Group:
        run = self.run
        c = run.cluster
        t = Table(title=f"{run.scenario.name} — simulated {c.t / 60:.1f} / {run.scenario.duration_s / 60:.0f} min "
                        f"— policy {run.config.policy.name}", expand=False)
        for col in ("node", "profile", "state", "cpu", "io_wait", "mem", "regions", "ops/s"):
            t.add_column(col, justify="right" if col in ("cpu", "io_wait", "mem", "regions", "ops/s") else "left")
        for n in c.node_views():
            style = "red" if n.cpu >= run.config.policy.cpu_high or n.io_wait >= run.config.policy.io_wait_high else ""
            t.add_row(n.host, n.profile, n.state, f"{n.cpu:.0%}", f"{n.io_wait:.0%}", f"{n.memory:.0%}",
                      str(n.regions), f"{n.ops_per_s:,.0f}", style=style)
        thr = c.throughput()
        lat = c.latency_ms()
        busy = "carrying out a plan" if run.executor.busy else "watching"
        lines = Text.assemble(
            (f"throughput {thr:,.0f} ops/s · latency {lat:.1f} ms · {busy}\n", "bold"),
            f"decision: {self.last_decision}\nhold:     {self.last_hold}\nplan:     {self.last_action}")
        return Group(t, lines)


def _status_line(run) -> str:
    c = run.cluster
    return (f"t={c.t / 60:.1f} min nodes={c.billed_vms()} throughput={c.throughput():.0f} ops/s "
            f"plan={'running' if run.executor.busy else 'none'}")


@click.command(name="run")
@click.option("--config", "config_path", metavar="FILE", default=None,
              help="metctl config YAML (default: the embedded demo, configs/demo.yaml).")
@click.option("--once", is_flag=True, help="Run until the first decision round, report, exit.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Where the end-of-run report goes (default: out/run-<scenario>; simulated "
                   "runs only: a live run keeps its journal and last decision beside "
                   "executor.journal_path).")
@click.option("--api", "api", default=None, metavar="HOST:PORT",
              help="Serve the HTTP API here (default: control.api_address; 'off': none).")
@click.option("--observe", is_flag=True,
              help="Observe only: decide and explain, never act (control.mode: observe). Keeps "
                   "every decision's snapshot (see --snapshots).")
@click.option("--snapshots", "snapshots_dir", type=click.Path(file_okay=False), default=None,
              help="Keep every decision's snapshot in this directory (default with --observe: "
                   "snapshots/ beside executor.journal_path); `metctl scenario from-snapshots` "
                   "replays them.")
@click.option("--keep-snapshots", type=click.IntRange(min=1), default=DEFAULT_KEEP, show_default=True,
              help="At most this many snapshots are kept; the oldest go first.")
def command(config_path, once, out_dir, api, observe, snapshots_dir, keep_snapshots):
    """Run the control loop (default: MET on the simulated demo cluster)."""
    with _sigterm_as_interrupt():
        _command(config_path, once, out_dir, api, observe, snapshots_dir, keep_snapshots)


def _archive_observers(config: Any, observe: bool, directory: str | None, keep: int) -> list[Any]:
    """The observer that keeps decision snapshots, when asked for or observing."""
    if directory is None and not observe:
        return []
    from controller.snapshot_archive import ArchiveObserver, SnapshotArchive

    if directory is None:
        journal = str(config.executor.journal_path)
        base = Path(journal).parent if journal != ":memory:" and not journal.startswith("file:") else Path(".")
        directory = str(base / "snapshots")
    try:
        return [ArchiveObserver(SnapshotArchive(directory, keep))]
    except OSError as err:
        raise BadInput(directory, "--snapshots", f"a directory metctl can create and write "
                       f"({err.strerror or type(err).__name__})") from None


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM (systemd stop, kill, a container runtime) ends the run the way Ctrl-C does:
    the report of what ran is written and the journal left resumable (it was exit 143 and no
    report)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _command(config_path, once, out_dir, api, observe, snapshots_dir=None, keep_snapshots=DEFAULT_KEEP):
    from controller.control_plane import with_control_overrides

    path = config_path or str(DEMO_CONFIG)
    config = with_control_overrides(load_config(path), api=api, observe=observe)
    keepers = _archive_observers(config, observe, snapshots_dir, keep_snapshots)
    if config.infrastructure.driver != "sim" or config.datastore.driver != "sim":
        run_live(config, path, once, keepers)
        return
    from controller.production import Production
    from controller.harness import build_run

    prod = Production(config)
    console = Console()
    view = LiveView()
    speed = 0.0 if once else config.simulator.run_speed
    run = build_run(config, config.simulator.scenario, observers=[view, *prod.observers, *keepers],
                    memory_path=config.loop.memory_path, wrap_sources=prod.watch,
                    wrap_executor=prod.fence, wrap_drivers=prod.fence_drivers, may_act=prod.may_act,
                    clock=lambda cluster: PacedSimClock(cluster, speed))
    view.run = run
    out = Path(out_dir or f"out/run-{run.scenario.name}")
    plane = _control_plane(config, prod, run.loop, run.cluster, run.scenario.slo_latency_ms)
    terminated: SystemExit | None = None
    try:
        start_plane(plane, console)  # the console's address is the first thing printed
        prod.start()
        if once:
            run.run(rounds=1)
        elif console.is_terminal:
            with Live(view.render(), console=console, refresh_per_second=4, transient=False) as live:
                last = [0.0]

                def refresh(now: float) -> None:
                    if time.perf_counter() - last[0] > 0.2:
                        live.update(view.render())
                        last[0] = time.perf_counter()
                run.run(progress=refresh)
                live.update(view.render())
        else:
            # No terminal (CI, systemd): the live view degrades to log lines.
            next_line = [0.0]

            def line(now: float) -> None:
                if now >= next_line[0]:
                    log.info(_status_line(run), extra={"event": "status"})
                    next_line[0] = now + 300.0
            run.run(progress=line)
    except KeyboardInterrupt:
        console.print("interrupted: writing the report of what ran")
    except SystemExit as stop:
        # SIGTERM: the leadership's handler leaves with SystemExit(143) once no action is in
        # flight; the report of what ran is still written, then the exit code stands.
        console.print("terminated: writing the report of what ran")
        terminated = stop
    finally:
        plane.close()
        prod.close()
    summary = write_report(run, out, config.policy.name)
    console.print(f"{summary['total_ops']:.0f} operations in {summary['duration_s'] / 60:.1f} simulated minutes, "
                  f"{summary['node_minutes']:.0f} node-minutes, {summary['decisions']} decisions, "
                  f"{sum(summary['holds'].values())} holds; report in {out}/")
    if terminated is not None:
        raise terminated


def _control_plane(config: Any, prod: Any, loop: Any, cluster: Any = None,
                   slo_ms: float | None = None) -> Any:
    """Pause, pin, protection, windows, observe mode, events, webhooks, the HTTP API and the
    console (docs/control.md, docs/console.md). `cluster`: the simulated one, whose workloads
    are the console's tenants."""
    from controller.console.view import sim_tenants
    from controller.control_plane import ControlPlane

    plane = ControlPlane(config, leadership=prod.leadership, telemetry=prod.telemetry)
    plane.attach(loop, step_listeners=prod.step_listeners,
                 tenants=sim_tenants(cluster) if cluster is not None else None, slo_ms=slo_ms)
    return plane


def start_plane(plane: Any, console: Console) -> None:
    """Start the API and say where the console is, before anything else is printed."""
    address = plane.start()
    if address is None:
        return
    host, port = address
    shown = f"[{host}]" if ":" in host else host
    how = ("read only without a token" if plane.settings.console_read_without_token
           else "asks for the token")
    console.print(f"console: http://{shown}:{port}/  ({how}; the token is in "
                  f"{plane.settings.token_file})", highlight=False, markup=False, soft_wrap=True)


class LiveLines(LoopObserver):
    """A live run's decisions and holds, one line each on the console (and in the log)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def on_decision(self, now, plan, plan_id, snapshot) -> None:
        line = (f"decision: {plan.reason or plan.sizing.reason} ({len(plan.actions)} actions"
                f"{', plan ' + plan_id if plan_id else ''})")
        # the loop logs decisions and holds itself; this is the operator's console line
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def on_hold(self, now, cause: HoldCause, words: str) -> None:
        line = f"hold: {cause.value}: {words}"
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def on_action(self, now, event, plan_id, status) -> None:
        self.console.print(f"plan {plan_id}: {event}", highlight=False, markup=False, soft_wrap=True)


def check_live_config(config: Any, path: str) -> None:
    """Refuse, before anything starts, a live config metctl cannot run (BadInput: exit 2)."""
    if config.infrastructure.driver == "sim":
        raise BadInput(path, "infrastructure.driver",
                       "ec2, openstack or local with datastore.driver hbase or cassandra "
                       "(sim needs datastore.driver sim)")
    if config.datastore.driver == "cassandra":
        _check_cassandra(config, path)
    elif config.datastore.driver == "hbase":
        _check_hbase(config, path)
    else:
        raise BadInput(path, "datastore.driver",
                       f"hbase or cassandra with infrastructure.driver {config.infrastructure.driver} "
                       "(the simulated store runs only with the simulated infrastructure)")
    if config.executor.journal_path == ":memory:":
        raise BadInput(path, "executor.journal_path",
                       "a file: a live run must be able to resume its plan after a restart")


def _check_hbase(config: Any, path: str) -> None:
    from actuator.drivers import DriverError
    from actuator.hbase import client_settings_from

    if not config.datastore.hbase.zookeeper_quorum.strip():
        raise BadInput(path, "datastore.hbase.zookeeper_quorum",
                       "the HBase cluster's ZooKeeper quorum, host:port[,host:port…]")
    try:
        client_settings_from(config.datastore.hbase.zookeeper_quorum, config.datastore.hbase.znode_parent)
    except DriverError as err:
        raise BadInput(path, "datastore.hbase.zookeeper_quorum",
                       f"host:port[,host:port…] sharing one port ({err})") from err
    if not config.monitor.hbase_jmx_urls:
        raise BadInput(path, "monitor.hbase_jmx_urls",
                       "at least one RegionServer /jmx URL (per-region counters come from there)")


def _check_cassandra(config: Any, path: str) -> None:
    if not config.datastore.cassandra.contact_points:
        raise BadInput(path, "datastore.cassandra.contact_points",
                       "at least one node address the CQL client can connect to")
    # HBase-only sources next to a Cassandra store are a config mix-up, not something to ignore
    if config.monitor.hbase_jmx_urls:
        raise BadInput(path, "monitor.hbase_jmx_urls",
                       "empty with datastore.driver cassandra (its per-table counters come from "
                       "system_views over CQL)")
    if config.monitor.hbase_jvm_system_metrics:
        raise BadInput(path, "monitor.hbase_jvm_system_metrics",
                       "false with datastore.driver cassandra (node metrics come from Ganglia)")


def _unreachable(path: str, quorum: str, err: BaseException) -> BadInput:
    """A config that cannot reach its cluster: one plain line naming the setting, exit 2
    (README), never the Java exception text."""
    text = str(err)
    if "Exception:" in text:  # py4j: "An error occurred while calling o2.x. : org...Exception: why"
        text = text.split("Exception:", 1)[1]
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(err).__name__)
    first = re.split(r"\s+at (?:org|java|jdk|sun|com)\.", first)[0]  # no Java stack frames
    return BadInput(path, "datastore.hbase.zookeeper_quorum",
                    f"a reachable HBase cluster at {quorum} ({redact(first)[:200]})")


def cassandra_unreachable(path: str, settings: Any, err: BaseException) -> BadInput:
    """The Cassandra form of `_unreachable`: the contact points named, the client's first line."""
    first = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
    return BadInput(path, "datastore.cassandra.contact_points",
                    f"reachable Cassandra nodes at {', '.join(settings.contact_points)} port "
                    f"{settings.native_port} ({redact(first)[:200]})")


def open_cassandra(config: Any, path: str, state_dir: Path) -> Any:
    """The Cassandra driver of a live config; an unreachable cluster is BadInput (exit 2)."""
    from actuator.drivers import DriverError
    from actuator.factory import make_cassandra_driver

    try:
        return make_cassandra_driver(config.datastore.cassandra, state_dir,
                                     restart_timeout_s=config.executor.restart_timeout_s)
    except DriverError as err:
        raise cassandra_unreachable(path, config.datastore.cassandra, err) from None


def _open_hbase(config: Any, path: str, infra: Any, journal_path: Path) -> tuple[Any, list[Any], Any]:
    """The HBase driver (py4j gateway), its sources and how to close it; the balancer is off
    from here until close (restored if metctl found it on)."""
    from actuator.hbase import CommandRestarter, open_hbase_driver
    from monitor.live import live_sources

    hb = config.datastore.hbase
    restarter = (CommandRestarter(list(hb.restart_command), timeout_s=config.executor.restart_timeout_s)
                 if hb.restart_command else None)
    if config.infrastructure.driver == "local":
        from actuator.local import LocalRestarter

        # RegionServers metctl launched restart through the local driver (it records their new
        # PID); the others through the restart command
        restarter = LocalRestarter(infra, fallback=restarter, host_format=hb.host_format)
    # The gateway opens here: an unreachable cluster is an error (exit 1), not bad input.
    try:
        driver = open_hbase_driver(hb, restarter=restarter, host_format=hb.host_format,
                                   log_file=str(journal_path.with_name("hbase-gateway.log")))
    except Exception as err:  # noqa: BLE001 — Java exception text is not for the operator
        raise _unreachable(path, hb.zookeeper_quorum, err) from None
    # metctl places regions itself: HBase's balancer would undo its moves (restored on
    # exit). The first call that reaches the cluster: the gateway connects lazily.
    try:
        driver.set_balancer(False)
    except Exception as err:  # noqa: BLE001
        driver.close()
        raise _unreachable(path, hb.zookeeper_quorum, err) from None
    # close: HBase's balancer back on if metctl found it on; gateway stopped
    return driver, live_sources(config.monitor, admin=driver), driver.close


def _open_cassandra(config: Any, path: str, journal_path: Path) -> tuple[Any, list[Any], Any]:
    """The Cassandra driver, its sources (Ganglia if configured, each node's system_views, the
    gossip server list) and how to close it (without waiting for a NodeTool run in flight: a
    decommission goes on inside Cassandra and the next start watches it from the journal)."""
    from monitor.live import cassandra_sources

    cs = config.datastore.cassandra
    driver = open_cassandra(config, path, journal_path.parent)
    sources = cassandra_sources(config.monitor, driver.session, driver, keyspaces=cs.keyspaces,
                                timeout_s=cs.query_timeout_s)
    return driver, sources, lambda: driver.close(wait=False)


def run_live(config: Any, path: str, once: bool, keepers: list[Any] = ()) -> None:
    """The daemon on a real cluster (see the module docstring)."""
    check_live_config(config, path)
    from actuator.executor import Executor
    from actuator.factory import make_infrastructure
    from actuator.journal import Journal
    from controller.clock import RealClock
    from controller.loop import ControlLoop, MemoryStore
    from controller.production import Production
    from monitor.collector import Collector

    console = Console()
    infra = make_infrastructure(config.infrastructure, config.cluster)
    journal_path = Path(config.executor.journal_path)
    if not str(journal_path).startswith("file:"):
        journal_path.parent.mkdir(parents=True, exist_ok=True)
    prod = Production(config)
    if config.datastore.driver == "cassandra":
        driver, sources, close = _open_cassandra(config, path, journal_path)
    else:
        driver, sources, close = _open_hbase(config, path, infra, journal_path)
    try:
        clock = RealClock()
        collector = Collector(prod.watch(sources), config.monitor)
        # the executor's cluster-changing driver calls ask the leadership fence first
        executor = Executor(*prod.fence_drivers(infra, driver), config.executor, clock.now, config.cluster,
                            Journal(config.executor.journal_path))
        loop = ControlLoop(collector, prod.fence(executor), config.policy, config.loop, clock,
                           memory=MemoryStore(config.loop.memory_path),
                           observers=[LiveLines(console), *prod.observers, *keepers], may_act=prod.may_act)
        plane = _control_plane(config, prod, loop)
        try:
            start_plane(plane, console)
            prod.start()
            loop.run(rounds=1 if once else None)
        except KeyboardInterrupt:
            console.print("interrupted: stopping (a plan in flight resumes from the journal "
                          "on the next start)")
        finally:
            plane.close()
            prod.close()
        c = loop.counters
        console.print(f"{c.decisions} decisions, {c.holds} holds, {c.errors} errors; journal "
                      f"{config.executor.journal_path}", highlight=False)
    finally:
        close()
