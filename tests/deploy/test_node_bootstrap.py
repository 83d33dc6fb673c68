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


def run_bootstrap(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(BOOTSTRAP)], capture_output=True, text=True, env=env, timeout=120)


def test_bootstrap_starts_a_regionserver_with_the_profile_that_joins_the_cluster(
        tmp_path, hbase_cluster, local_hbase_module):
    node_root = tmp_path / "node"
    (node_root / "etc" / "metctl").mkdir(parents=True)
    site, port, info_port = base_site(hbase_cluster, local_hbase_module, tmp_path)
    (node_root / "etc" / "metctl" / "hbase-site.base.xml").write_text(local_hbase_module.site_xml(site))
    (node_root / "etc" / "metctl" / "node.json").write_text(json.dumps(node_document("test", "read")))
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
        conf = requests.get(f"http://127.0.0.1:{info_port}/conf", timeout=5)
        conf.raise_for_status()
        running = {p.findtext("name"): p.findtext("value")
                   for p in ET.fromstring(conf.text).iter("property")}
        assert running["hfile.block.cache.size"] == "0.55"
        assert running["hbase.regionserver.global.memstore.size"] == "0.10"
        assert running["metctl.profile"] == "read"
        assert running["hbase.zookeeper.property.clientPort"] == str(hbase_cluster.zk_port)

        # a second run (cloud-init re-running, an operator) leaves the running server alone
        again = run_bootstrap(env)
        assert again.returncode == 0, again.stderr
        assert f"already running (PID {pid})" in again.stderr and int(pidfile.read_text()) == pid
    finally:
        if pid is not None:
            with_pid_stopped(pid)
        poll(lambda: server_id not in hbase_cluster.live_server_ids(), timeout_s=60, every_s=0.5,
             what=f"{server_id} gone from the master")
    assert len(hbase_cluster.live_server_ids()) == RS_COUNT


def with_pid_stopped(pid: int) -> None:
    """SIGTERM (HBase's graceful stop), SIGKILL after 60 s; reaps nothing (not our child)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    if Path(f"/proc/{pid}").exists():
        os.kill(pid, signal.SIGKILL)
