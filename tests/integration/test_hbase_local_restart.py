"""A RegionServer metctl launched (local-process driver, `cluster.py exec-rs`) and then restarted
with a profile through the HBase driver stays the local driver's running node: the restart goes
through LocalRestarter → LocalDriver.restart, which records the new JVM's PID."""
from __future__ import annotations

import json
import socket
import sys

import pytest

from tests.fixtures.hbase import CLUSTER_PY
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration


def free_port_pair() -> int:
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port > 60000:
            continue
        with socket.socket() as s2:
            try:
                s2.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two free consecutive ports")


def wait_for(cond, what: str, timeout_s: float = 120.0):
    return poll(cond, timeout_s, what, every_s=0.5)


def test_a_launched_regionserver_restarted_with_a_profile_stays_a_running_node(
        tmp_path, hbase_cluster_restored, hbase_gateway):
    from actuator.hbase import HBaseDriver
    from actuator.local import LocalDriver, LocalRestarter
    from actuator.settings import LocalSettings

    cluster = hbase_cluster_restored
    settings = LocalSettings(
        state_dir=str(tmp_path / "nodes"), base_port=free_port_pair(), port_stride=2, ready_port=True,
        command=(sys.executable, str(CLUSTER_PY), "--workdir", str(cluster.workdir), "exec-rs",
                 "{node}", "--port", "{port}", "--info-port", "{port1}", "--settings", "{settings_file}"),
        address_template="localhost:{port}", stop_timeout_s=30)
    infra = LocalDriver(settings, "it-local")
    driver = HBaseDriver(hbase_gateway, host_format="{host}:{port}")
    driver.restarter = LocalRestarter(infra, host_format=driver.host_format)  # no command fallback
    iid = infra.launch("default", "", {})
    server = f"localhost,{settings.base_port}"
    try:
        wait_for(lambda: any(s.id == server and s.state == "active" for s in driver.servers()), "live")
        pid = json.loads((infra.root / iid / "node.json").read_text())["pid"]
        driver.restart_server(server, "write")  # starts it: observe it serve with the write profile
        wait_for(lambda: any(s.id == server and s.state == "active" and s.profile == "write"
                             for s in driver.servers()), "serving with the write profile", 180)
        rec = json.loads((infra.root / iid / "node.json").read_text())
        assert rec["pid"] != pid
        (node,) = wait_for(lambda: (ns := infra.nodes()) and ns[0].state == "running" and ns, "running")
        assert node.instance_id == iid and node.profile == "write" and node.address == f"localhost:{settings.base_port}"
        info = {s.id: s for s in driver.servers()}[server]
        assert info.profile == "write"
        # the monitor polls servers metctl launched through the info URL the driver reports
        assert info.info_url == f"http://localhost:{settings.base_port + 1}"
    finally:
        for n in infra.nodes():
            infra.terminate(n.instance_id)
            infra.wait_gone(n.instance_id, timeout_s=60)
        wait_for(lambda: server not in cluster.live_server_ids(), "gone from the master", 60)
