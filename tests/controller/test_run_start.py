"""`metctl run` starting and stopping: it refuses to start rather than run half (an API it cannot
serve, a state directory another daemon holds), and every way it is told to stop ends cleanly
with a line saying so. Real processes, real sockets, real signals."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest
import yaml

from controller.cli import main
from tests.fixtures.controllers import poll
from tests.fixtures.daemons import ROOT, MetctlDaemon

pytestmark = pytest.mark.integration


def one_error_line(err: str) -> str:
    """The one `metctl:` error line among the daemon's JSON log lines (and a moved config
    key's warnings) on stderr."""
    lines = [ln for ln in err.splitlines()
             if ln.startswith("metctl:") and not ln.startswith("metctl: warning:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("address", ["8.8.8.8:80", "taken"])
def test_an_api_address_it_cannot_bind_refuses_to_start(tmp_path, monkeypatch, capsys, address):
    """Issue 24 item 6: `run --api 8.8.8.8:80 --once` exited 0, and a second daemon on a port in
    use logged "address already in use" and went on acting with no control API."""
    monkeypatch.chdir(tmp_path)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        if address == "taken":
            address = f"127.0.0.1:{holder.getsockname()[1]}"
        code = main(["run", "--api", address, "--once", "--out", str(tmp_path / "out")])
    line = one_error_line(capsys.readouterr().err)
    assert code == 2
    assert "control.api_address" in line and address in line
    assert not (tmp_path / "out").exists()  # it did not run


def test_a_second_daemon_on_the_same_state_directory_exits_2_naming_the_holder(
        tmp_path, capsys):
    """Issue 24 item 16: two daemons shared one state directory; a pause sent to one was never
    seen by the other, one's pin overwrote the other's pause."""
    first = MetctlDaemon(tmp_path, "first")
    try:
        code = main(["run", "--config", str(first.config), "--once",
                     "--out", str(tmp_path / "second-out")])
        line = one_error_line(capsys.readouterr().err)
        assert code == 2
        assert f"PID {first.proc.pid}" in line and str(first.state) in line
        # the first goes on, its controls its own
        assert first.call("POST", "/v1/pause", {"reason": "mine"}).status_code == 200
        assert first.status()["paused"] is True
        assert first.proc.poll() is None
    finally:
        first.kill()
    # the holder gone (even killed), the directory is free again
    assert main(["run", "--config", str(first.config), "--once", "--api", "off",
                 "--out", str(tmp_path / "third-out")]) == 0


def test_a_journal_another_daemon_holds_is_refused_before_the_cluster_is_touched(
        tmp_path, capsys):
    """Issue 24 item 16: actuator/journal.py took no lock, so two daemons without HA would both
    act on one journal."""
    first = MetctlDaemon(tmp_path, "first")
    try:
        live = {
            "cluster": "t",
            "state_dir": str(tmp_path / "other"),
            "monitor": {"hbase_jmx_urls": ["http://127.0.0.1:1"]},
            "infrastructure": {"driver": "local"},
            "datastore": {"driver": "hbase", "hbase": {"zookeeper_quorum": "127.0.0.1:1"}},
            "executor": {"journal_path": str(first.state / "journal.sqlite")},
            "telemetry": {"prometheus_enabled": False},
            "control": {"api_address": None},
        }
        cfg = tmp_path / "live.yaml"
        cfg.write_text(yaml.safe_dump(live))
        assert main(["run", "--config", str(cfg), "--once"]) == 2
        line = one_error_line(capsys.readouterr().err)
        assert f"PID {first.proc.pid}" in line and "zookeeper_quorum" not in line
    finally:
        first.kill()


# A signal that lands while the simulator records a step (between its time and its operations):
# the run must still end between two steps, with its whole report.
SIGNAL_MID_STEP = """
import os, signal, sys
from simulator import metrics
from controller.cli import main

record, sent = metrics.Recorder.record, []

class Signalling(list):
    def append(self, x):
        super().append(x)
        if len(self) == 30 and not sent:
            sent.append(1)
            os.kill(os.getpid(), getattr(signal, sys.argv[1]))

def recording_with_a_signal(self, *a, **k):
    if not isinstance(self.ops, Signalling):
        self.ops = Signalling(self.ops)
    record(self, *a, **k)

metrics.Recorder.record = recording_with_a_signal
sys.exit(main(["run", "--api", "off", "--out", sys.argv[2]]))
"""


@pytest.mark.parametrize("name,code", [("SIGHUP", 129), ("SIGTERM", 143), ("SIGINT", 0)])
def test_a_signal_in_the_middle_of_a_simulated_step_still_ends_with_the_whole_report(
        tmp_path, name, code):
    """A SIGHUP that landed inside the simulator's recording of a step cut it in half (its time
    recorded, its operations not): the report then failed, "cannot reshape array of size 186
    into shape (32,6)", exit 1 instead of 129 (1 run in 12 of the SIGHUP test below)."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", SIGNAL_MID_STEP, name, str(out)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == code, done.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert 0 < summary["duration_s"] < 3600  # what ran, cut short by the signal
    assert summary["total_ops"] > 0


def test_sighup_stops_the_daemon_cleanly_with_a_line_saying_so(tmp_path):
    """Issue 24 item 19: SIGHUP ended the daemon at once, with no log line and no clean-up."""
    d = MetctlDaemon(tmp_path, "hup")
    try:
        poll(lambda: d.status()["last_decision"], 60, "a first decision")
        os.kill(d.proc.pid, signal.SIGHUP)
        code = d.proc.wait(timeout=60)
    finally:
        d.kill()
    assert code == 128 + signal.SIGHUP
    said = [x for x in d.lines() if x.get("event") == "run.sighup"]
    assert said and "restart" in said[0]["msg"]
    # the clean-up ran: the report of what ran is written, the state directory released
    summary = json.loads((tmp_path / "out-hup" / "summary.json").read_text())
    assert summary["decisions"] >= 1
    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config",
                           str(d.config), "--once", "--api", "off", "--out",
                           str(tmp_path / "again")], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
