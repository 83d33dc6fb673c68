"""Telemetry: the documented metric list, what each record_* call exports, the live endpoint
scraped over real HTTP, and the docs/operations.md table kept in step with the list."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from controller.telemetry import (METRIC_NAMES, METRICS, Telemetry, TelemetrySettings,
                                  decision_kind, label_token)
from decision.model import Action
from tests.controller.plans import plan_of

OPERATIONS = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def scraped(text: str) -> dict[str, list]:
    """Documented-style name (counters with _total) -> samples, from exposition text."""
    out = {}
    for fam in text_string_to_metric_families(text):
        name = fam.name + "_total" if fam.type == "counter" else fam.name
        out[name] = fam.samples
    return out


def value(text: str, sample: str, **labels) -> float:
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise KeyError((sample, labels))


def test_every_documented_metric_is_exported_and_nothing_else():
    text = Telemetry(identity="t").exposition()
    names = {n for n in scraped(text) if n.startswith("metctl_")}
    # labelled metrics without a value yet still announce themselves (HELP/TYPE)
    assert names == set(METRIC_NAMES)


def test_metric_names_are_unique_and_documented():
    assert len(set(METRIC_NAMES)) == len(METRIC_NAMES)
    for spec in METRICS:
        assert spec.name.startswith("metctl_") and spec.help
        assert spec.name.endswith("_total") == (spec.kind == "counter")


def test_a_decision_sets_target_verdicts_groups_and_counts_its_kind():
    t = Telemetry(identity="t")
    grow = plan_of({"rs1": "overloaded", "rs2": "healthy"},
                   {"read": (6, 1), "write": (4, 2)}, current=2, target=3,
                   actions=(Action(op="launch", reason="r", node="new-1", profile="read"),))
    t.record_plan(grow, at_unix_s=1234.5)
    text = t.exposition()
    assert value(text, "metctl_cluster_target_nodes") == 3
    assert value(text, "metctl_node_verdict", node="rs1", verdict="overloaded") == 1
    assert value(text, "metctl_group_nodes", group="write") == 2
    assert value(text, "metctl_group_partitions", group="read") == 6
    assert value(text, "metctl_decisions_total", kind="scale_out") == 1
    assert value(text, "metctl_last_decision_timestamp_seconds") == 1234.5
    # the next decision replaces the verdicts: a node that left is no longer reported
    t.record_plan(plan_of({"rs2": "underloaded"}, {}, current=2, target=2), at_unix_s=1300)
    text = t.exposition()
    with pytest.raises(KeyError):
        value(text, "metctl_node_verdict", node="rs1", verdict="overloaded")
    assert value(text, "metctl_node_verdict", node="rs2", verdict="underloaded") == 1
    assert value(text, "metctl_decisions_total", kind="none") == 1


def test_decision_kinds():
    move = (Action(op="move", reason="r", partition="p", source="a", target="b"),)
    assert decision_kind(plan_of({}, {}, 3, 5)) == "scale_out"
    assert decision_kind(plan_of({}, {}, 3, 2)) == "scale_in"
    assert decision_kind(plan_of({}, {}, 3, 3, actions=move)) == "rebalance"
    assert decision_kind(plan_of({}, {}, 3, 3)) == "none"


def test_holds_actions_sources_and_leadership():
    t = Telemetry(identity="ctl-a")
    t.record_hold("stale metrics")
    t.record_hold("stale_metrics")
    t.record_action("move", "ok", 1.5)
    t.record_action("move", "failed", 0.2)
    t.record_source_error("ganglia")
    t.record_staleness("ganglia", 42.0)
    t.set_leader(True)
    text = t.exposition()
    assert value(text, "metctl_holds_total", reason="stale_metrics") == 2
    assert value(text, "metctl_actions_total", op="move", result="failed") == 1
    assert value(text, "metctl_action_duration_seconds_count", op="move") == 2
    assert value(text, "metctl_action_duration_seconds_sum", op="move") == pytest.approx(1.7)
    assert value(text, "metctl_metric_source_errors_total", source="ganglia") == 1
    assert value(text, "metctl_metric_staleness_seconds", source="ganglia") == 42.0
    assert value(text, "metctl_leader", identity="ctl-a") == 1
    t.set_leader(False)
    assert value(t.exposition(), "metctl_leader", identity="ctl-a") == 0


def test_label_tokens_stay_short_and_safe():
    assert label_token("Stale Metrics: rs1!") == "stale_metrics_rs1"
    assert label_token("") == "unknown"
    assert len(label_token("x" * 500)) == 40


def test_settings_default_to_loopback_and_check_the_address():
    assert TelemetrySettings().bind()[0] == "127.0.0.1"
    assert TelemetrySettings(prometheus_address="0.0.0.0:9100").bind() == ("0.0.0.0", 9100)
    for bad in ("9100", "host:", "host:port", ":80", "h:70000"):
        with pytest.raises(ValidationError):
            TelemetrySettings(prometheus_address=bad)


def test_operations_table_lists_exactly_the_documented_metrics():
    text = OPERATIONS.read_text()
    section = text[text.index("## Logs and metrics"):]
    section = section[:section.find("\n## ", 3)] if "\n## " in section[3:] else section
    table = set(re.findall(r"^\| `(metctl_[a-z_]+)` \|", section, re.M))
    assert table == set(METRIC_NAMES)


@pytest.mark.integration
def test_endpoint_scraped_over_http_shows_the_documented_names():
    t = Telemetry(TelemetrySettings(prometheus_address="127.0.0.1:0"), identity="scrape")
    host, port = t.serve()
    try:
        t.record_plan(plan_of({"rs1": "healthy"}, {"read_write": (3, 1)}, 1, 1), 1.0)
        t.record_action("compact", "ok", 3.0)
        response = requests.get(f"http://{host}:{port}/metrics", timeout=5)
        assert response.status_code == 200
        names = {n for n in scraped(response.text) if n.startswith("metctl_")}
        assert names == set(METRIC_NAMES)
        assert value(response.text, "metctl_actions_total", op="compact", result="ok") == 1
    finally:
        t.close()


def test_loop_observer_and_step_watcher_feed_the_metrics_and_logs():
    import io
    import json as _json

    from actuator.executor import Executor
    from tests.fakes.cluster import FakeCluster
    from actuator.journal import Journal
    from actuator.settings import ExecutorSettings
    from controller.logs import setup_logging
    from controller.telemetry import StepWatcher, TelemetryObserver
    from tests.actuator.plans import scenario

    t = Telemetry(identity="t")
    obs = TelemetryObserver(t, wall_clock=lambda: 99.0)
    plan = plan_of({"rs1": "overloaded"}, {"read": (2, 1)}, 1, 2)

    class Snap:
        nodes = ("rs1",)

    class Cause:
        value = "not_leader"

    obs.on_decision(0.0, plan, "p1", Snap())
    obs.on_hold(0.0, Cause(), "another controller leads")
    text = t.exposition()
    assert value(text, "metctl_cluster_nodes") == 1
    assert value(text, "metctl_last_decision_timestamp_seconds") == 99.0
    assert value(text, "metctl_holds_total", reason="not_leader") == 1

    stream = io.StringIO()
    logger = setup_logging(TelemetrySettings(), stream)
    world, journal = FakeCluster(), Journal(":memory:")
    real_plan = scenario(world)
    ex = Executor(world.infra, world.datastore, ExecutorSettings(), world.clock, world.cluster,
                  journal)
    watch = StepWatcher(journal, t, logger)
    ex.submit(real_plan, "plan-9")
    for _ in range(5000):
        status = ex.tick()
        watch(status)
        if not ex.busy:
            break
        world.advance(1.0)
    text = t.exposition()
    steps = journal.load_steps("plan-9")
    done_moves = sum(1 for s in steps if s["op"] == "move" and s["state"] == "done")
    assert value(text, "metctl_actions_total", op="move", result="done") == done_moves
    assert value(text, "metctl_actions_total", op="launch", result="done") == 1
    assert value(text, "metctl_action_duration_seconds_count", op="launch") == 1
    lines = [_json.loads(x) for x in stream.getvalue().splitlines()]
    actions = [x for x in lines if x.get("event") == "action"]
    assert len(actions) == sum(1 for s in steps if s["state"] == "done")
    assert all(a["plan_id"] == "plan-9" and "reason" in a for a in actions)
    setup_logging(TelemetrySettings(), io.StringIO())


def test_watched_source_counts_errors_and_reports_staleness():
    from controller.telemetry import WatchedSource
    from monitor.source import Sample

    class Ganglia:  # a source at metctl's own boundary, scripted
        def __init__(self):
            self.script = []

        def sample(self):
            outcome = self.script.pop(0)
            if isinstance(outcome, Exception):
                raise outcome
            return outcome

    now = [0.0]
    t = Telemetry(identity="t")
    source = Ganglia()
    watched = WatchedSource(source, t, clock=lambda: now[0])
    source.script = [Sample(taken_at=0.0), Sample(taken_at=10.0, errors=("gmond timed out",)),
                     OSError("refused"), Sample(taken_at=30.0)]
    watched.sample()
    assert value(t.exposition(), "metctl_metric_staleness_seconds", source="ganglia") == 0
    now[0] = 10.0
    watched.sample()
    now[0] = 20.0
    with pytest.raises(OSError):
        watched.sample()
    text = t.exposition()
    assert value(text, "metctl_metric_source_errors_total", source="ganglia") == 2
    assert value(text, "metctl_metric_staleness_seconds", source="ganglia") == 20.0
    now[0] = 30.0
    watched.sample()
    assert value(t.exposition(), "metctl_metric_staleness_seconds", source="ganglia") == 0
