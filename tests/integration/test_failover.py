"""Failover against a real ZooKeeper: two and three controller processes, one journaled plan.

Each case checks the invariant (every action applied exactly once, journaled done exactly once,
no two controllers acting in overlapping time) on the shared record the processes write.
"""
from __future__ import annotations

import signal
import time

import pytest

from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration

SESSION_S = 2.0
LEASE_S = SESSION_S * 0.5  # HASettings.lease_fraction's default


def mid_plan(group, done: int = 2) -> str:
    poll(lambda: group.done_count() >= done, 30, f"{done} actions done")
    return poll(group.leader, 10, "a single leader")


def test_one_leader_among_three_and_plan_completes(controller_group):
    group = controller_group(3, actions=6, action_s=0.1)
    group.wait_done(60)
    report = group.invariant()
    report.check()
    assert report.leaders == [group.leader()]  # nobody else acted while the leader lived


def test_two_controllers_leader_sigkilled_mid_plan(controller_group):
    group = controller_group(2, session_timeout_s=SESSION_S)
    first = mid_plan(group)
    killed_at = group.signal(first, signal.SIGKILL)
    group.wait_done(60)
    successor = group.leader()
    assert successor not in (None, first)
    took_over = group.became_leader_after(killed_at, other_than=first)
    # a SIGKILLed leader's session must expire first: the successor cannot lead earlier
    assert took_over - killed_at > SESSION_S * 0.5
    group.invariant().check()


def test_three_controllers_leader_sigtermed_mid_plan(controller_group):
    group = controller_group(3, session_timeout_s=SESSION_S)
    first = mid_plan(group)
    termed_at = group.signal(first, signal.SIGTERM)
    poll(lambda: not group.alive(first), 15, "the SIGTERMed leader to exit")
    group.wait_done(60)
    took_over = group.became_leader_after(termed_at, other_than=first)
    # handed over: the successor leads without waiting for the session to expire
    assert took_over - termed_at < SESSION_S
    report = group.invariant()
    report.check()
    assert first in report.leaders and len(report.leaders) == 2


def test_three_controllers_two_successive_failures(controller_group):
    group = controller_group(3, actions=14, session_timeout_s=SESSION_S)
    first = mid_plan(group, done=2)
    group.signal(first, signal.SIGKILL)
    second = poll(lambda: (l := group.leader()) not in (None, first) and l, 20, "a new leader")
    poll(lambda: group.done_count() >= 6, 30, "the second leader to act")
    group.signal(second, signal.SIGTERM)
    group.wait_done(60)
    report = group.invariant()
    report.check()
    assert len(report.leaders) == 3


def test_zookeeper_stopped_and_restarted(controller_group, zookeeper):
    group = controller_group(2, actions=14, session_timeout_s=SESSION_S)
    mid_plan(group, done=3)
    stopped_at = time.time()
    zookeeper.stop()
    time.sleep(SESSION_S * 1.5)  # down for longer than a session
    restarted_at = time.time()
    zookeeper.start()
    group.wait_done(90)
    # everyone stopped acting: no action started while ZooKeeper was down (past the lease)
    started_while_down = [(by, s) for by, s, _ in group.intervals()
                          if stopped_at + LEASE_S < s < restarted_at]
    assert started_while_down == []
    # then one resumed
    assert group.first_action_after(restarted_at, other_than="") is not None
    group.invariant().check()


def test_partitioned_leader_sigstopped_does_not_act_after_sigcont(controller_group):
    group = controller_group(2, actions=12, session_timeout_s=SESSION_S, pause_after=3)
    paused = poll(lambda: next((i for i in group.procs if group.alive(i) and group.stopped(i)),
                               None), 30, "the leader to freeze")
    frozen_at = max(w for k, w in group.events(paused) if k == "pausing")
    # the other controller takes over once the frozen leader's session has expired …
    successor_acted = poll(lambda: group.first_action_after(frozen_at, other_than=paused),
                           30, "the other controller to act")
    assert successor_acted - frozen_at > SESSION_S * 0.5
    resumed_at = group.signal(paused, signal.SIGCONT)
    # … and the frozen one, woken up, knows it no longer leads
    poll(lambda: any(k == "follower" and w > resumed_at for k, w in group.events(paused)),
         20, "the resumed controller to report that it follows")
    group.wait_done(60)
    acted_after_freeze = [(by, s) for by, s, _ in group.intervals()
                          if by == paused and s > frozen_at]
    assert acted_after_freeze == []
    group.invariant().check()


# ---- the real daemon: `metctl run` processes on the simulated cluster -------------------------
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import requests  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from controller.control_plane import CONTROL_METRICS  # noqa: E402
from controller.telemetry import METRIC_NAMES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Daemon:
    def __init__(self, workdir: Path, identity: str, zk_hosts: str, root: str):
        self.identity = identity
        self.config = workdir / f"{identity}.yaml"
        self.config.write_text(
            # MET's marks with no latency objective (size_from_demand false, slo.latency_ms off):
            # under met-elasticity's 50 ms and within its nodes' capacity the default met holds;
            # failover needs plans
            "cluster: hatest\npolicy: {preset: met, slo: {latency_ms: 'off'}, "
            "advanced: {size_from_demand: false}}\nloop: {memory_path: null}\n"
            "infrastructure: {driver: sim}\ndatastore: {driver: sim}\n"
            # 30x: the 60-minute scenario lasts 2 minutes of wall, well past every wait below
            # even on a loaded machine (at 60x a daemon could reach the scenario's end and exit
            # while the test still waited for it to lead)
            "simulator: {scenario: met-elasticity.yaml, data_transfer: none, run_speed: 30}\n"
            f"ha: {{zookeeper_hosts: '{zk_hosts}', root_znode: {root}, session_timeout_s: 2, "
            f"identity: {identity}}}\n"
            "telemetry: {prometheus_address: '127.0.0.1:0'}\n"
            # each its own API port and token (a port in use is refused at start)
            f"control: {{api_address: '127.0.0.1:0', token_file: '{workdir}/{identity}-token'}}\n")
        self.log = workdir / f"{identity}.log"
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "controller.cli", "run", "--config", str(self.config),
                 "--out", str(workdir / f"out-{identity}")],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)

    def lines(self) -> list[dict]:
        out = []
        for line in self.log.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        return out

    def events(self, event: str) -> list[dict]:
        return [x for x in self.lines() if x.get("event") == event]

    def running_events(self, event: str, after: float = 0.0) -> list[dict]:
        """`events(event)` logged after wall time `after`; but a daemon that has exited fails
        the wait at once, naming its exit code and its last HA lines (a wait that only timed
        out said nothing of why)."""
        found = [x for x in self.events(event) if self.wall(x) > after]
        if not found and self.proc.poll() is not None:
            story = [f"{x['ts']} {x.get('event')} {x.get('msg', '')}" for x in self.lines()
                     if str(x.get("event", "")).startswith("ha.")][-8:]
            raise AssertionError(f"{self.identity} exited ({self.proc.returncode}) before "
                                 f"{event!r}; its last HA lines: {story}")
        return found

    def wall(self, line: dict) -> float:
        from datetime import datetime

        return datetime.fromisoformat(line["ts"].replace("Z", "+00:00")).timestamp()

    def endpoint(self) -> str | None:
        for x in self.events("telemetry.serving"):
            return re.search(r"http://\S+/metrics", x["msg"]).group(0)
        return None

    def leader_gauge(self) -> float:
        text = requests.get(self.endpoint(), timeout=5).text
        for fam in text_string_to_metric_families(text):
            if fam.name == "metctl_leader":
                return fam.samples[0].value
        raise AssertionError("no metctl_leader")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def test_metctl_run_instances_one_acts_sigkill_then_sigterm(zookeeper, tmp_path):
    root = f"/metctl-run-{os.getpid()}"
    daemons = [Daemon(tmp_path, f"r{i}", zookeeper.hosts, root) for i in range(2)]
    try:
        first = poll(lambda: next((d for d in daemons if d.events("ha.leader")), None), 30,
                     "a daemon to lead")
        other = next(d for d in daemons if d is not first)
        poll(lambda: all(d.endpoint() for d in daemons), 10, "both endpoints")
        # scraped over HTTP: the documented names, and leadership as each instance sees it
        text = requests.get(first.endpoint(), timeout=5).text
        names = {f.name + ("_total" if f.type == "counter" else "")
                 for f in text_string_to_metric_families(text) if f.name.startswith("metctl_")}
        assert names == set(METRIC_NAMES) | {n for n, _ in CONTROL_METRICS}
        assert first.leader_gauge() == 1 and other.leader_gauge() == 0
        poll(lambda: first.events("action"), 60, "the leader to act")
        poll(lambda: [h for h in other.events("hold") if h["reason"] == "not_leader"], 60,
             "the follower to hold because it does not lead")
        assert not other.events("action")
        killed_at = time.time()
        os.kill(first.proc.pid, signal.SIGKILL)
        took = poll(lambda: other.running_events("ha.leader"), 30, "the other to lead")[0]
        assert other.wall(took) - killed_at > SESSION_S * 0.5  # only after the session expired
        poll(lambda: other.running_events("action"), 60, "the new leader to act")
        # no action by the second before it led, none by the first after it died
        assert min(other.wall(a) for a in other.events("action")) > other.wall(took)
        assert max(first.wall(a) for a in first.events("action")) < killed_at
        assert other.leader_gauge() == 1
        os.kill(other.proc.pid, signal.SIGTERM)
        assert other.proc.wait(timeout=30) == 128 + signal.SIGTERM
        assert other.events("ha.released")
    finally:
        for d in daemons:
            d.stop()


def test_metctl_run_leader_sigstopped_past_its_session_does_not_act_after_sigcont(
        zookeeper, tmp_path):
    root = f"/metctl-stop-{os.getpid()}"
    daemons = [Daemon(tmp_path, f"s{i}", zookeeper.hosts, root) for i in range(2)]
    try:
        first = poll(lambda: next((d for d in daemons if d.events("ha.leader")), None), 30,
                     "a daemon to lead")
        other = next(d for d in daemons if d is not first)
        poll(lambda: first.events("action"), 60, "the leader to act")
        os.kill(first.proc.pid, signal.SIGSTOP)  # frozen wherever it was, maybe mid-tick
        stopped_at = time.time()
        took = poll(lambda: other.running_events("ha.leader"), 30, "the other to lead")[0]
        assert other.wall(took) - stopped_at > SESSION_S * 0.5
        time.sleep(1.0)
        resumed_at = time.time()
        os.kill(first.proc.pid, signal.SIGCONT)
        poll(lambda: first.running_events("ha.follower", after=stopped_at), 20,
             "the woken leader to report that it no longer leads")
        poll(lambda: other.running_events("action", after=resumed_at), 60,
             "the new leader to keep acting")
        late = [a for a in first.events("action") if first.wall(a) >= resumed_at]
        assert late == []
        assert first.leader_gauge() == 0 and other.leader_gauge() == 1
    finally:
        for d in daemons:
            os.kill(d.proc.pid, signal.SIGCONT) if d.proc.poll() is None else None
            d.stop()
