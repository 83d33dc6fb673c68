"""The operator's controls without the daemon: windows, timed pauses on a fake clock, the
control file, config validation, and the loop's holds on the simulated cluster."""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import pytest
import requests
from hypothesis import assume, given
from hypothesis import strategies as st

from controller.api import ApiServer
from controller.config import default_config, load_config
from controller.control import (ControlGate, ControlSettings, ControlState, LiveStatus,
                                MaintenanceWindow, Pause, window_open)
from controller.control_store import FileControlStore
from controller.errors import BadInput


def at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


class FakeClock:
    def __init__(self, t: float = 1_800_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


# ---------------------------------------------------------------- windows

NIGHTS = (MaintenanceWindow(days=("mon", "tue", "wed", "thu", "fri"), start="22:00", end="06:00"),
          MaintenanceWindow(days=("sat", "sun"), start="00:00", end="24:00"))


@pytest.mark.parametrize("when,open_", [
    ("2026-11-23T21:59:00+00:00", False),  # Monday evening, before
    ("2026-11-23T22:00:00+00:00", True),
    ("2026-11-24T05:59:00+00:00", True),   # Tuesday morning: Monday's window runs on
    ("2026-11-24T06:00:00+00:00", False),
    ("2026-11-28T12:00:00+00:00", True),   # Saturday all day
    ("2026-11-23T03:00:00+00:00", False),  # Monday 03:00: Sunday's window ended at midnight
])
def test_window_open_weekdays_and_midnight(when, open_):
    ok, words = window_open(NIGHTS, "UTC", at(when))
    assert ok is open_, words
    assert ok or "outside every maintenance window" in words


def test_window_time_zone_shifts_the_range():
    w = (MaintenanceWindow(start="01:00", end="02:00"),)
    # 01:30 in Lisbon (winter: UTC+0) and in Tokyo (UTC+9)
    assert window_open(w, "Europe/Lisbon", at("2026-11-23T01:30:00+00:00"))[0]
    assert not window_open(w, "Asia/Tokyo", at("2026-11-23T01:30:00+00:00"))[0]
    assert window_open(w, "Asia/Tokyo", at("2026-11-22T16:30:00+00:00"))[0]


@given(st.integers(0, 24 * 60 - 1), st.integers(0, 24 * 60 - 1), st.integers(0, 7 * 24 * 60 - 1))
def test_window_matches_a_minute_by_minute_oracle(start, end, minute_of_week):
    assume(start != end)  # a window of no length is refused (test_settings_refuse_bad_windows)
    w = MaintenanceWindow(days=("wed",), start=f"{start // 60:02d}:{start % 60:02d}",
                          end=f"{end // 60:02d}:{end % 60:02d}")
    monday = at("2026-11-23T00:00:00+00:00")
    ok, _ = window_open((w,), "UTC", monday + minute_of_week * 60)
    # oracle: the set of minutes of the week the window covers
    wed = 2 * 24 * 60
    covered = set(range(wed + start, wed + end)) if start <= end else \
        set(range(wed + start, wed + 24 * 60 + end))
    assert ok == (minute_of_week in covered)


def test_settings_refuse_bad_windows_and_zones(tmp_path):
    for text, field in [("control: {windows: [{start: '25:00', end: '01:00'}]}", "start"),
                        ("control: {windows: [{start: '10:00', end: '10:00'}]}", "start and end"),
                        ("control: {windows: [{start: '01:00', end: '02:00', days: [monday]}]}",
                         "days"),
                        ("control: {timezone: Mars/Base}", "timezone"),
                        ("control: {api_address: 'nohost'}", "api_address"),
                        ("control: {mode: sleep}", "mode")]:
        p = tmp_path / "c.yaml"
        p.write_text(text)
        with pytest.raises(BadInput, match=field):
            load_config(p)


# ---------------------------------------------------------------- pause expiry, fake clock

def test_timed_pause_expires_on_the_clock():
    clock = FakeClock()
    state = ControlState(pause=Pause("upgrade", "ops", clock.t, until_unix_s=clock.t + 3600))
    assert state.active_pause(clock.t + 3599) is not None
    assert state.active_pause(clock.t + 3600) is None
    assert ControlState(pause=Pause("x", "ops", 0.0)).active_pause(1e12) is not None


def test_timed_pause_over_the_api_expires_with_the_fake_clock(tmp_path):
    clock = FakeClock()
    store = FileControlStore(tmp_path / "control.json")
    settings = ControlSettings(api_address="127.0.0.1:0", token_file=str(tmp_path / "t"))
    gate = ControlGate(settings, store, clock)
    server = ApiServer(settings, store, LiveStatus(wall_clock=clock), token="s3cret", gate=gate,
                       wall_clock=clock)
    host, port = server.start()
    try:
        base = f"http://{host}:{port}/v1"
        auth = {"Authorization": "Bearer s3cret"}
        r = requests.post(base + "/pause", json={"for_s": 600, "reason": "r"}, headers=auth,
                          timeout=5)
        assert r.json()["paused"] is True
        plan = _plan(delta=1)
        assert gate.hold(plan)[0] == "paused"
        assert gate.plan_suspended()
        clock.t += 599
        assert requests.get(base + "/status", timeout=5).json()["paused"] is True
        clock.t += 1
        assert requests.get(base + "/status", timeout=5).json()["paused"] is False
        assert gate.hold(plan) is None and gate.plan_suspended() is None
        # a body over control.max_body_bytes: 413, nothing stored
        r = requests.post(base + "/pause", data=b'{"reason": "' + b"x" * 70000 + b'"}',
                          headers=auth, timeout=5)
        assert r.status_code == 413 and store.state.active_pause(clock.t) is None
        # no dry run wired in this process: said, not crashed
        assert requests.post(base + "/plan", timeout=5).status_code == 503
    finally:
        server.close()


# ---------------------------------------------------------------- the control file

def test_control_file_is_private_atomic_and_round_trips(tmp_path):
    path = tmp_path / "sub" / "control.json"
    store = FileControlStore(path)
    assert store.state == ControlState()
    from dataclasses import replace

    from controller.control import Pin, Protection
    store.update(lambda s: replace(s, pin=Pin(3, 5, "ops", 1.0),
                                   protected={"rs1": Protection("disk", "ops", 2.0)}))
    assert path.stat().st_mode & 0o777 == 0o600
    assert not [p for p in path.parent.iterdir() if p.name != "control.json"]  # no temp left
    again = FileControlStore(path)
    assert again.state == store.state and again.state.pin.max_nodes == 5
    # a state that does not validate: paused instead, the reason naming the field (the daemon
    # starts; tests/controller/test_control_state.py has the whole daemon)
    for bad, field in (('{"version": 1, "pause": {"reason": 3}}', "pause.reason"),
                       ('{"version": 1, "paws": null}', "paws")):
        path.write_text(bad)
        pause = FileControlStore(path).state.pause
        assert pause is not None and pause.by == "metctl" and field in pause.reason
        assert (path.parent / "control.json.invalid").read_text() == bad


# ---------------------------------------------------------------- the loop on the simulator

def _plan(delta: int):
    from types import SimpleNamespace
    return SimpleNamespace(sizing=SimpleNamespace(delta=delta), is_empty=False)


def sim_run(tmp_path, **control):
    from controller.harness import build_run

    config = default_config()
    # MET's marks and CPU rule (size_from_demand and latency_gate off): under
    # met-elasticity's 50 ms objective the default met holds throughout, and these tests need
    # plans to hold, pause and gate
    config = config.model_copy(update={
        "policy": config.policy.model_copy(update={"latency_gate": False,
                                                   "size_from_demand": False}),
        "control": ControlSettings(api_address=None, state_path=str(tmp_path / "control.json"),
                                   **control)})
    run = build_run(config, "met-elasticity.yaml")
    clock = FakeClock(at("2026-11-23T12:00:00+00:00"))  # a Monday noon
    store = FileControlStore(tmp_path / "control.json")
    run.loop.control = ControlGate(config.control, store, clock)
    return run, store, clock


def test_observe_mode_decides_but_never_acts(tmp_path):
    run, _, _ = sim_run(tmp_path, mode="observe")
    run.run(until=20 * 60)
    assert run.loop.counters.decisions >= 3
    assert run.loop.counters.plans == 0
    assert run.loop.last_hold[0].value == "observe"


def test_paused_loop_holds_with_cause_paused_then_resumes(tmp_path):
    from dataclasses import replace

    run, store, clock = sim_run(tmp_path)
    store.update(lambda s: replace(s, pause=Pause("test", "ops", clock.t, clock.t + 3600)))
    run.run(until=10 * 60)
    assert run.loop.counters.plans == 0 and run.loop.last_hold[0].value == "paused"
    clock.t += 3600  # the pause runs out
    run.run(until=20 * 60)
    assert run.loop.counters.plans >= 1


def test_outside_the_window_scale_out_still_runs(tmp_path):
    # the window is at night; it is Monday noon: scale-out (the first MET plans here) goes on
    run, _, _ = sim_run(tmp_path, windows=(MaintenanceWindow(start="02:00", end="03:00"),))
    run.run(until=60 * 60)
    submitted = [d for d in run.recorder.decisions if d.plan_id is not None]
    held = {round(t) for t, cause, _ in run.recorder.holds if cause == "window"}
    acted = [d for d in submitted if round(d.t) not in held]
    assert acted and all(d.delta > 0 for d in acted)  # only scale-out ran
    assert held  # and something else waited for the window


def test_gate_holds_scale_in_outside_the_window_not_scale_out():
    settings = ControlSettings(api_address=None,
                               windows=(MaintenanceWindow(start="02:00", end="03:00"),))
    store = type("S", (), {"state": ControlState()})()
    gate = ControlGate(settings, store, FakeClock(at("2026-11-23T12:00:00+00:00")))
    assert gate.hold(_plan(+1)) is None
    assert gate.hold(_plan(-1))[0] == "window"
    assert gate.hold(_plan(0))[0] == "window"  # reconfiguration / rebalance waits too
    gate.wall = FakeClock(at("2026-11-23T02:30:00+00:00"))
    assert gate.hold(_plan(-1)) is None


def test_pin_becomes_the_policy_bounds():
    from controller.control import Pin
    store = type("S", (), {"state": ControlState(pin=Pin(6, 6, "ops", 0.0))})()
    gate = ControlGate(ControlSettings(api_address=None), store)
    p = gate.policy(default_config().policy)
    assert (p.min_nodes, p.max_nodes) == (6, 6)


def test_token_bucket_lets_a_burst_through_then_paces():
    from controller.api import TokenBucket

    b = TokenBucket(10)
    waits = [b.take(0.0) for _ in range(13)]
    assert waits[:10] == [0.0] * 10
    assert waits[10:] == pytest.approx([0.1, 0.2, 0.3])
    assert b.take(1.0) == 0.0  # a second later the bucket has refilled


def test_api_over_its_request_rate_makes_clients_wait_not_fail(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    store = FileControlStore(tmp_path / "control.json")
    # 5 a second: the last of 30 is booked 5 s out (under the 10 s past which it would get
    # 429), however slowly a loaded machine sends them
    settings = ControlSettings(api_address="127.0.0.1:0", max_requests_per_s=5)
    server = ApiServer(settings, store, LiveStatus(), token="t", gate=ControlGate(settings, store))
    host, port = server.start()
    try:
        url = f"http://{host}:{port}/v1/status"
        with ThreadPoolExecutor(30) as pool:
            codes = list(pool.map(lambda _: requests.get(url, timeout=10).status_code, range(30)))
        assert codes == [200] * 30
        # 5 went at once; the others were booked 1/5 s apart in the server's bucket
        assert server.guard.anonymous.tokens < 0
    finally:
        server.close()


def test_run_flags_override_the_control_section():
    from controller.control_plane import with_control_overrides

    base = default_config()
    c = with_control_overrides(base, api="off", observe=True)
    assert c.control.api_address is None and c.control.mode == "observe"
    assert with_control_overrides(base, api="127.0.0.1:0").control.api_address == "127.0.0.1:0"
    assert with_control_overrides(base) is base
    with pytest.raises(BadInput, match="api_address"):
        with_control_overrides(base, api="nohost")


def test_windows_set_at_run_time_replace_the_configs_until_deleted(tmp_path):
    clock = FakeClock(at("2026-11-23T12:00:00+00:00"))  # Monday noon
    store = FileControlStore(tmp_path / "control.json")
    settings = ControlSettings(api_address="127.0.0.1:0",
                               windows=(MaintenanceWindow(start="02:00", end="03:00"),))
    gate = ControlGate(settings, store, clock)
    server = ApiServer(settings, store, LiveStatus(wall_clock=clock), token="t", gate=gate,
                       wall_clock=clock)
    host, port = server.start()
    base, auth = f"http://{host}:{port}/v1", {"Authorization": "Bearer t"}
    try:
        assert gate.hold(_plan(-1))[0] == "window"
        r = requests.put(base + "/windows", headers=auth, timeout=5, json={
            "windows": [{"days": ["mon"], "start": "11:00", "end": "13:00"}],
            "timezone": "UTC"})
        assert r.status_code == 200 and r.json()["window"]["open"] is True
        assert "run time" in r.json()["window"]["source"]
        assert gate.hold(_plan(-1)) is None
        assert FileControlStore(tmp_path / "control.json").state.windows is not None  # stored
        bad = requests.put(base + "/windows", headers=auth, timeout=5,
                           json={"windows": [{"start": "11:00"}]})
        assert bad.status_code == 400 and "end" in bad.json()["error"]
        bad = requests.put(base + "/windows", headers=auth, timeout=5,
                           json={"windows": [], "timezone": "Mars/Base"})
        assert bad.status_code == 400 and "timezone" in bad.json()["error"]
        r = requests.delete(base + "/windows", headers=auth, timeout=5)
        assert r.json()["window"]["source"] == "config"
        assert gate.hold(_plan(-1))[0] == "window"
    finally:
        server.close()


def test_nodes_protected_while_a_plan_runs_keep_their_profile(tmp_path):
    """The loop on the simulated cluster, wired as `metctl run` wires it (ControlPlane): a plan
    is submitted, then every node it would restart is protected; none restarts."""
    from dataclasses import replace

    from controller.control import Protection
    from controller.harness import build_run

    base = default_config()
    # MET as the paper writes it: its plans restart nodes into new profiles
    config = base.model_copy(update={"control": ControlSettings(
        api_address=None, state_path=str(tmp_path / "control.json")),
        "policy": base.policy.model_copy(update={"paper_faithful": True})})
    run = build_run(config, "met-elasticity.yaml", control=True)
    plane = run.daemon.plane
    assert plane is not None
    t = 0.0
    while not run.loop.executor.busy:
        t += 60
        run.run(until=t)
    plan = run.loop._plan_in_flight
    restarted = {a.node for a in plan.actions if a.op == "reconfigure"}
    assert restarted
    before = {n.server_id: n.profile for n in run.cluster.nodes if n.server_id in restarted}
    plane.store.update(lambda s: replace(s, protected={
        n: Protection("test", "ops", 0.0) for n in restarted}))
    while run.loop.executor.busy:
        t += 60
        run.run(until=t)
    after = {n.server_id: n.profile for n in run.cluster.nodes if n.server_id in restarted}
    assert after == before
    steps = run.executor.journal.load_steps(run.executor.plan_id)
    skipped = [s for s in steps if s["op"] == "reconfigure"]
    assert skipped and all(s["state"] == "skipped" and "protected" in s["note"] for s in skipped)
    plane.close()


def test_ipv6_api_address_is_logged_and_dialled_with_brackets(tmp_path, caplog):
    """Issue 24 item 14: an IPv6 API address was logged as `http://::1:19468/v1/`, which no
    client can use. The log line and the CLI's derived URL bracket the address."""
    import logging

    from controller.api_client import ApiClient

    store = FileControlStore(tmp_path / "control.json")
    settings = ControlSettings(api_address="[::1]:0", token_file=str(tmp_path / "token"))
    server = ApiServer(settings, store, LiveStatus(), token="t", gate=ControlGate(settings, store))
    with caplog.at_level(logging.INFO, logger="metctl"):
        host, port = server.start()
    try:
        line = next(r.getMessage() for r in caplog.records if "HTTP API on" in r.getMessage())
        url = line.split("HTTP API on ", 1)[1].split()[0]
        assert url == f"http://[::1]:{port}/v1/"
        assert requests.get(url + "status", timeout=10).status_code == 200
        cfg = tmp_path / "metctl.yaml"
        cfg.write_text(f"cluster: demo\ndatastore: {{driver: sim}}\ncontrol:\n"
                       f"  api_address: '[::1]:{port}'\n  token_file: {tmp_path / 'token'}\n")
        client = ApiClient.from_options(str(cfg), None, None)
        assert client.base == f"http://[::1]:{port}"
        assert client.call("GET", "/v1/status") is not None
    finally:
        server.close()
