"""`metctl run` with a live config: bad ones are refused with one line and exit 2, before
anything is started (the run on a real cluster is in tests/integration/test_hbase_run.py)."""
from pathlib import Path

import pytest
import yaml

from controller.cli import main
from tests.fixtures.poll import poll

LIVE = {
    "cluster": "t",
    "monitor": {"hbase_jmx_urls": ["http://127.0.0.1:1"]},
    "infrastructure": {"driver": "local"},
    "datastore": {"driver": "hbase", "hbase": {"zookeeper_quorum": "127.0.0.1:1"}},
    "telemetry": {"prometheus_enabled": False},
}


def with_(doc, dotted, value):
    out = yaml.safe_load(yaml.safe_dump(doc))
    *parents, last = dotted.split(".")
    d = out
    for p in parents:
        d = d.setdefault(p, {})
    d[last] = value
    return out


@pytest.mark.parametrize("dotted,value,field", [
    ("datastore.hbase.zookeeper_quorum", "", "datastore.hbase.zookeeper_quorum"),
    ("datastore.hbase.zookeeper_quorum", "a:1,b:2", "datastore.hbase.zookeeper_quorum"),
    ("datastore.driver", "sim", "datastore.driver"),
    ("monitor.hbase_jmx_urls", [], "monitor.hbase_jmx_urls"),
    ("executor.journal_path", ":memory:", "executor.journal_path"),
    ("datastore.hbase.host_format", "{nope}", "datastore.hbase.host_format"),
])
def test_bad_live_configs_exit_2_with_one_line(tmp_path, capsys, dotted, value, field):
    assert_refused_in_one_line(tmp_path, capsys, with_(LIVE, dotted, value), field)


def assert_refused_in_one_line(tmp_path, capsys, doc, field):
    """`run --once` on `doc`: exit 2, one line naming the file and `field` (besides a moved
    key's warning), no journal made."""
    cfg = tmp_path / "live.yaml"
    doc.setdefault("state_dir", str(tmp_path))
    cfg.write_text(yaml.safe_dump(doc))
    assert main(["run", "--config", str(cfg), "--once"]) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines()
           if not line.startswith("metctl: warning:")]
    assert len(err) == 1 and str(cfg) in err[0] and field in err[0], err
    assert not (tmp_path / "journal.sqlite").exists()  # nothing half-started


CASSANDRA = {
    "cluster": "t",
    "infrastructure": {"driver": "local"},
    "datastore": {"driver": "cassandra", "cassandra": {"contact_points": ["127.0.0.1"], "native_port": 1}},
    "telemetry": {"prometheus_enabled": False},
}


@pytest.mark.parametrize("dotted,value,field", [
    ("datastore.cassandra.contact_points", [], "datastore.cassandra.contact_points"),
    ("datastore.cassandra.contact_points", ["127.0.0.1:9042"], "datastore.cassandra.contact_points"),
    ("datastore.cassandra.native_port", 70000, "datastore.cassandra.native_port"),
    ("datastore.cassandra.keyspaces", ["system_auth"], "datastore.cassandra.keyspaces"),
    ("datastore.cassandra.keyspaces", ["bad-name"], "datastore.cassandra.keyspaces"),
    ("datastore.cassandra.nodetool_command", [], "datastore.cassandra.nodetool_command"),
    ("datastore.cassandra.nodetool_command", ["nodetool", "-h", "{host}"], "datastore.cassandra.nodetool_command"),
    ("datastore.cassandra.restart_command", ["restart", "{server}"], "datastore.cassandra.restart_command"),
    ("datastore.cassandra.query_timeout_s", 0, "datastore.cassandra.query_timeout_s"),
    ("datastore.cassandra.port", 9042, "datastore.cassandra.port"),
    ("monitor.hbase_jmx_urls", ["http://127.0.0.1:1"], "monitor.hbase_jmx_urls"),
    ("executor.journal_path", ":memory:", "executor.journal_path"),
])
def test_bad_cassandra_configs_exit_2_with_one_line(tmp_path, capsys, dotted, value, field):
    assert_refused_in_one_line(tmp_path, capsys, with_(CASSANDRA, dotted, value), field)


def test_an_unreachable_cassandra_is_one_line_naming_the_contact_points(tmp_path, capsys):
    """Nothing listens on the native port: exit 2 in bounded time, the setting and the
    addresses named, no traceback."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = with_(CASSANDRA, "datastore.cassandra.native_port", port)
    doc["datastore"]["cassandra"]["query_timeout_s"] = 2
    doc["executor"] = {"journal_path": str(tmp_path / "state" / "journal.sqlite")}
    cfg = tmp_path / "live.yaml"
    cfg.write_text(yaml.safe_dump(doc))
    for args in (["run", "--once", "--api", "off"], ["snapshot", "--samples", "1"]):
        assert main([*args, "--config", str(cfg)]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert err[-1].startswith(f"metctl: {cfg}: datastore.cassandra.contact_points: reachable "
                                  f"Cassandra nodes at 127.0.0.1 port {port}"), (args, err)
        assert not any("Traceback" in ln for ln in err), err


def test_sim_infrastructure_with_the_hbase_store_is_refused(tmp_path, capsys):
    cfg = tmp_path / "live.yaml"
    cfg.write_text(yaml.safe_dump(with_(LIVE, "infrastructure.driver", "sim")))
    assert main(["run", "--config", str(cfg), "--once"]) == 2
    assert "infrastructure.driver" in capsys.readouterr().err


def test_sigterm_ends_a_run_with_its_report_written(tmp_path):
    """systemd stop / kill / a container runtime: the report of what ran is written as on
    Ctrl-C, and the exit code says SIGTERM (128 + 15)."""
    import json
    import signal
    import subprocess
    import sys

    out = tmp_path / "report"
    log_file = tmp_path / "stderr.log"
    with log_file.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--api", "off", "--out", str(out)],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        # started, its handlers installed and simulating: its first decision is logged (a fixed
        # sleep sent SIGTERM before the handlers on a loaded machine: exit -15)
        poll(lambda: '"event": "decision"' in log_file.read_text(), 180, "the run's first decision",
             every_s=0.5)
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    stderr = log_file.read_text()
    assert proc.returncode == 143, stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duration_s"] > 0 and summary["total_ops"] > 0
    assert "report in" in stdout


def test_run_out_dev_null_is_refused_before_the_simulation(tmp_path, monkeypatch, capsys):
    """Issue 24 item 10: `run --out /dev/null --once` simulated the whole round, then failed
    with "[Errno 17] File exists". The output directory is checked first (as `simulate` does):
    exit 2, one line naming --out, nothing simulated."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--out", "/dev/null", "--once", "--api", "off"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and "/dev/null" in err[0], err
    assert "decision" not in captured.out + captured.err  # no round was simulated


def _sim_config(tmp_path, policy="static", **sections):
    """A simulated-cluster config in tmp_path running the small scenario as fast as it can."""
    from tests.fixtures.simcluster import small_scenario_dict

    scen = tmp_path / "small.yaml"
    scen.write_text(yaml.safe_dump(small_scenario_dict(duration_s=600)))
    doc = {"cluster": "demo", "policy": {"name": policy},
           "infrastructure": {"driver": "sim"}, "datastore": {"driver": "sim"},
           "simulator": {"scenario": str(scen), "run_speed": 0},
           "loop": {"memory_path": None}, "telemetry": {"prometheus_enabled": False}}
    for k, v in sections.items():
        doc.setdefault(k, {}).update(v)
    cfg = tmp_path / f"{policy}.yaml"
    cfg.write_text(yaml.safe_dump(doc))
    return cfg


def test_holds_are_one_count_and_one_word_everywhere(tmp_path, monkeypatch, capsys, sim_stack):
    """Issue 24 item 2: the end line said "20 decisions, 0 holds" when every decision was a
    hold, the live view `hold: -`, `explain` "last decision (none)", observe mode "20 holds".
    Every decision round is a plan carried out or a hold with its cause, counted once: the end
    line, summary.json, observe mode, the live view and `explain` say the same."""
    import json

    from controller.commands.explain import explain_lines
    from controller.commands.run import LiveView
    from controller.control import LiveStatus

    monkeypatch.chdir(tmp_path)
    cfg = _sim_config(tmp_path)  # static: never acts, so every decision is a hold
    lines = {}
    for flags in ([], ["--observe"]):
        out = tmp_path / ("observe" if flags else "act")
        assert main(["run", "--config", str(cfg), "--api", "off", "--out", str(out), *flags]) == 0
        summary = json.loads((out / "summary.json").read_text())
        holds = sum(summary["holds"].values())
        assert summary["decisions"] > 0
        assert summary["decisions"] == holds + summary["plans"]["submitted"] == holds
        # static is asked at every sample from the second (the first has no rates yet)
        assert set(summary["holds"]) == {"no_change"}
        text = " ".join(capsys.readouterr().out.split())
        assert f"{summary['decisions']} decisions" in text and f"{holds} holds" in text, text
        lines[bool(flags)] = text
    assert lines[False].split("report in")[0] == lines[True].split("report in")[0]

    # the demo's own first decision: held or carried out, counted once
    out = tmp_path / "demo"
    assert main(["run", "--once", "--api", "off", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["decisions"] == 1 == sum(summary["holds"].values()) + summary["plans"]["submitted"]

    # the live view and explain show the hold with its cause
    view, live = LiveView(), LiveStatus()
    run = sim_stack("static", observers=[view, live])
    view.run = run
    run.run(until=400)
    from rich.console import Console
    console = Console(record=True, width=160)
    console.print(view.render())
    shown = console.export_text()
    hold_line = next(ln for ln in shown.splitlines() if ln.startswith("hold:"))
    assert "no_change" in hold_line, hold_line
    said = explain_lines(live.copy())
    assert str(said[0]).startswith("last decision: hold (no_change)"), said[0]


@pytest.mark.parametrize("text,field", [
    ("", ""),
    ("# only a comment\n\n", ""),
    ("---\n", ""),
    ("datastore: {driver: hbase}\n", "cluster"),
    ("cluster: prod\n", "datastore.driver"),
    ("cluster: prod\ndatastore: {}\n", "datastore.driver"),
    ("cluster: prod\npolicy: {name: met}\n", "datastore.driver"),
])
def test_an_empty_or_unnamed_config_is_refused_not_simulated(tmp_path, monkeypatch, capsys, text, field):
    """Issue 24 item 5: `validate empty.yaml` said ok and `run --config empty.yaml` quietly ran
    the simulator and exited 0 (under systemd a truncated /etc/metctl/metctl.yaml gave a
    controller that simulated). A config given explicitly names its cluster and data store:
    otherwise exit 2, one line naming the file (and the field), nothing run."""
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text(text)
    for args in (["validate", str(cfg)], ["run", "--config", str(cfg), "--once", "--api", "off"],
                 ["snapshot", "--config", str(cfg)], ["status", "--config", str(cfg)],
                 ["plan", "--snapshot", "configs/examples/met-5-nodes.yaml", "--config", str(cfg)]):
        if args[0] == "plan":
            monkeypatch.chdir(Path(__file__).resolve().parents[2])
        assert main(args) == 2, args
        captured = capsys.readouterr()
        err = captured.err.strip().splitlines()
        assert len(err) == 1 and str(cfg) in err[0] and field in err[0], (args, err)
        assert "cluster" in err[0] or "datastore" in err[0]
        assert "decision" not in captured.out
    assert not (tmp_path / "out").exists()  # nothing simulated


def test_the_simulator_runs_when_a_config_asks_for_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cfg = _sim_config(tmp_path)
    assert main(["validate", str(cfg)]) == 0
    assert "ok:" in capsys.readouterr().out


def _interrupted_run(tmp_path, presses: int):
    """`metctl run` on the demo's scenario in a real process: Ctrl-C (SIGINT) once it runs, then
    `presses - 1` more the moment it says it is writing the report."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    root = Path(__file__).resolve().parents[2]
    cfg = tmp_path / "demo.yaml"
    cfg.write_text(yaml.safe_dump({
        "cluster": "demo", "infrastructure": {"driver": "sim"}, "datastore": {"driver": "sim"},
        "simulator": {"scenario": "daily-peaks.yaml", "run_speed": 120},
        "loop": {"memory_path": None}, "telemetry": {"prometheus_enabled": False}}))
    out = tmp_path / "report"
    # Ctrl-C reaches it as it reaches a run in a terminal: a suite started in the background
    # (`cmd &` in a script, nohup) passes SIGINT on ignored, and Python then ignores it too
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(cfg),
                             "--api", "off", "--out", str(out)], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(root)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: list[str] = []
    writing, running = threading.Event(), threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("interrupted: writing the report"):
                writing.set()

    def read_log() -> None:
        for line in proc.stderr:  # JSON log lines (not a terminal)
            if '"event": "status"' in line:
                running.set()  # the loop runs: a Ctrl-C now stops a run, not its start
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    threading.Thread(target=read_log, daemon=True).start()
    try:
        # simulating (120x: the 90 minutes take ~45 s, so a quiet machine does not finish them
        # before the Ctrl-C lands, as it did at 600x); on a loaded machine the start alone took
        # over the 6 s this waited blindly, and a Ctrl-C during the imports prints nothing
        assert running.wait(120), "".join(lines)
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        assert writing.wait(60), "".join(lines)
        for _ in range(presses - 1):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
        proc.wait(timeout=120)
    finally:
        proc.kill()
    reader.join(10)
    return proc.returncode, "".join(lines), out


def test_a_second_ctrl_c_while_the_report_is_written_loses_nothing(tmp_path):
    """Issue 24 item 11: a second Ctrl-C while the report was written (4-8 s) lost summary.json
    (exit 1, only timeseries.csv). The second lets the report finish and says how to abandon
    it; the report is whole."""
    import json

    code, text, out = _interrupted_run(tmp_path, presses=2)
    assert code == 0, text
    assert "Ctrl-C once more to abandon it" in text and "stopped by Ctrl-C" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total_ops"] > 0 and set(summary["plots"]) <= {p.name for p in out.iterdir()}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_an_abandoned_report_leaves_nothing_half_written(tmp_path, monkeypatch, sim_stack):
    """The third Ctrl-C abandons the report (exit 130): the report directory keeps what it held,
    never a CSV without its summary, and no partial directory is left beside it."""
    import controller.commands.run as run_cmd

    run = sim_stack("static")
    run.run(until=300)
    out = tmp_path / "report"
    run_cmd.write_whole_report(run, out, "static")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "summary.json" in before

    def interrupted(run, where, policy, **kw):
        (where / "timeseries.csv").write_text("t,throughput\n0,")  # half written
        raise KeyboardInterrupt
    monkeypatch.setattr(run_cmd, "write_report", interrupted)
    for target in (out, tmp_path / "fresh"):
        with pytest.raises(KeyboardInterrupt):
            run_cmd.write_whole_report(run, target, "static")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert not (tmp_path / "fresh").exists() or not any((tmp_path / "fresh").iterdir())
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
