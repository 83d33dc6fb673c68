"""The production wiring: logs, endpoint, leadership and the fenced executor together."""
from __future__ import annotations

import io
import json

import pytest
import requests

from actuator.executor import Executor
from actuator.fake import FakeCluster
from actuator.journal import Journal
from actuator.settings import ExecutorSettings
from controller.config import MetctlConfig
from controller.production import Production
from controller.telemetry import NullTelemetry
from tests.actuator.plans import scenario


def config(**sections) -> MetctlConfig:
    return MetctlConfig.model_validate(sections)


def test_alone_it_leads_and_says_so_and_the_fenced_executor_reports_actions():
    stream = io.StringIO()
    prod = Production(config(telemetry={"prometheus_enabled": False}), stream=stream)
    assert isinstance(prod.telemetry, NullTelemetry)
    prod.start(handle_sigterm=False)
    try:
        assert prod.may_act()
        world = FakeCluster()
        ex = prod.fence(Executor(world.infra, world.datastore, ExecutorSettings(), world.clock,
                                 world.cluster, Journal(":memory:")))
        ex.submit(scenario(world), "plan-1")
        for _ in range(5000):
            if ex.tick().state != "running":
                break
            world.advance(1.0)
    finally:
        prod.close()
    lines = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert any(x.get("event") == "ha.alone" and "running alone" in x["msg"] for x in lines)
    assert any(x.get("event") == "action" and x["plan_id"] == "plan-1" for x in lines)
    assert not prod.may_act()  # closed: released


@pytest.mark.integration
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
