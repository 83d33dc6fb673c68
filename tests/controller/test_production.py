"""The production wiring: logs, endpoint, leadership and the fenced executor together."""
from __future__ import annotations

import io
import json


from actuator.executor import Executor
from tests.fakes.cluster import FakeCluster
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
        ex = prod.fence(Executor(*prod.fence_drivers(world.infra, world.datastore), ExecutorSettings(), world.clock,
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


def test_the_leaders_last_decision_and_hold_reach_status(tmp_path):
    from controller.ha import Leadership, HASettings
    from controller.production import DecisionRecorder, status_lines, status_of
    from tests.controller.plans import plan_of

    cfg = config(executor={"journal_path": str(tmp_path / "state" / "journal.sqlite")})
    lead = Leadership(HASettings(), "demo")
    lead.start()
    rec = DecisionRecorder(tmp_path / "state" / "last-decision.json", lead,
                           wall_clock=lambda: 1_800_000_000.0)
    assert status_of(cfg)["last_decision"] is None
    plan = plan_of({"rs1": "overloaded", "rs2": "healthy"}, {}, 2, 3,
                   reason="suboptimal 0.50 > 0.40: add 1")

    class Cause:
        value = "cooldown"

    rec.on_decision(10.0, plan, "met-0001", None)
    rec.on_hold(10.0, Cause(), "size change within the cooldown")
    doc = status_of(cfg)
    assert doc["leader"] is None and doc["ha"] == "alone"
    assert doc["last_decision"]["plan_id"] == "met-0001"
    assert doc["last_decision"]["hold"] == {"cause": "cooldown",
                                            "words": "size change within the cooldown"}
    text = "\n".join(status_lines(doc))
    assert "runs alone" in text and "suboptimal 0.50 > 0.40: add 1" in text
    assert "rs1.sim" not in text and "rs1: overloaded" in text and "rs2" not in text
    assert "held" in text and "cooldown" in text
    # a hold of its own (a later round) replaces the record; a follower records nothing
    rec.on_hold(40.0, type("C", (), {"value": "stale_metrics"})(), "rs3 silent")
    assert status_of(cfg)["last_decision"]["plan_id"] is None
    lead.request_release()
    rec.on_decision(70.0, plan, "met-0002", None)
    assert status_of(cfg)["last_decision"]["hold"]["cause"] == "stale_metrics"


def test_metctl_status_shows_leadership_and_last_decision(tmp_path, capsys):
    from controller.cli import main

    journal_path = tmp_path / "journal.sqlite"
    Journal(str(journal_path)).close()
    (tmp_path / "last-decision.json").write_text(json.dumps({
        "at_unix_s": 1_800_000_000.0, "identity": "ctl-1", "plan_id": "met-0003",
        "reason": "rs2 underloaded: remove 1", "sizing": {"current": 4, "target": 3},
        "actions": 5, "verdicts": [{"node": "rs2", "verdict": "underloaded",
                                    "reasons": ["cpu 0.04 <= 0.10"]}], "hold": None}))
    assert main(["status", "--journal", str(journal_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ha"] == "alone" and doc["last_decision"]["plan_id"] == "met-0003"
    assert main(["status", "--journal", str(journal_path)]) == 0
    out = capsys.readouterr().out
    assert "runs alone" in out and "rs2 underloaded: remove 1" in out
    assert "rs2: underloaded (cpu 0.04 <= 0.10)" in out


def test_the_decision_record_follows_the_executors_journal(tmp_path):
    prod = Production(config(telemetry={"prometheus_enabled": False}), stream=io.StringIO())
    world = FakeCluster()

    def executor(journal):
        return Executor(*prod.fence_drivers(world.infra, world.datastore), ExecutorSettings(), world.clock,
                        world.cluster, journal)

    prod.fence(executor(Journal(":memory:")))
    assert prod.recorder.path is None  # a journal in memory: nothing on disk either
    prod.fence(executor(Journal(str(tmp_path / "j.sqlite"))))
    assert prod.recorder.path == tmp_path / "last-decision.json"
