"""deploy/node/bootstrap.sh on this machine, as on a fresh node but under a temporary ROOT:
java present (no apt), HBase's jars from the cache, metctl's node.json with the `read`
profile, no systemd. The RegionServer it starts must join the session's real local HBase
cluster with the profile's settings in its configuration; it is then stopped by its PID and
the cluster is left with its own RegionServers only."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import requests

from actuator.userdata import node_document
from tests.fixtures.hbase import RS_COUNT
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
BOOTSTRAP = ROOT / "deploy" / "node" / "bootstrap.sh"


def base_site(cluster, module, tmp: Path) -> tuple[dict[str, str], int, int]:
    """The cluster's common hbase-site.xml as an operator would hand it to a new node: an
    existing RegionServer's, with this node's own ports and temp dir."""
    rs1 = cluster.region_servers()[0]
    root = ET.parse(Path(rs1.conf_dir) / "hbase-site.xml").getroot()
    site = {p.findtext("name"): p.findtext("value") for p in root.findall("property")}
    port, info_port = module.free_port(), module.free_port()
    site.update({"hbase.regionserver.port": str(port), "hbase.regionserver.info.port": str(info_port),
                 "hbase.tmp.dir": str(tmp / "hbase-tmp")})
    return site, port, info_port


def running_conf(info_port: int) -> dict[str, str]:
    """The configuration a RegionServer runs with, from its info server's /conf ({} while down)."""
    try:
        conf = requests.get(f"http://127.0.0.1:{info_port}/conf", timeout=5)
        conf.raise_for_status()
    except requests.RequestException:
        return {}
    return {p.findtext("name"): p.findtext("value") for p in ET.fromstring(conf.text).iter("property")}


def run_bootstrap(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BOOTSTRAP)], capture_output=True, text=True, env=env, timeout=120)


def test_bootstrap_starts_a_regionserver_with_the_profile_that_joins_the_cluster(
        tmp_path, hbase_cluster, local_hbase_module):
    node_root = tmp_path / "node"
    (node_root / "etc" / "metctl").mkdir(parents=True)
    site, port, info_port = base_site(hbase_cluster, local_hbase_module, tmp_path)
    (node_root / "etc" / "metctl" / "hbase-site.base.xml").write_text(local_hbase_module.site_xml(site))
    node_json = node_root / "etc" / "metctl" / "node.json"
    node_json.write_text(json.dumps(node_document("test", "read")))
    env = dict(os.environ, ROOT=str(node_root), INSTALL_PACKAGES="no", SYSTEMD="no",
               PYTHON=sys.executable, HBASE_VERSION=hbase_cluster.version,
               METCTL_CACHE=str(local_hbase_module.home_for(hbase_cluster.version).parent),
               HBASE_HEAP="256m",
               HBASE_OPTS=" ".join(local_hbase_module.SMALL_JVM_FLAGS))
    pidfile = node_root / "var" / "lib" / "metctl-node" / "regionserver.pid"
    server_id = f"{local_hbase_module.HOST},{port}"
    pid = None
    try:
        r = run_bootstrap(env)
        assert r.returncode == 0, r.stderr
        pid = int(pidfile.read_text())
        assert "RegionServer started" in r.stderr

        poll(lambda: server_id in hbase_cluster.live_server_ids(), timeout_s=90, every_s=0.5,
             what=f"{server_id} live at the master")
        # the profile (MET's read node: most of the heap to the block cache) is what it runs with
        running = running_conf(info_port)
        assert running["hfile.block.cache.size"] == "0.55"
        assert running["hbase.regionserver.global.memstore.size"] == "0.10"
        assert running["metctl.profile"] == "read"
        assert running["hbase.zookeeper.property.clientPort"] == str(hbase_cluster.zk_port)

        # a second run (cloud-init re-running, an operator) leaves the running server alone
        again = run_bootstrap(env)
        assert again.returncode == 0, again.stderr
        assert f"already running (PID {pid})" in again.stderr and int(pidfile.read_text()) == pid

        # another profile in node.json: the next run stops the old server and starts a new one
        node_json.write_text(json.dumps(node_document("test", "write")))
        changed = run_bootstrap(env)
        assert changed.returncode == 0, changed.stderr
        assert f"stopping RegionServer PID {pid}" in changed.stderr
        old_pid, pid = pid, int(pidfile.read_text())
        assert pid != old_pid and not local_hbase_module.pid_alive(old_pid)
        poll(lambda: running_conf(info_port).get("metctl.profile") == "write", timeout_s=90,
             every_s=0.5, what="the RegionServer back with the write profile")
        assert running_conf(info_port)["hfile.block.cache.size"] == "0.10"
        poll(lambda: server_id in hbase_cluster.live_server_ids(), timeout_s=90, every_s=0.5,
             what=f"{server_id} live again at the master")
    finally:
        if pid is not None:
            with_pid_stopped(pid, local_hbase_module.pid_alive)
        poll(lambda: server_id not in hbase_cluster.live_server_ids(), timeout_s=60, every_s=0.5,
             what=f"{server_id} gone from the master")
    assert len(hbase_cluster.live_server_ids()) == RS_COUNT


def with_pid_stopped(pid: int, alive) -> None:
    """SIGTERM (HBase's graceful stop), SIGKILL after 60 s. `alive`: cluster.py's pid_alive
    (the RegionServer is no child of ours: once it exits it may linger as a zombie)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 60
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("missing, expect", [("node.json", "no node document"),
                                             ("hbase-site.base.xml", "no base hbase-site.xml")])
def test_a_missing_input_file_is_one_line_naming_it_exit_2(tmp_path, missing, expect):
    etc = tmp_path / "etc" / "metctl"
    etc.mkdir(parents=True)
    for name in ("node.json", "hbase-site.base.xml"):
        if name != missing:
            (etc / name).write_text("{}")
    r = run_bootstrap(dict(os.environ, ROOT=str(tmp_path), INSTALL_PACKAGES="no", SYSTEMD="no"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert str(etc / missing) in r.stderr and expect in r.stderr
    assert not (tmp_path / "var").exists()  # nothing installed, nothing started
