"""The event store, the loop's events and webhook delivery in one process (the daemon's own
tests, over HTTP, are in test_events_daemon.py)."""
from __future__ import annotations

import json

import pytest

from controller.config import load_config
from controller.events import KINDS, EventStore, parse_kinds
from controller.errors import BadInput
from controller.harness import build_run
from controller.webhooks import WebhookSender, WebhookSettings
from tests.fixtures.poll import poll
from tests.fixtures.webhooks import closed_port_url


def test_the_store_keeps_the_newest_in_order_and_filters():
    store = EventStore(keep=10, wall_clock=lambda: 5.0)
    for i in range(25):
        store.append("decision" if i % 2 else "hold", f"s{i}", f"r{i}", "none")
    got = store.select(limit=100)
    assert [e.id for e in got] == list(range(16, 26))  # bounded: the oldest went first
    assert [e.id for e in store.select(after=22)] == [23, 24, 25]
    assert {e.kind for e in store.select(kinds=frozenset({"hold"}))} == {"hold"}
    assert [e.id for e in store.select(limit=2)] == [24, 25]
    assert store.last_id == 25


def test_a_listener_that_fails_does_not_stop_recording():
    store = EventStore()
    seen = []
    store.listeners += [lambda e: 1 / 0, seen.append]
    store.append("command", "pause", "upgrade", "accepted")
    assert [e.subject for e in store.select()] == ["pause"] and len(seen) == 1


def test_reasons_are_redacted():
    store = EventStore()
    store.append("failure", "loop", "boto said aws_secret_access_key=abcd1234efgh5678", "error")
    assert "abcd1234efgh5678" not in json.dumps(store.select()[0].to_dict())


def test_kinds_are_checked_by_name():
    assert parse_kinds("decision, hold", "q") == {"decision", "hold"}
    assert parse_kinds("", "q") is None
    with pytest.raises(BadInput, match="kind"):
        parse_kinds("decision,nonsense", "q")


def test_a_simulated_run_records_decisions_plans_steps_and_their_effect(tmp_path):
    """The control plane's recorder on a run that scales out: each kind an operator asks about
    is there, with the plan's measured effect after it ended."""
    config = load_config(None).model_copy(update={"control": load_config(None).control.model_copy(
        update={"api_address": None, "state_path": str(tmp_path / "control.json")})})
    config = config.model_copy(update={
        # MET's marks and CPU rule: on met-elasticity the default met (sized from demand) holds
        # within the SLO until a scale-in after 50 minutes; this run must scale out
        "policy": config.policy.model_copy(update={"latency_gate": False, "size_from_demand": False}),
        "telemetry": config.telemetry.model_copy(update={"prometheus_enabled": False})})
    from controller.production import Production

    prod = Production(config)
    run = build_run(config, "met-elasticity.yaml", production=prod, control=True)
    prod.start(handle_sigterm=False)
    plane = run.daemon.plane
    assert plane is not None
    run.run(until=1800)
    events = plane.events.select(limit=1000)
    kinds = {e.kind for e in events}
    assert {"decision", "action"} <= kinds <= set(KINDS)
    plans = {e.subject for e in events if e.kind == "action" and e.outcome == "submitted"}
    assert plans, "the run scaled out: at least one plan"
    plan = sorted(plans)[0]
    outcomes = [e.outcome for e in events if e.subject == plan]
    assert outcomes[:1] == ["scale_out"] or "submitted" in outcomes
    assert "done" in outcomes and "measured" in outcomes
    effect = next(e for e in events if e.subject == plan and e.outcome == "measured")
    assert effect.reason.startswith("effect: nodes ")
    assert effect.details["after"]["nodes"] >= effect.details["before"]["nodes"]
    steps = [e for e in events if e.details.get("plan_id") == plan and "op" in e.details]
    assert {e.details["op"] for e in steps} >= {"launch", "move"}
    assert all(e.outcome in ("done", "skipped", "cancelled") for e in steps)
    # ids increase with time: what a client resuming after id N needs
    ids = [e.id for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    plane.close()
    prod.close()


def _hook(**kw) -> WebhookSettings:
    return WebhookSettings(**{"name": "h", "secret_env": "METCTL_TEST_HOOK_SECRET", **kw})


def test_webhook_settings_refuse_bad_values(monkeypatch):
    from pydantic import ValidationError

    for bad in ({"url": "ftp://x/y"}, {"url": "http:///nohost"},
                {"url": "http://h/", "secret_file": "f"},  # both secrets
                {"url": "http://h/", "kinds": ["nonsense"]}, {"url": "http://h/", "retries": -1},
                {"url": "http://h/", "name": "has space"}):
        with pytest.raises(ValidationError):
            _hook(**bad)
    with pytest.raises(ValidationError, match="exactly one"):
        WebhookSettings(name="h", url="http://h/")


def test_a_webhook_without_its_secret_is_off_and_metctl_goes_on(monkeypatch, caplog):
    monkeypatch.delenv("METCTL_TEST_HOOK_SECRET", raising=False)
    sender = WebhookSender((_hook(url="http://127.0.0.1:9/"),))
    assert sender.hooks == [] and "webhook h is off" in caplog.text
    sender.start()  # nothing to start: no thread, no error
    sender.offer(EventStore().append("hold", "x", "y", "held"))
    sender.close()


def test_a_full_queue_drops_new_events_and_counts_them(monkeypatch, receivers):
    """A receiver that stalls holds one event in flight; the queue takes queue_max more; every
    event past that is dropped at once (counted), and offering never waited for any of it."""
    monkeypatch.setenv("METCTL_TEST_HOOK_SECRET", "s3cret")
    stalled = receivers.stalled()
    sender = WebhookSender((_hook(url=stalled.url, timeout_s=60, retries=0, queue_max=2),))
    sender.start()
    store = EventStore()
    store.listeners.append(sender.offer)
    store.append("hold", "first", "", "held")
    poll(lambda: stalled.accepted, 10, "the first delivery to reach the stalled receiver")
    for i in range(10):
        store.append("hold", f"e{i}", "", "held")
    counts = poll(lambda: (c := sender.counts()[0])["dropped"] == 8 and c, 10, "8 drops")
    assert counts["queued"] == 2 and counts["delivered"] == 0
    assert len(stalled.accepted) == 1  # still on the first event: nothing else got through
    sender.close()


def test_failed_deliveries_are_retried_then_dropped_with_a_count(monkeypatch, caplog, receivers):
    monkeypatch.setenv("METCTL_TEST_HOOK_SECRET", "s3cret")
    failing = receivers.failing(b"s3cret")
    down = closed_port_url() + "?token=not-for-logs"
    sender = WebhookSender((_hook(name="failing", url=failing.url, retries=2, backoff_s=0.01),
                            _hook(name="down", url=down, retries=1, backoff_s=0.01)))
    sender.start()
    store = EventStore()
    store.listeners.append(sender.offer)
    for i in range(3):
        store.append("failure", f"f{i}", "", "failed")
    poll(lambda: [c["dropped"] for c in sender.counts()] == [3, 3], 30, "every event dropped")
    failing_counts, down_counts = sender.counts()
    assert failing_counts["retried"] == 6 and down_counts["retried"] == 3
    assert len(failing.got()) == 9  # 3 events x (1 + 2 retries), each signed
    assert all(d["valid"] for d in failing.got())
    assert "dropped after 3 attempts (last: HTTP 500)" in caplog.text
    assert "not-for-logs" not in caplog.text and "s3cret" not in caplog.text
    sender.close()
