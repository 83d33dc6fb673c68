"""`metctl run` — the daemon: the control loop on the configured cluster.

With no arguments it runs the embedded demo (configs/demo.yaml): MET on a simulated HBase
cluster replaying a shipped scenario, with a live view of nodes, profiles, load and decisions
(log lines instead when there is no terminal, e.g. in CI), and writes the same report as
`metctl simulate` at the end. `--once` runs until the first decision round and exits.

With a live config (infrastructure ec2 | openstack | local, datastore hbase | cassandra) it runs
the daemon on the real cluster, with the configured infrastructure driver, the journaled
executor and real time:
- hbase: Ganglia + RegionServer /jmx + the HBase driver's server list as sources, the HBase
  driver (py4j gateway) with its restart command; under met and met-paper HBase's balancer is
  off while metctl runs and restored (if it was on) when it stops (the other policies leave it);
- cassandra: Ganglia + each node's system_views (CQL) + gossip's server list as sources, the
  Cassandra driver (CQL + NodeTool through datastore.cassandra's commands; docs/cassandra.md).
Each decision and hold is printed as one line.
"""
from __future__ import annotations

import contextlib
import logging
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from controller.assembly import Daemon, assemble
from controller.commands.simulate import check_out_dir
from controller.config import MetctlConfig
from controller.config_files import FILE_OR_NAME, load_given_config
from controller.control_plane import with_control_overrides
from controller.errors import BadInput
from controller.harness import SimRun, build_run
from controller.logs import log_stream
from controller.loop import LoopObserver, cause_name
from controller.production import Production
from controller.render import VERDICT_STYLE
from controller.report import write_report
from controller.snapshot_archive import DEFAULT_KEEP, ArchiveObserver, SnapshotArchive
from controller.state_lock import one_daemon
from simulator.adapters import SimClock
from simulator.cluster import SimCluster

DEMO_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "demo.yaml"
log = logging.getLogger("metctl.run")


class StopAtBoundary:
    """Ctrl-C, SIGTERM and SIGHUP end a simulated run between two steps, never inside one.
    Raised where the signal lands (Python's default), they cut the simulator's recording of a
    step in half (its time appended, its operations not), and the report of what ran then
    failed ("cannot reshape array of size 186 into shape (32,6)", exit 1 instead of 129).
    The handlers only note the signal; `check` raises at a boundary (KeyboardInterrupt for
    Ctrl-C, SystemExit(128 + signal) for the others). A second Ctrl-C raises at once, should a
    step never end."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def note(self, signum: int) -> None:
        self.signum = self.signum or signum

    def interrupt(self, signum: int, frame: Any) -> None:
        if self.signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.note(signum)

    def check(self, now: float | None = None) -> None:
        if self.signum == signal.SIGINT:
            raise KeyboardInterrupt
        if self.signum is not None:
            raise SystemExit(128 + self.signum)


class PacedSimClock(SimClock):
    """Simulated time that also lets real time pass (`speed` simulated seconds per real one),
    so a person can watch the live view. speed 0: as fast as possible. `boundary`: a signal
    noted while it sleeps ends the run between two slices."""

    def __init__(self, cluster: SimCluster, speed: float, boundary: StopAtBoundary | None = None):
        super().__init__(cluster)
        self.speed = speed
        self.boundary = boundary

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
                if self.boundary is not None:
                    self.boundary.check()
        else:
            super().sleep(seconds)


class LiveView(LoopObserver):
    """What an operator watches: nodes with profile, load, partitions and the last decision's
    verdict; the last decision, hold and plan step, and the counts (LoopCounters.line)."""

    def __init__(self) -> None:
        self.run: SimRun | None = None
        self.last_decision = "-"
        self.last_hold = "-"
        self.last_action = "-"
        self.verdicts: dict[str, str] = {}  # host -> the last decision's verdict

    def on_decision(self, now, plan, plan_id, snapshot) -> None:
        self.verdicts = {v.node.split(",")[0]: v.verdict for v in plan.health.nodes}
        self.last_decision = (f"{now / 60:5.1f} min  {plan.sizing.current} -> {plan.sizing.target} "
                              f"nodes, {len(plan.actions)} actions"
                              + (f", plan {plan_id}: {plan.reason or plan.sizing.reason}" if plan_id else ""))

    def on_hold(self, now, cause, words: str) -> None:
        self.last_hold = f"{now / 60:5.1f} min  {cause_name(cause)}: {words}"

    def on_action(self, now, event, plan_id, status) -> None:
        self.last_action = f"{now / 60:5.1f} min  plan {plan_id}: {event}"

    def render(self) -> Group:
        run = self.run
        assert run is not None, "render() after the run is built"
        c = run.cluster
        t = Table(title=f"{run.scenario.name} — simulated {c.t / 60:.1f} / {run.scenario.duration_s / 60:.0f} min "
                        f"— policy {run.config.policy.name}", expand=False)
        numeric = ("cpu", "io_wait", "mem", "regions", "ops/s")
        for col in ("node", "profile", "state", "cpu", "io_wait", "mem", "regions", "ops/s", "verdict"):
            t.add_column(col, justify="right" if col in numeric else "left", no_wrap=True)
        for n in c.node_views():
            verdict = self.verdicts.get(n.host, "-")
            t.add_row(n.host, n.profile, n.state, f"{n.cpu:.0%}", f"{n.io_wait:.0%}", f"{n.memory:.0%}",
                      str(n.regions), f"{n.ops_per_s:,.0f}", Text(verdict, style=VERDICT_STYLE.get(verdict, "")))
        thr = c.throughput()
        lat = c.latency_ms()
        busy = "carrying out a plan" if run.executor.busy else "watching"
        lines = [Text(f"throughput {thr:,.0f} ops/s · latency {lat:.1f} ms · {busy} · "
                      f"{run.loop.counters.line()}", style="bold")]
        for label, value in (("decision", self.last_decision), ("hold", self.last_hold),
                             ("plan", self.last_action)):
            # one line each, cut at the terminal's width: a line that wraps changes the view's
            # height between refreshes
            lines.append(Text(f"{label + ':':9} {value}", no_wrap=True, overflow="ellipsis"))
        return Group(t, *lines)


def _status_line(run: SimRun) -> str:
    c = run.cluster
    return (f"t={c.t / 60:.1f} min nodes={c.billed_vms()} throughput={c.throughput():.0f} ops/s "
            f"plan={'running' if run.executor.busy else 'none'}")


@click.command(name="run")
@click.option("--config", "config_path", metavar="FILE", default=None, type=FILE_OR_NAME,
              help="metctl config YAML, or config:NAME (default: the embedded demo, "
                   "config:demo). It names its cluster and datastore.driver.")
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
    with _sigterm_as_interrupt(), contextlib.ExitStack() as held:
        _command(config_path, once, out_dir, api, observe, snapshots_dir, keep_snapshots,
                 held=held)


def _archive_observers(config: MetctlConfig, observe: bool, directory: str | None,
                       keep: int) -> list[LoopObserver]:
    """The observer that keeps decision snapshots, when asked for or observing."""
    if directory is None and not observe:
        return []
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
def _handling(handler, *signals_: signal.Signals):
    """`handler` for these signals while the block runs (main thread only: elsewhere Python
    cannot set one), the previous handlers back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in signals_}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _sigterm_as_interrupt():
    """SIGTERM (systemd stop, kill, a container runtime) ends the run the way Ctrl-C does:
    the report of what ran is written and the journal left resumable (it was exit 143 and no
    report). SIGHUP too: until Production installs its own handlers (a clean stop, exit 129),
    a hang-up while starting must still run every clean-up (the balancer restored)."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    return _handling(interrupt, signal.SIGTERM, signal.SIGHUP)


def _command(config_path, once, out_dir, api, observe, snapshots_dir, keep_snapshots, *,
             held: contextlib.ExitStack):
    path = config_path or str(DEMO_CONFIG)
    given = load_given_config(config_path, acting=True, default=DEMO_CONFIG)
    config = with_control_overrides(given, api=api, observe=observe)
    live = config.infrastructure.driver != "sim" or config.datastore.driver != "sim"
    # one daemon per state directory, locked until the run ends (held: closed by the caller)
    held.enter_context(one_daemon(config, live=live))
    keepers = _archive_observers(config, observe, snapshots_dir, keep_snapshots)
    if live:
        run_live(config, path, once, keepers)
        return
    console = Console()
    view = LiveView()
    speed = 0.0 if once else config.simulator.run_speed
    boundary = StopAtBoundary()
    production = Production(config)
    production.on_stop_signal = boundary.note
    run = build_run(config, config.simulator.scenario, observers=[view, *keepers],
                    memory_path=config.loop.memory_path, production=production,
                    control=True, clock=lambda cluster: PacedSimClock(cluster, speed, boundary),
                    # a file, so `metctl status` shows the demo's plans (started afresh)
                    journal_path=config.executor.journal_path)
    view.run = run
    out = Path(out_dir or f"out/run-{run.scenario.name}")
    _check_out(out)  # before simulating, not after (it was "[Errno 17] File exists")
    terminated: SystemExit | None = None
    how = "done"
    try:
        with _handling(boundary.interrupt, signal.SIGINT):
            start_daemon(run.daemon, console)  # the console's address is the first thing printed
            if once:
                how = "once"
                run.run(rounds=1, progress=boundary.check)
            elif console.is_terminal:
                with Live(view.render(), console=console, refresh_per_second=4, transient=False) as screen, \
                        log_stream(sys.stderr):  # Live's proxy: log lines print above the view
                    last = [0.0]

                    def refresh(now: float) -> None:
                        boundary.check()
                        if time.perf_counter() - last[0] > 0.2:
                            screen.update(view.render())
                            last[0] = time.perf_counter()
                    run.run(progress=refresh)
                    screen.update(view.render())
            else:
                # No terminal (CI, systemd): the live view degrades to log lines.
                next_line = [0.0]

                def line(now: float) -> None:
                    boundary.check()
                    if now >= next_line[0]:
                        log.info(_status_line(run), extra={"event": "status"})
                        next_line[0] = now + 300.0
                run.run(progress=line)
            boundary.check()  # a signal noted in the run's last step
    except KeyboardInterrupt:
        how = "interrupted"
    except SystemExit as stop:
        # SIGTERM/SIGHUP: noted by the leadership's handler, raised at the next step boundary
        # (StopAtBoundary); the report of what ran is still written, then the exit code stands.
        how, terminated = "terminated", stop
    except BaseException:
        run.daemon.close()
        raise
    with _finishing(console):
        if how in ("interrupted", "terminated"):
            console.print(f"{how}: writing the report of what ran", highlight=False)
        run.daemon.close()
        summary = write_whole_report(run, out, config.policy.name)
    ended = {"done": f"the scenario's {run.scenario.duration_s / 60:g} simulated minutes are over",
             "once": "one decision round done (--once)",
             "interrupted": "stopped by Ctrl-C", "terminated": "stopped by a signal"}[how]
    console.print(f"{ended}: {summary['total_ops']:.0f} operations in {summary['duration_s'] / 60:.1f} "
                  f"simulated minutes, {summary['node_minutes']:.0f} node-minutes; "
                  f"{run.loop.counters.line()}; report in {out}/", highlight=False, soft_wrap=True)
    if terminated is not None:
        raise terminated


@contextlib.contextmanager
def _finishing(console: Console):
    """While the report of a run is written (seconds: the plots): a second Ctrl-C (or SIGTERM)
    lets it finish and says how to abandon it; a third abandons it (KeyboardInterrupt), and
    `write_whole_report` leaves nothing half-written. (A second Ctrl-C used to lose
    summary.json.)"""
    started = time.monotonic()
    presses = [0]

    def again(signum, frame):
        presses[0] += 1
        if presses[0] > 1:
            raise KeyboardInterrupt
        console.print(f"still writing the report ({time.monotonic() - started:.0f} s so far, a few "
                      "more); Ctrl-C once more to abandon it (nothing is left half-written)",
                      highlight=False, soft_wrap=True)

    with _handling(again, signal.SIGINT, signal.SIGTERM):
        yield


def _check_out(out: Path) -> None:
    """`--out` can hold the report (simulate's check), leaving no folder behind that the check
    made: a run refused later (its API address, say) starts nothing and writes nothing."""
    made = next((p for p in (out, *out.parents) if p.parent.exists()), out)
    fresh = not made.exists()
    check_out_dir(out)
    if fresh:
        shutil.rmtree(made, ignore_errors=True)


def write_whole_report(run: SimRun, out: Path, policy: str) -> dict[str, Any]:
    """write_report into a fresh directory beside `out`, then moved into `out`: an interrupted
    write leaves `out` as it was (no summary.json without its plots, no half a CSV)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        summary = write_report(run, tmp, policy)
        out.mkdir(parents=True, exist_ok=True)
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "summary.json"):  # summary last
            f.replace(out / f.name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary


def start_daemon(daemon: Daemon, console: Console) -> None:
    """Start the daemon and say where the console is, before anything else is printed: with a
    fixed port the address is known before the API starts (its own log lines come after); with
    port 0 only once it is bound."""
    if daemon.plane is None:
        daemon.start()
        return
    settings = daemon.plane.settings
    bound = settings.bind() if settings.api_address is not None else None
    early = bound is not None and bound[1] != 0
    if bound is not None and early:
        _announce(console, bound[0], bound[1], settings)
    address = daemon.start()
    if address is None and early:
        console.print("console: not served (the API could not start; see the error above)",
                      highlight=False, markup=False)
    elif address is not None and not early:
        _announce(console, address[0], address[1], settings)


def _announce(console: Console, host: str, port: int, settings: Any) -> None:
    shown = f"[{host}]" if ":" in host else host
    how = ("read only without a token" if settings.console_read_without_token
           else "asks for the token")
    console.print(f"console: http://{shown}:{port}/  ({how}; the token is in "
                  f"{settings.token_file})", highlight=False, markup=False, soft_wrap=True)
    console.file.flush()


class LiveLines(LoopObserver):
    """A live run's decisions and holds, one line each on the console (and in the log)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def on_decision(self, now, plan, plan_id, snapshot) -> None:
        if plan.is_empty:
            return  # the policy's hold: its own line follows (on_hold), said once
        line = (f"decision: {plan.reason or plan.sizing.reason} ({len(plan.actions)} actions"
                f"{', plan ' + plan_id if plan_id else ''})")
        # the loop logs decisions and holds itself; this is the operator's console line
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def on_hold(self, now, cause, words: str) -> None:
        line = f"hold: {cause_name(cause)}: {words}"
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def on_action(self, now, event, plan_id, status) -> None:
        self.console.print(f"plan {plan_id}: {event}", highlight=False, markup=False, soft_wrap=True)


def _daemon_can_run(config: MetctlConfig, path: str) -> None:
    """What only the daemon needs of a live config, beyond its model's checks (controller.config):
    live nodes with a live store (`metctl nodes` works with nodes alone, `metctl snapshot`
    with a store alone) and a journal it can resume from."""
    if config.infrastructure.driver == "sim":
        raise BadInput(path, "infrastructure.driver",
                       "ec2, openstack or local with datastore.driver hbase or cassandra "
                       "(sim needs datastore.driver sim)")
    if config.datastore.driver == "sim":
        raise BadInput(path, "datastore.driver",
                       f"hbase or cassandra with infrastructure.driver {config.infrastructure.driver} "
                       "(the simulated store runs only with the simulated infrastructure)")
    if config.executor.journal_path == ":memory:":
        raise BadInput(path, "executor.journal_path",
                       "a file: a live run must be able to resume its plan after a restart")


def run_live(config: MetctlConfig, path: str, once: bool,
             keepers: list[LoopObserver] | None = None) -> None:
    """The daemon on a real cluster (see the module docstring)."""
    _daemon_can_run(config, path)
    # Imported here: the live backend brings the drivers, which `metctl run` on the simulated
    # demo does not need.
    from controller.live import open_live_backend  # noqa: PLC0415

    console = Console()
    backend = open_live_backend(config, path)
    try:
        daemon = assemble(config, backend, observers=[LiveLines(console), *(keepers or ())],
                          memory_path=config.loop.memory_path, production=Production(config),
                          control=True)
    except BaseException:
        backend.close()  # HBase's balancer back as it was
        raise
    try:
        start_daemon(daemon, console)
        daemon.loop.run(rounds=1 if once else None)
    except KeyboardInterrupt:
        console.print("interrupted: stopping (a plan in flight resumes from the journal "
                      "on the next start)")
    finally:
        daemon.close()
    c = daemon.loop.counters
    console.print(f"{c.line()}, {c.errors} errors; journal {config.executor.journal_path}",
                  highlight=False, soft_wrap=True)
