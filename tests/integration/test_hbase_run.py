"""`metctl run --once` on the session's real HBase cluster: the live daemon (RegionServer /jmx +
the HBase driver's server list, local infrastructure, py4j gateway, journaled executor, real
time) completes one decision round and exits 0, leaving HBase's balancer as it found it."""
from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

pytestmark = pytest.mark.integration


def live_config(tmp_path, cluster, local_hbase_module, preset: str = "static") -> dict:
    urls = [p.info_url for p in cluster.region_servers() if cluster.running(p.name)]
    return {
        "cluster": "it-run",
        "state_dir": str(tmp_path),  # journal, memory, controls, token, local-nodes/
        # static never acts: one round must not reshape the cluster the other tests share
        "policy": {"preset": preset},
        "monitor": {"hbase_jmx_urls": urls, "http": {"read_timeout_s": 5}},
        "loop": {"sample_interval_s": 1, "decision_interval_samples": 2, "executor_tick_s": 1},
        "infrastructure": {"driver": "local"},
        "datastore": {"driver": "hbase", "hbase": {
            "zookeeper_quorum": f"localhost:{cluster.zk_port}",
            "client_jars_dir": str(local_hbase_module.home_for(cluster.version) / "lib"),
            "host_format": "{host}:{port}", "rpc_timeout_s": 30}},
        "telemetry": {"prometheus_enabled": False},
    }


def paused(state_dir) -> None:
    """An operator's pause in the run's control state: it decides and shows each decision
    held `paused`, never acts (a policy that acts must not reshape the shared cluster)."""
    (state_dir / "control.json").write_text(json.dumps({"version": 1, "pause": {
        "reason": "test: decide, never act", "by": "test", "at_unix_s": time.time()}}))


def first_round(cfg, log):
    """A live `metctl run` started on `cfg`, once its first round is printed, and that line."""
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config",
                                 str(cfg), "--api", "off"], stdout=subprocess.PIPE,
                                stderr=err, text=True)
    return proc, proc.stdout.readline()


def metctl(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_run_once_on_the_live_cluster_completes_one_round(tmp_path, hbase_cluster, local_hbase_module,
                                                         hbase_gateway):
    balancer_before = bool(hbase_gateway.admin.isBalancerEnabled())
    cfg = tmp_path / "live.yaml"
    cfg.write_text(yaml.safe_dump(live_config(tmp_path, hbase_cluster, local_hbase_module)))
    done = metctl("run", "--config", str(cfg), "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    rounds = [ln for ln in done.stdout.splitlines() if ln.startswith(("decision:", "hold:"))]
    assert rounds, done.stdout
    # a decision, or a hold that says why (no Ganglia here: the nodes' system metrics are missing)
    assert not any(ln.startswith("hold: error") for ln in rounds), done.stdout + done.stderr
    # a plan, or a hold the policy or the loop names (controller/hold_causes.py)
    from controller.hold_causes import causes_of
    assert rounds[-1].startswith("decision:") or None not in causes_of(rounds[-1].split(":")[1].strip()), rounds
    assert "1 decision: " in done.stdout, done.stdout
    assert (tmp_path / "journal.sqlite").exists()
    assert bool(hbase_gateway.admin.isBalancerEnabled()) == balancer_before


def test_a_live_config_with_no_quorum_exits_2_with_one_line(tmp_path, hbase_cluster, local_hbase_module):
    doc = live_config(tmp_path, hbase_cluster, local_hbase_module)
    doc["datastore"]["hbase"]["zookeeper_quorum"] = ""
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(yaml.safe_dump(doc))
    done = metctl("run", "--config", str(cfg), "--once", timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "datastore.hbase.zookeeper_quorum" in lines[0], done.stderr


def test_run_against_an_unreachable_cluster_is_one_line_and_exit_2(tmp_path, local_hbase_module):
    """A ZooKeeper quorum with nothing listening: bounded time, one plain line naming the
    setting, exit 2 — no Java exception text, no traceback (the gateway connects lazily, so the
    first call that reaches the cluster is where it shows)."""
    import socket

    with socket.socket() as s:  # a loopback port with nothing listening once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    class Nowhere:  # only what live_config reads
        zk_port = port
        version = local_hbase_module.HBASE_VERSION

        @staticmethod
        def region_servers():
            return []

    config = live_config(tmp_path, Nowhere, local_hbase_module)
    config["monitor"]["hbase_jmx_urls"] = ["http://127.0.0.1:1"]
    path = tmp_path / "metctl.yaml"
    path.write_text(yaml.safe_dump(config))
    r = metctl("run", "--once", "--api", "off", "--config", str(path), timeout=120)
    lines = [ln for ln in r.stderr.strip().splitlines() if ln.strip()]
    assert r.returncode == 2, r.stderr[-2000:]
    assert lines[-1].startswith(f"metctl: {path}: datastore.hbase.zookeeper_quorum: a reachable HBase cluster")
    assert "Traceback" not in r.stderr and "at org.apache" not in lines[-1] and "py4j" not in lines[-1]


@contextlib.contextmanager
def live_run_with_the_balancer_on(tmp_path, hbase_cluster, local_hbase_module, admin, policy: str):
    """A paused live run of `policy` started with HBase's balancer on, up to its first round:
    (the process, that round's line, its log). The balancer is set back as it was after."""
    was_on = bool(admin.isBalancerEnabled())
    admin.balancerSwitch(True, True)
    try:
        cfg = tmp_path / "live.yaml"
        cfg.write_text(yaml.safe_dump(live_config(tmp_path, hbase_cluster, local_hbase_module, policy)))
        paused(tmp_path)
        log = tmp_path / "run.log"
        proc, first = first_round(cfg, log)
        try:
            assert first.startswith(("decision:", "hold:")), first + log.read_text()[-2000:]
            yield proc, log
        finally:
            proc.kill()
    finally:
        admin.balancerSwitch(was_on, True)


def test_sighup_stops_a_live_run_cleanly_and_restores_the_balancer(tmp_path, hbase_cluster,
                                                                   local_hbase_module,
                                                                   hbase_gateway):
    """Issue 24 item 19: SIGHUP ended the daemon at once with no log line and no clean-up, so
    on live HBase the balancer metctl had switched off stayed off."""
    admin = hbase_gateway.admin
    # met places regions itself: HBase's balancer is off while it runs
    with live_run_with_the_balancer_on(tmp_path, hbase_cluster, local_hbase_module, admin,
                                       "met") as (proc, log):
        assert not admin.isBalancerEnabled()
        proc.send_signal(signal.SIGHUP)
        code = proc.wait(timeout=120)
        assert code == 128 + signal.SIGHUP, log.read_text()[-2000:]
        lines = log.read_text().splitlines()
        assert any('"event": "run.sighup"' in ln for ln in lines)
        assert "Traceback" not in log.read_text()
        assert admin.isBalancerEnabled()  # restored before exit: metctl found it on


def test_under_a_policy_that_lets_hbase_place_regions_the_balancer_stays_on(
        tmp_path, hbase_cluster, local_hbase_module, hbase_gateway):
    """tiramola, target-tracking and static launch RegionServers and let HBase's balancer give
    them regions (decision/policies.py): switched off for the whole run, as it was for every
    policy, a new RegionServer got none."""
    admin = hbase_gateway.admin
    with live_run_with_the_balancer_on(tmp_path, hbase_cluster, local_hbase_module, admin,
                                       "target-tracking") as (proc, log):
        assert admin.isBalancerEnabled()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        assert "Traceback" not in log.read_text(), log.read_text()[-2000:]
        assert admin.isBalancerEnabled()
