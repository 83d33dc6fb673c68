"""Structured logs: JSON off a terminal, human on one, every decision and action with its
reason and plan id, credentials masked wherever they appear."""
from __future__ import annotations

import io
import json
import logging

import pytest

from controller.logs import (MASK, choose_format, log_action, log_decision, log_hold, redact,
                             setup_logging)
from controller.telemetry import TelemetrySettings
from decision.model import Action
from tests.controller.plans import plan_of


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def json_log():
    stream = io.StringIO()
    logger = setup_logging(TelemetrySettings(), stream)
    yield logger, lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    setup_logging(TelemetrySettings(), io.StringIO())


def test_format_follows_the_terminal_unless_chosen():
    assert choose_format("auto", io.StringIO()) == "json"
    assert choose_format("auto", Terminal()) == "human"
    assert choose_format("json", Terminal()) == "json"
    assert choose_format("human", io.StringIO()) == "human"


def test_json_lines_carry_fields(json_log):
    logger, lines = json_log
    logging.getLogger("metctl.loop").info("tick %d", 3, extra={"event": "tick", "n": 3})
    (line,) = lines()
    assert line["msg"] == "tick 3" and line["event"] == "tick" and line["n"] == 3
    assert line["level"] == "info" and line["logger"] == "metctl.loop"
    assert line["ts"].endswith("Z")


def test_human_lines_on_a_terminal():
    stream = Terminal()
    setup_logging(TelemetrySettings(), stream)
    logging.getLogger("metctl").warning("moving %s", "p1", extra={"plan_id": "p-7"})
    out = stream.getvalue()
    assert "warning" in out and "moving p1" in out and "plan_id=p-7" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)
    setup_logging(TelemetrySettings(), io.StringIO())


def test_decision_hold_and_action_carry_reason_and_plan_id(json_log):
    logger, lines = json_log
    move = Action(op="move", reason="region hot on rs1", partition="abc", source="rs1",
                  target="rs2", cause="rebalance")
    plan = plan_of({"rs1": "overloaded"}, {}, 2, 3, actions=(move,), reason="rs1 overloaded")
    log_decision(logger, plan, "plan-42")
    log_hold(logger, "stale_metrics", "rs3 silent for 95 s")
    log_action(logger, move, "plan-42", "ok", duration_s=1.1)
    log_action(logger, move, "plan-42", "failed", error="timeout")
    decision, hold, done, failed = lines()
    assert decision["event"] == "decision" and decision["plan_id"] == "plan-42"
    assert decision["reason"] == "rs1 overloaded" and decision["target"] == 3
    assert hold["event"] == "hold" and hold["reason"] == "stale_metrics"
    for line in (done, failed):
        assert line["event"] == "action" and line["plan_id"] == "plan-42"
        assert line["reason"] == "region hot on rs1" and line["op"] == "move"
        assert line["partition"] == "abc" and line["cause"] == "rebalance"
    assert failed["level"] == "warning" and failed["error"] == "timeout"


@pytest.mark.parametrize("text,secret", [
    ("password=hunter2 rest", "hunter2"),
    ('{"password": "hunter2"}', "hunter2"),
    ("X-Auth-Token: gAAAAABk123", "gAAAAABk123"),
    ("Authorization: Bearer eyJhbGciOi", "eyJhbGciOi"),
    ("key AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI/K7MDENG"),
    ("https://admin:s3cret@keystone:5000/v3", "s3cret"),
])
def test_redact_masks_credentials_in_text(text, secret):
    out = redact(text)
    assert secret not in out and MASK in out


def test_credentials_never_reach_the_log(json_log):
    logger, lines = json_log
    logger.info("connecting with password=hunter2",
                extra={"os_password": "hunter2", "auth": {"token": "t0k"},
                       "url": "http://u:hunter2@h/", "node": "rs1"})
    logger.error("boom", exc_info=ValueError("secret_access_key=abcd1234"))
    text = json.dumps(lines())
    for secret in ("hunter2", "t0k", "abcd1234"):
        assert secret not in text
    assert lines()[0]["node"] == "rs1"  # ordinary fields stay


def test_setup_twice_keeps_one_handler():
    setup_logging(TelemetrySettings(), io.StringIO())
    logger = setup_logging(TelemetrySettings(log_level="WARNING"), io.StringIO())
    assert sum(getattr(h, "_metctl", False) for h in logger.handlers) == 1
    assert logger.level == logging.WARNING
