"""controller/config_files.py: where a run's state lives — the config's `state_dir`, or
$METCTL_STATE_DIR, or the config file's directory, or (the built-in demo and shipped configs)
$XDG_STATE_HOME — never the working directory."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from controller.cli import main
from controller.config_files import load_given_config
from tests.fixtures.ganglia import free_port
from tests.fixtures.poll import poll

ROOT = Path(__file__).resolve().parents[2]


def test_the_cli_finds_the_daemons_journal_and_token_from_any_directory(tmp_path, monkeypatch, capsys,
                                                                         own_state_home):
    """Issue 24 item 12: docs/operations.md's `metctl status` (journal of the built-in config)
    failed after `make run` and against a running demo ("no such journal file"); state paths
    were relative to the working directory, so the CLI run from elsewhere found no token or
    journal. The demo's journal, token and controls live in the state home; a config's in its
    own directory (or its state_dir)."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    # the demo, started in one directory, against the CLI in another
    port = free_port()
    api = f"http://127.0.0.1:{port}"
    demo = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--api", f"127.0.0.1:{port}"],
                            cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        monkeypatch.chdir(there)
        token = own_state_home / "metctl-state" / "api-token"
        poll(lambda: token.exists() and main(["explain", "--api", api]) == 0, 120, "the demo's API")
        capsys.readouterr()
        assert main(["pause", "--for", "10m", "--reason", "from elsewhere", "--api", api]) == 0
        assert "from elsewhere" in capsys.readouterr().out
        assert main(["resume", "--api", api]) == 0
        journal = own_state_home / "metctl-state" / "journal.sqlite"
        poll(lambda: journal.exists(), 60, "the demo's journal")
        capsys.readouterr()
        assert main(["status", "--format", "json"]) == 0  # the built-in config's journal
        assert json.loads(capsys.readouterr().out)["journal"] == str(journal)
    finally:
        demo.send_signal(signal.SIGTERM)
        demo.wait(120)
    assert not (here / "metctl-state").exists() and not (there / "metctl-state").exists()

    # a config of one's own: its state beside it, whoever runs the CLI where
    site = tmp_path / "site"
    site.mkdir()
    cfg = site / "metctl.yaml"
    cfg.write_text(yaml.safe_dump({
        "cluster": "demo", "datastore": {"driver": "sim"}, "infrastructure": {"driver": "sim"},
        "simulator": {"scenario": "daily-peaks.yaml"}, "loop": {"memory_path": None},
        "telemetry": {"prometheus_enabled": False}}))
    monkeypatch.chdir(here)
    assert main(["run", "--config", str(cfg), "--once", "--api", "off", "--out", str(tmp_path / "o")]) == 0
    monkeypatch.chdir(there)
    capsys.readouterr()
    assert main(["status", "--config", str(cfg), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["journal"] == str(site / "metctl-state" / "journal.sqlite")
    assert not (here / "metctl-state").exists() and not (there / "metctl-state").exists()


def test_state_dir_then_the_environment_then_the_files_directory(tmp_path, monkeypatch, own_state_home):
    cfg = tmp_path / "conf" / "metctl.yaml"
    cfg.parent.mkdir()
    cfg.write_text("cluster: c\ndatastore: {driver: sim}\nexecutor: {journal_path: j/journal.sqlite}\n"
                   "control: {token_file: /etc/metctl/token}\n")
    c = load_given_config(str(cfg))
    assert c.executor.journal_path == str(cfg.parent / "j" / "journal.sqlite")
    assert c.control.token_file == "/etc/metctl/token"  # absolute paths stay as written
    assert c.loop.memory_path == str(cfg.parent / "metctl-state" / "memory.json")
    monkeypatch.setenv("METCTL_STATE_DIR", str(tmp_path / "var"))
    assert load_given_config(str(cfg)).executor.journal_path == str(tmp_path / "var" / "j" / "journal.sqlite")
    cfg.write_text("cluster: c\ndatastore: {driver: sim}\nstate_dir: ../state\n")
    c = load_given_config(str(cfg))  # the file's own state_dir: from the file, whatever the environment
    assert c.executor.journal_path == str(tmp_path / "conf" / ".." / "state" / "journal.sqlite")
    assert c.infrastructure.local.state_dir == str(tmp_path / "conf" / ".." / "state" / "local-nodes")
    # the built-in default and shipped configs: the state home
    monkeypatch.delenv("METCTL_STATE_DIR")
    assert load_given_config(None).control.token_file == str(own_state_home / "metctl-state" / "api-token")
    assert load_given_config("config:met").executor.journal_path == \
        str(own_state_home / "metctl-state" / "journal.sqlite")
