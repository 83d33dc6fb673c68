"""`metctl run` with a live config: bad ones are refused with one line and exit 2, before
anything is started (the run on a real cluster is in tests/integration/test_hbase_run.py)."""
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
