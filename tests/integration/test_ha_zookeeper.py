"""Leader election and the production wiring on a real ZooKeeper (a JVM): two in-process
contenders, one leads and hands over on close; a leader fenced while ZooKeeper is away leads
again after; the endpoint and `metctl status` name the leader. (Fencing rules on a fake clock,
running alone and settings are tests/controller/test_ha.py and test_production.py.)"""
from __future__ import annotations

import io

import pytest
import requests

from controller.ha import HASettings, Leadership, read_leader
from controller.production import Production
from tests.controller.test_production import config
from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration


def test_two_contenders_one_leads_and_close_hands_over(zookeeper):
    settings = dict(zookeeper_hosts=zookeeper.hosts, root_znode="/metctl-unit",
                    session_timeout_s=2.0)
    a = Leadership(HASettings(identity="a", **settings), "ha")
    b = Leadership(HASettings(identity="b", **settings), "ha")
    try:
        a.start()
        assert a.wait_until_leader(10)
        b.start()
        assert poll(lambda: read_leader(a.settings, "ha") == "a", 5, "a seen as leader")
        assert not b.is_leader() and b.status() == "following"
        a.request_release()
        assert not a.is_leader()
        assert b.wait_until_leader(5)
        assert read_leader(b.settings, "ha") == "b"
    finally:
        a.close()
        b.close()
    assert read_leader(a.settings, "ha") is None


def test_leader_fenced_when_zookeeper_goes_away_and_leads_again_after(zookeeper):
    lead = Leadership(HASettings(zookeeper_hosts=zookeeper.hosts, root_znode="/metctl-unit2",
                                 identity="solo", session_timeout_s=2.0), "ha")
    changes: list[bool] = []
    lead.add_listener(lambda leader, why: changes.append(leader))
    try:
        lead.start()
        assert lead.wait_until_leader(10)
        zookeeper.stop()
        poll(lambda: not lead.is_leader(), 5, "the leader to be fenced")
        zookeeper.start()
        assert lead.wait_until_leader(20)
    finally:
        lead.close()
    assert changes[:3] == [True, False, True]


def test_endpoint_serves_leadership_and_follower_status(zookeeper):
    stream = io.StringIO()
    common = {"ha": {"zookeeper_hosts": zookeeper.hosts, "root_znode": "/metctl-prod",
                     "session_timeout_s": 2.0},
              "telemetry": {"prometheus_address": "127.0.0.1:0"}}
    a = Production(config(**common, cluster="p"), stream=stream)
    a.start(handle_sigterm=False)
    try:
        assert a.leadership.wait_until_leader(10)
        host, port = a.telemetry.address
        text = requests.get(f"http://{host}:{port}/metrics", timeout=5).text
        assert f'metctl_leader{{identity="{a.leadership.identity}"}} 1.0' in text
    finally:
        a.close()


def test_status_names_the_leader_from_zookeeper(zookeeper, tmp_path):
    from controller.production import status_lines, status_of

    ha = {"zookeeper_hosts": zookeeper.hosts, "root_znode": "/metctl-status",
          "session_timeout_s": 2.0}
    cfg = config(cluster="st", ha=ha, executor={"journal_path": str(tmp_path / "j.sqlite")})
    assert status_of(cfg)["leader"] == "(nobody leads)"
    lead = Leadership(HASettings(identity="ctl-7", **ha), "st")
    lead.start()
    try:
        assert lead.wait_until_leader(10)
        doc = status_of(cfg)
        assert doc["leader"] == "ctl-7"
        assert status_lines(doc)[0].startswith("leader: ctl-7 (")
    finally:
        lead.close()
    down = config(cluster="st", ha={**ha, "zookeeper_hosts": "127.0.0.1:1"})
    assert "unreachable" in status_of(down, zookeeper_timeout_s=0.5)["leader"]
