"""What `metctl run` needs to run as a service, in one place: structured logs, the Prometheus
endpoint, leader election with fencing, SIGTERM hand-over.

    prod = Production(config)
    prod.start()                                   # logs, endpoint, election, SIGTERM handler
    executor = Executor(*prod.fence_drivers(infra, datastore), …)   # driver calls ask the fence
    loop = ControlLoop(Collector(prod.watch(sources), …), prod.fence(executor), …,
                       observers=[*prod.observers], may_act=prod.may_act)
    try:
        loop.run()
    finally:
        prod.close()                               # release leadership, stop the endpoint
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, IO, TYPE_CHECKING

from common.files import write_atomic
from controller.ha import FencedDriver, FencedExecutor, Leadership, fence_drivers, install_sigterm, read_leader
from controller.logs import setup_logging
from controller.telemetry import (NullTelemetry, StepWatcher, Telemetry, TelemetryObserver,
                                  WatchedSource)
from decision.model import Plan
from decision.model import ClusterSnapshot

if TYPE_CHECKING:  # the config imports the sections this module serves
    from controller.config import MetctlConfig

log = logging.getLogger("metctl.run")


class Production:
    def __init__(self, config: MetctlConfig, *, stream: IO[str] | None = None):
        self.config = config
        self.logger = setup_logging(config.telemetry, stream)
        self.leadership = Leadership(config.ha, config.cluster)
        self.telemetry: Any = (
            Telemetry.create(config.telemetry, identity=self.leadership.identity)
            if config.telemetry.prometheus_enabled else NullTelemetry())
        self.leadership.add_listener(self.telemetry.set_leader)
        # the record goes beside the journal the executor really uses (see fence())
        self.recorder = DecisionRecorder(None, self.leadership)
        self.observers: Sequence[Any] = (TelemetryObserver(self.telemetry), self.recorder)
        # (plan_id, steps, just finished) after each executor tick: the control plane's live
        # status and events listen here (controller.control_plane.ControlPlane.attach)
        self.step_listeners: list[Any] = []
        # SIGTERM/SIGHUP: None leaves the process (SystemExit) once no action is in flight; a
        # loop that must stop at a boundary of its own (the simulator's step) sets a callable
        self.on_stop_signal: Callable[[int], None] | None = None

    def start(self, *, handle_sigterm: bool = True) -> None:
        """Serve the endpoint, then join the election (alone: lead at once, and say so)."""
        if isinstance(self.telemetry, Telemetry):
            self.telemetry.serve()
        if handle_sigterm:
            install_sigterm(self.leadership, then=self.on_stop_signal)
        self.leadership.start()
        if not self.leadership.alone:
            log.info("following until elected", extra={"event": "ha.follower",
                                                       "identity": self.leadership.identity})

    def may_act(self) -> bool:
        return self.leadership.may_act()

    def fence_drivers(self, infra: Any, datastore: Any) -> tuple[FencedDriver, FencedDriver]:
        """The drivers to build the executor with: their cluster-changing calls ask the fence."""
        return fence_drivers(infra, datastore, self.leadership)

    def fence(self, executor: Any) -> FencedExecutor:
        """The executor behind the leadership fence, its finished steps counted and logged."""
        journal = getattr(executor, "journal", None)
        journal_path = str(getattr(journal, "path", ":memory:"))
        if journal_path != ":memory:" and not journal_path.startswith("file:"):
            self.recorder.path = Path(journal_path).with_name("last-decision.json")
        watcher = (StepWatcher(journal, self.telemetry, listeners=self.step_listeners)
                   if journal is not None else None)
        return FencedExecutor(executor, self.leadership, after_tick=watcher)

    def watch(self, sources: Iterable[Any]) -> list[Any]:
        """Metric sources whose errors and staleness are exported."""
        return [WatchedSource(s, self.telemetry) for s in sources]

    def close(self) -> None:
        self.leadership.close()
        self.telemetry.close()


def decision_record_path(config: MetctlConfig) -> Path | None:
    """Where the leader keeps its last decision for `metctl status`: beside the journal."""
    journal = str(config.executor.journal_path)
    if journal == ":memory:" or journal.startswith("file:"):
        return None
    return Path(journal).with_name("last-decision.json")


class DecisionRecorder:
    """A loop observer: the leader's last decision (reason, sizing, verdicts with their
    reasons) or hold (cause and words), kept in a small JSON file `metctl status` reads.
    Followers do not write it: they hold because they do not lead, and say so in their logs."""

    def __init__(self, path: Path | None, leadership: Leadership,
                 wall_clock: Any = time.time):
        self.path, self.leadership, self._wall = path, leadership, wall_clock
        self.last: dict[str, Any] | None = None
        self._decided_at: float | None = None  # loop time of the decision `last` describes

    def on_sample(self, now: float, samples_since_clear: int) -> None:
        pass

    def on_action(self, now: float, event: str, plan_id: str | None, status: Any) -> None:
        pass

    def on_error(self, now: float, error: BaseException) -> None:
        pass

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:
        if not self.leadership.is_leader():
            return
        self.last = {
            "at_unix_s": self._wall(), "identity": self.leadership.identity,
            "plan_id": plan_id, "policy": plan.policy, "reason": plan.reason,
            "sizing": {"current": plan.sizing.current, "target": plan.sizing.target,
                       "reason": plan.sizing.reason},
            "health": plan.health.reason,
            "verdicts": [{"node": n.node, "verdict": n.verdict, "reasons": list(n.reasons)}
                         for n in plan.health.nodes],
            "actions": len(plan.actions), "hold": None,
        }
        self._decided_at = now
        self._write()

    def on_hold(self, now: float, cause: Any, words: str) -> None:
        cause = getattr(cause, "value", str(cause))
        if cause == "not_leader" or not self.leadership.is_leader():
            return
        if self.last is None or now != self._decided_at:  # a hold of its own (e.g. stale_metrics)
            self.last = {"at_unix_s": self._wall(), "identity": self.leadership.identity,
                         "plan_id": None, "reason": "", "hold": None}
        self.last["hold"] = {"cause": cause, "words": words}
        self._write()

    def _write(self) -> None:
        if self.path is None or self.last is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # atomic: status never reads half a file
            write_atomic(self.path, json.dumps(self.last, sort_keys=True, default=str))
        except OSError as err:
            log.warning("cannot write %s: %s", self.path, err,
                        extra={"event": "status.write_error"})


def status_of(config: MetctlConfig, *, journal_path: str | None = None,
              zookeeper_timeout_s: float = 5.0) -> dict[str, Any]:
    """For `metctl status`: who leads (asked from ZooKeeper, or 'alone') and the leader's last
    decision with its reasons (kept beside `journal_path`, default the config's). Never
    raises: what cannot be read is said in words."""
    doc: dict[str, Any] = {"leader": None, "ha": "alone", "last_decision": None}
    if config.ha.enabled:
        doc["ha"] = f"{config.ha.zookeeper_hosts}{config.ha.election_path(config.cluster)}"
        try:
            doc["leader"] = read_leader(config.ha, config.cluster, zookeeper_timeout_s) \
                or "(nobody leads)"
        except Exception as err:  # noqa: BLE001 — status must show what it can
            doc["leader"] = f"(ZooKeeper unreachable: {type(err).__name__})"
    path = (decision_record_path(config) if journal_path is None
            else Path(journal_path).with_name("last-decision.json"))
    if path is not None and path.exists():
        try:
            doc["last_decision"] = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            doc["last_decision"] = {"error": f"unreadable {path}: {err}"}
    return doc


def status_lines(doc: dict[str, Any]) -> list[str]:
    """The leader and last-decision lines `metctl status` prints above the plan."""
    lines = [f"leader: {doc['leader']} ({doc['ha']})" if doc["ha"] != "alone"
             else "leader: this host's metctl runs alone (no ZooKeeper configured)"]
    last = doc.get("last_decision")
    if not last:
        lines.append("last decision: none recorded yet")
        return lines
    if "error" in last:
        lines.append(f"last decision: {last['error']}")
        return lines
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(last["at_unix_s"]))
    by = f" by {last['identity']}" if last.get("identity") else ""
    if last.get("reason") or last.get("plan_id"):
        sizing = last.get("sizing") or {}
        lines.append(f"last decision{by} at {when}: {last.get('reason') or 'no change'}"
                     + (f" ({sizing.get('current')} -> {sizing.get('target')} nodes, "
                        f"{last.get('actions', 0)} actions"
                        + (f", plan {last['plan_id']})" if last.get("plan_id") else ")")
                        if sizing else ""))
        for v in last.get("verdicts", []):
            if v["verdict"] != "healthy":
                lines.append(f"  {v['node']}: {v['verdict']}"
                             + (f" ({'; '.join(v['reasons'])})" if v["reasons"] else ""))
    if last.get("hold"):
        lines.append(f"held{by} at {when}: {last['hold']['cause']}: {last['hold']['words']}")
    return lines
