"""The control API of `metctl run` on the session's real HBase cluster (live drivers, real time),
in observe mode so it never reshapes the cluster the other tests share: status over real HTTP
shows the real RegionServers' verdicts, a pause given through the CLI is in force, and SIGTERM
stops the daemon with HBase's balancer as it was."""
from __future__ import annotations

import signal

import pytest
import yaml

from controller.cli import main
from controller.hold_causes import causes_of
from tests.fixtures.controllers import poll
from tests.fixtures.daemons import MetctlDaemon
from tests.integration.test_hbase_run import live_config

pytestmark = pytest.mark.integration


def test_api_on_the_live_hbase_daemon(tmp_path, hbase_cluster, local_hbase_module, hbase_gateway):
    balancer_before = bool(hbase_gateway.admin.isBalancerEnabled())
    doc = live_config(tmp_path, hbase_cluster, local_hbase_module)
    doc["policy"] = {"preset": "met"}
    doc["state_dir"] = str(tmp_path / "live-state")  # MetctlDaemon's state, where its token is
    doc["control"] = {"api_address": "127.0.0.1:0", "mode": "observe"}
    d = MetctlDaemon(tmp_path, "live", config_text=yaml.safe_dump(doc))
    try:
        s = d.status()
        assert s["role"] == "leader" and s["mode"] == "observe"
        # a round on the real cluster: a decision with the RegionServers' verdicts, or a hold
        # that says why (no Ganglia here: node metrics may be missing)
        last = poll(lambda: d.status()["last_decision"], 120, "a first round")["hold"] or {}
        assert last.get("cause") is None or None not in causes_of(last["cause"]), last
        token = ["--api", d.base, "--token-file", str(d.state / "api-token")]
        assert main(["pause", "--for", "10m", "--reason", "live test", *token]) == 0
        s = d.status()
        assert s["paused"] and s["pause"]["reason"] == "live test"
        r = d.call("POST", "/v1/plan")
        assert r.status_code in (200, 409)
        assert main(["resume", *token]) == 0
        assert d.call("PUT", "/v1/size", {"min": 1}).status_code == 400
    finally:
        d.kill(signal.SIGTERM)
    assert d.proc.returncode is not None
    assert bool(hbase_gateway.admin.isBalancerEnabled()) == balancer_before
