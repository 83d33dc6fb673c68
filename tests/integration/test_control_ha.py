"""Operator controls shared through a real ZooKeeper: two `metctl run` daemons on the simulated
cluster elect one leader; a pause given to either is honoured by both, and survives the leader's
death (the new leader inherits it)."""
from __future__ import annotations

import json
import os
import signal
import time

import pytest
from kazoo.client import KazooClient

from tests.fixtures.controllers import poll

pytestmark = pytest.mark.integration


def ha_yaml(zk_hosts: str, root: str, name: str) -> str:
    return (f"ha: {{zookeeper_hosts: '{zk_hosts}', root_znode: {root}, session_timeout_s: 2, "
            f"identity: {name}}}\n")


def test_pause_on_one_instance_holds_the_other_and_survives_the_leader(zookeeper, metctl_daemons):
    root = f"/metctl-ctl-{os.getpid()}"
    a = metctl_daemons("a", ha_yaml(zookeeper.hosts, root, "a"))
    b = metctl_daemons("b", ha_yaml(zookeeper.hosts, root, "b"))
    roles = poll(lambda: {d.name: d.status()["role"] for d in (a, b)}
                 if sorted(d.status()["role"] for d in (a, b)) == ["follower", "leader"] else None,
                 30, "one leader and one follower")
    leader, follower = (a, b) if roles["a"] == "leader" else (b, a)

    # pause through the follower's API: the leader holds
    r = follower.call("POST", "/v1/pause", {"reason": "shared pause", "stop_plan": False})
    assert r.status_code == 200
    since = time.time()
    poll(lambda: leader.status()["paused"], 10, "the leader to see the pause")
    assert leader.status()["pause"]["reason"] == "shared pause"
    held = poll(lambda: [x for x in leader.decisions(200) if x["at_unix_s"] > since
                         and (x.get("hold") or {}).get("cause") == "paused"], 120,
                "the leader to hold a decision because paused")
    assert held
    # maintenance windows set at run time through the leader are shared the same way
    r = leader.call("PUT", "/v1/windows", {"windows": [{"start": "02:00", "end": "03:00"}],
                                           "timezone": "UTC"})
    assert r.status_code == 200
    poll(lambda: follower.status()["window"]["source"].startswith("set by"), 10,
         "the follower to see the windows")

    # stored where every instance (and the next leader) reads it
    zk = KazooClient(hosts=zookeeper.hosts)
    zk.start(timeout=10)
    try:
        data, _ = zk.get(f"{root}/ctl/control")
        assert b"shared pause" in data
    finally:
        zk.stop()
        zk.close()

    # the leader dies while paused: the follower takes over and stays paused
    leader.kill(signal.SIGKILL)
    poll(lambda: follower.status()["role"] == "leader", 30, "the follower to lead")
    took_over = time.time()
    s = follower.status()
    assert s["paused"] and s["pause"]["reason"] == "shared pause"
    poll(lambda: [x for x in follower.decisions(200) if x["at_unix_s"] > took_over
                  and (x.get("hold") or {}).get("cause") == "paused"], 120,
         "the new leader to hold because paused")
    new_plans = [x for x in follower.decisions(200) if x["at_unix_s"] > took_over
                 and x.get("plan_id") and not x.get("hold")]
    assert new_plans == []

    # resumed through the new leader: it acts again
    assert follower.call("POST", "/v1/resume", {}).json()["paused"] is False


def test_a_shared_state_that_does_not_validate_starts_paused_not_empty(zookeeper, metctl_daemons):
    """Issue 24 item 15: under HA a control znode that did not validate was replaced by an empty
    state (no pause, no pin, no protection) without a word."""
    root = f"/metctl-bad-{os.getpid()}"
    zk = KazooClient(hosts=zookeeper.hosts)
    zk.start(timeout=10)
    try:
        bad = (b'{"version": 1, "pause": {"reason": "", "by": "x", "at_unix_s": 1.0, '
               b'"until_unix_s": 1e15}, "pin": {"min_nodes": 4, "max_nodes": 4, "by": "x", '
               b'"at_unix_s": 1.0}}')
        zk.create(f"{root}/ctl/control", bad, makepath=True)
        d = metctl_daemons("a", ha_yaml(zookeeper.hosts, root, "a"))
        poll(lambda: d.status()["role"] == "leader", 30, "the daemon to lead")
        s = d.status()
        assert s["paused"] is True and s["pause"]["by"] == "metctl"
        assert "did not validate" in s["pause"]["reason"] and "until_unix_s" in s["pause"]["reason"]
        assert d.events("control.invalid_state")
        held = poll(lambda: [x for x in d.decisions(200)
                             if (x.get("hold") or {}).get("cause") == "paused"], 120,
                    "a decision held because paused")
        assert held
        # the operator resumes through the API: the znode holds a valid state again
        assert d.call("POST", "/v1/resume", {}).status_code == 200
        assert d.status()["paused"] is False
        data, _ = zk.get(f"{root}/ctl/control")
        assert json.loads(data)["pause"] is None
    finally:
        zk.stop()
        zk.close()
