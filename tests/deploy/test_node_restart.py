"""deploy/node/restart-regionserver.sh, metctl's restart_command for multi-host clusters. The
node is this machine: SSH is a stand-in that runs the remote command with bash (as sshd would)
and records the host it was given, so what is checked is the script's own work — the settings
reaching the node's hbase-site.xml through standard input, the remote words quoted, the
restart run after the merge, and bad input refused before any ssh."""
from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESTART = ROOT / "deploy" / "node" / "restart-regionserver.sh"

FAKE_SSH = """#!/usr/bin/env bash
# ssh stand-in: options until --, then the host, then the remote command (run by bash)
while [ "$1" != -- ]; do shift; done
shift
printf '%s\\n' "$1" >>"$LOG"
exec bash -c "$2"
"""


@pytest.fixture
def node(tmp_path):
    site = tmp_path / "node dir" / "hbase-site.xml"  # a space: the remote words must be quoted
    site.parent.mkdir()
    site.write_text('<?xml version="1.0"?>\n<configuration>\n  <property><name>hbase.zookeeper.quorum'
                    '</name><value>zk1</value></property>\n</configuration>\n')
    ssh = tmp_path / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    env = dict(os.environ, SSH=str(ssh), LOG=str(tmp_path / "hosts.log"), SUDO="",
               REMOTE_SRC=str(ROOT), REMOTE_SITE=str(site), WAIT_S="0",
               REMOTE_RESTART=f"touch {tmp_path / 'restarted'}")
    return tmp_path, site, env


def run(env, *args):
    return subprocess.run(["bash", str(RESTART), *args], capture_output=True, text=True, env=env, timeout=60)


def test_settings_are_merged_on_the_node_then_it_restarts(node):
    tmp, site, env = node
    settings = tmp / "profile.json"
    settings.write_text(json.dumps({"hfile.block.cache.size": "0.10", "metctl.profile": "write"}))
    r = run(env, "rs-7.example.org,16020,1700000000000", str(settings))
    assert r.returncode == 0, r.stderr
    values = {p.findtext("name"): p.findtext("value") for p in ET.parse(site).getroot().iter("property")}
    assert values == {"hbase.zookeeper.quorum": "zk1", "hfile.block.cache.size": "0.10",
                      "metctl.profile": "write"}
    assert (tmp / "restarted").exists()
    assert (tmp / "hosts.log").read_text() == "rs-7.example.org\n"


@pytest.mark.parametrize("server", ["-oProxyCommand=x,16020", "a;b,16020", "$(id),1", ""])
def test_a_server_that_is_no_host_is_refused_before_ssh(node, server):
    tmp, _, env = node
    settings = tmp / "s.json"
    settings.write_text("{}")
    r = run(env, server, str(settings))
    assert r.returncode == 2 and "expected host,port" in r.stderr
    assert not (tmp / "hosts.log").exists()


def test_bad_settings_are_refused_naming_the_file_before_ssh(node):
    tmp, site, env = node
    settings = tmp / "s.json"
    settings.write_text("[1]")
    before = site.read_text()
    r = run(env, "rs1,16020", str(settings))
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and str(settings) in r.stderr
    assert not (tmp / "hosts.log").exists() and site.read_text() == before


def test_a_failed_restart_is_exit_1_naming_the_host(node):
    tmp, _, env = node
    settings = tmp / "s.json"
    settings.write_text('{"a.b": "1"}')
    r = run(dict(env, REMOTE_RESTART="false"), "rs1,16020", str(settings))
    assert r.returncode == 1 and "rs1: applying the settings or restarting failed" in r.stderr
