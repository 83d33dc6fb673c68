"""The daemon's HTTP API over real HTTP: `metctl run` on the simulated cluster (a real process,
its loop running), asked and told things the way an operator's tools would."""
from __future__ import annotations

import socket
from urllib.parse import quote
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from controller.cli import main
from tests.fixtures.controllers import poll
from tests.fixtures.daemons import MetctlDaemon, lasting_scenario


pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    # the module's tests outlast met-elasticity's hour at 240x on a quiet machine
    work = tmp_path_factory.mktemp("api")
    d = MetctlDaemon(work, "api", scenario=str(lasting_scenario(work)))
    try:
        poll(lambda: d.status()["last_decision"], 60, "a first decision")
        yield d
    finally:
        d.kill()


def cli(d: MetctlDaemon, *args: str) -> int:
    return main([*args, "--api", d.base, "--token-file", str(d.state / "api-token")])


def test_status_shows_the_live_daemon(daemon):
    s = daemon.status()
    assert s["role"] == "leader" and s["mode"] == "act"
    assert s["paused"] is False and s["pinned"] is None
    last = s["last_decision"]
    assert last["kind"] in ("scale_out", "scale_in", "rebalance", "none", "hold")
    assert s["last_snapshot_unix_s"] is not None
    # verdicts name every node with its reasons
    first = next(x for x in daemon.decisions(200)[::-1] if x.get("verdicts"))
    assert {v["verdict"] for v in first["verdicts"]} <= {"overloaded", "underloaded", "healthy",
                                                         "unknown"}
    # the token file was created owner-only
    assert (daemon.state / "api-token").stat().st_mode & 0o777 == 0o600


def test_changes_need_the_token_reads_do_not(daemon):
    assert daemon.get("/v1/status").status_code == 200
    for method, path, body in [("POST", "/v1/pause", {}), ("POST", "/v1/resume", {}),
                               ("PUT", "/v1/size", {"min": 2, "max": 3}),
                               ("DELETE", "/v1/size", None),
                               ("PUT", "/v1/nodes/rs1.sim,16020/protection", {}),
                               ("DELETE", "/v1/nodes/rs1.sim,16020/protection", None)]:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": daemon.token},
                        {"Authorization": "Basic " + daemon.token}):
            r = requests.request(method, daemon.base + path, json=body, headers=headers, timeout=10)
            assert r.status_code == 401, (method, path, headers)
            assert "bearer token" in r.json()["error"]
    assert daemon.status()["paused"] is False


@pytest.mark.parametrize("method,path,body,field", [
    ("POST", "/v1/pause", {"for_s": -5}, "for_s"),
    ("POST", "/v1/pause", {"for_s": "1h"}, "for_s"),
    ("POST", "/v1/pause", {"reason": "x", "until": 5}, "until"),
    ("POST", "/v1/pause", "{not json", "JSON"),
    ("POST", "/v1/pause", [1, 2], "a mapping"),
    ("PUT", "/v1/size", {"min": 3}, "max"),
    ("PUT", "/v1/size", {"min": 0, "max": 3}, "min"),
    ("PUT", "/v1/size", {"min": 5, "max": 3}, "min"),
    ("PUT", "/v1/nodes/rs1.sim,16020/protection", {"reason": 5}, "reason"),
])
def test_bad_bodies_are_400_naming_the_field(daemon, method, path, body, field):
    kw = {"data": body} if isinstance(body, str) else {"json": body}
    r = requests.request(method, daemon.base + path, headers=daemon.auth, timeout=10, **kw)
    assert r.status_code == 400
    error = r.json()["error"]
    assert field in error and "\n" not in error
    assert daemon.status()["paused"] is False and daemon.status()["pinned"] is None


def test_decisions_limit_and_bad_limit(daemon):
    poll(lambda: len(daemon.decisions()) >= 2, 60, "two decisions or holds")
    assert len(daemon.decisions(1)) == 1
    assert daemon.get("/v1/decisions?limit=-1").status_code == 400


def test_dry_run_plan_on_the_live_snapshot(daemon):
    r = requests.post(daemon.base + "/v1/plan", timeout=30)
    assert r.status_code == 200
    plan = r.json()
    assert {"sizing", "actions", "summary", "health"} <= plan.keys()


def test_pause_holds_decisions_and_resume_lifts_it(daemon):
    metrics = daemon.metrics_url()
    r = daemon.call("POST", "/v1/pause", {"reason": "test upgrade", "stop_plan": False})
    assert r.status_code == 200 and r.json()["paused"] is True
    since = time.time()
    assert gauge(metrics, "metctl_paused") == 1
    # decisions go on being computed and shown, each held with cause `paused`
    held = poll(lambda: [x for x in daemon.decisions(200) if x["at_unix_s"] > since
                         and (x.get("hold") or {}).get("cause") == "paused"], 120,
                "a decision held because paused")
    assert "test upgrade" in held[0]["hold"]["words"]
    assert not [x for x in daemon.decisions(200) if x["at_unix_s"] > since + 1
                and x.get("plan_id") and not x.get("hold")], "a plan was submitted while paused"
    r = daemon.call("POST", "/v1/resume", {})
    assert r.status_code == 200 and r.json()["paused"] is False
    assert gauge(metrics, "metctl_paused") == 0


def test_pin_and_protect_show_in_status_and_metrics(daemon):
    metrics = daemon.metrics_url()
    assert daemon.call("PUT", "/v1/size", {"min": 6, "max": 6}).json()["pinned"]["min"] == 6
    r = daemon.call("PUT", "/v1/nodes/rs2.sim,16020/protection", {"reason": "disk check"})
    assert r.json()["protected"]["rs2.sim,16020"]["reason"] == "disk check"
    assert gauge(metrics, "metctl_pinned") == 1 and gauge(metrics, "metctl_protected_nodes") == 1
    # the dry run honours both: never more than 6 nodes (an overloaded cluster above the pin is
    # not shrunk, nor grown), nothing restarts, drains or terminates rs2
    plan = requests.post(daemon.base + "/v1/plan", timeout=30).json()
    assert plan["sizing"]["target"] <= max(6, plan["sizing"]["current"])
    assert plan["sizing"]["target"] == 6 or plan["sizing"]["delta"] <= 0 or not plan["actions"]
    assert not [a for a in plan["actions"] if a.get("node") == "rs2.sim,16020"
                and a["op"] in ("reconfigure", "drain", "terminate")]
    daemon.call("DELETE", "/v1/size")
    daemon.call("DELETE", "/v1/nodes/rs2.sim,16020/protection")
    s = daemon.status()
    assert s["pinned"] is None and s["protected"] == {}
    assert gauge(metrics, "metctl_pinned") == 0 and gauge(metrics, "metctl_protected_nodes") == 0


def test_cli_verbs_against_the_daemon(daemon, capsys):
    assert cli(daemon, "pause", "--for", "2h", "--reason", "cli test") == 0
    assert "paused by" in capsys.readouterr().out
    assert cli(daemon, "pin", "--nodes", "6") == 0
    assert cli(daemon, "protect", "rs3.sim,16020", "--reason", "rack move") == 0
    s = daemon.status()
    assert s["paused"] and s["pinned"]["max"] == 6 and "rs3.sim,16020" in s["protected"]
    assert s["pause"]["until_unix_s"] - s["pause"]["at_unix_s"] == pytest.approx(7200)
    capsys.readouterr()
    assert cli(daemon, "explain", "--format", "json") == 0
    import json
    assert json.loads(capsys.readouterr().out)["paused"] is True
    assert cli(daemon, "explain") == 0
    assert "last decision" in capsys.readouterr().out
    assert cli(daemon, "unprotect", "rs3.sim,16020") == 0
    assert cli(daemon, "unpin") == 0
    assert cli(daemon, "resume") == 0
    s = daemon.status()
    assert not s["paused"] and s["pinned"] is None and s["protected"] == {}
    # bad input: exit 2 with one line; an unreachable daemon: exit 1
    assert cli(daemon, "pause", "--for", "-1h") == 2
    assert main(["pause", "--api", daemon.base, "--token-file", "/nonexistent/token"]) == 2
    assert main(["resume", "--api", "http://127.0.0.1:1", "--token-file", "/nonexistent"]) == 1


def test_slow_clients_are_cut_off(daemon):
    host, port = daemon.base.removeprefix("http://").split(":")
    # headers sent one byte a second: the server closes the connection (request_timeout_s: 2)
    request = b"GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Padding: " + b"a" * 40 + b"\r\n\r\n"
    assert dribble(host, int(port), request) < len(request)
    # a body sent one byte a second: cut off too (408 or closed)
    body = b'{"reason": "' + b"b" * 60 + b'"}'
    head = (b"POST /v1/pause HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + daemon.token.encode() + b"\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    assert dribble(host, int(port), head + body, fast=len(head)) < len(head + body)
    assert daemon.status()["paused"] is False  # nothing half-applied
    # and the server still answers everyone else
    assert daemon.get("/v1/status").status_code == 200


def dribble(host: str, port: int, data: bytes, fast: int = 0) -> int:
    """Send `data` (the first `fast` bytes at once, then one byte a second) until the server
    closes the connection; how many bytes went out before it did."""
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(data[:fast])
        sent = fast
        s.settimeout(1.0)
        while sent < len(data):
            try:
                chunk = s.recv(4096)
                if chunk == b"" or b"408" in chunk.split(b"\r\n")[0]:
                    return sent  # closed by the server (or told it timed out)
            except socket.timeout:
                pass
            except ConnectionError:
                return sent
            try:
                s.sendall(data[sent:sent + 1])
            except (BrokenPipeError, ConnectionError):
                return sent
            sent += 1
        return sent


def test_hundred_concurrent_status_calls_while_the_loop_runs(daemon):
    before = len(daemon.decisions(200))
    with ThreadPoolExecutor(100) as pool:
        codes = list(pool.map(lambda _: daemon.get("/v1/status").status_code, range(100)))
    assert codes == [200] * 100
    assert daemon.proc.poll() is None
    # the loop kept going: more decisions/holds came after
    poll(lambda: len(daemon.decisions(200)) > before or before >= 200, 60, "the loop to go on")


def gauge(url: str, name: str) -> float:
    for fam in text_string_to_metric_families(requests.get(url, timeout=5).text):
        if fam.name == name:
            return fam.samples[0].value
    raise AssertionError(f"no {name} in the scrape")


def test_pin_and_protect_are_checked_against_the_policy_and_the_cluster(daemon, capsys):
    """Issue 24 item 8: `pin --nodes 3 --min 2` ignored --min; a pin of 100000000000 nodes was
    accepted beyond policy.max_nodes (the daemon then planned +2 a decision towards it);
    `protect` accepted nodes that do not exist, `../../etc/passwd` and 5,000-character names; a
    window 10:00-10:00 was accepted."""
    assert cli(daemon, "pin", "--nodes", "3", "--min", "2") == 2
    assert "--nodes" in capsys.readouterr().err
    for body in ({"min": 100000000000, "max": 100000000000}, {"min": 6, "max": 101},
                 {"min": 0, "max": 4}):
        r = daemon.call("PUT", "/v1/size", body)
        assert r.status_code == 400, body
        assert "policy" in r.json()["error"] or "min" in r.json()["error"]
    assert cli(daemon, "pin", "--nodes", "100000000000") == 2
    assert "max_nodes" in capsys.readouterr().err
    assert daemon.status()["pinned"] is None
    # ("..": the URL itself resolves to another path, which no route serves)
    for node, status in (("rs99.sim,16020", (404,)), ("../../etc/passwd", (400,)),
                         ("x" * 5000, (400,)), ("..", (400, 404)), ("a b", (400,))):
        r = daemon.call("PUT", f"/v1/nodes/{quote(node, safe='')}/protection", {"reason": "r"})
        assert r.status_code in status, (node, r.text)
        assert len(r.json()["error"]) < 400 and "\n" not in r.json()["error"]
    assert cli(daemon, "protect", "rs99.sim,16020") == 2
    assert "rs99.sim,16020" in capsys.readouterr().err
    assert daemon.status()["protected"] == {}
    r = daemon.call("PUT", "/v1/windows", {"windows": [{"start": "10:00", "end": "10:00"}]})
    assert r.status_code == 400 and "start" in r.json()["error"]
    assert daemon.status()["window"]["source"] == "config"


def test_maintenance_windows_have_a_cli_verb(daemon, capsys):
    """Issue 24, friction: maintenance windows had no CLI verb (only PUT/DELETE /v1/windows)."""
    try:
        assert cli(daemon, "windows", "set", "sat,sun 00:00-24:00", "mon-fri 22:00-06:00",
                   "--timezone", "Europe/Lisbon") == 0
        w = daemon.status()["window"]
        assert w["source"].startswith("set by") and w["timezone"] == "Europe/Lisbon"
        assert [x["days"] for x in w["windows"]] == [["sat", "sun"], ["mon", "tue", "wed", "thu", "fri"]]
        assert [(x["start"], x["end"]) for x in w["windows"]] == [("00:00", "24:00"), ("22:00", "06:00")]
        capsys.readouterr()
        assert cli(daemon, "windows", "show") == 0
        assert "sat,sun 00:00-24:00; mon,tue,wed,thu,fri 22:00-06:00" in capsys.readouterr().out
        assert cli(daemon, "windows", "always") == 0
        assert daemon.status()["window"]["windows"] == []
        # a window that is none: exit 2, one line, nothing changed
        capsys.readouterr()
        assert cli(daemon, "windows", "set", "someday 25:00-26:00") == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
        assert daemon.status()["window"]["windows"] == []
    finally:
        assert cli(daemon, "windows", "clear") == 0
    assert daemon.status()["window"]["source"] == "config"


def test_a_window_is_parsed_from_an_operators_words():
    import pytest as _pytest

    from controller.commands.windows import parse_window
    from controller.errors import BadInput

    assert parse_window("daily 2:00-04:00") == {"days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                                                "start": "02:00", "end": "04:00"}
    assert parse_window("fri-mon 22:00-06:00")["days"] == ["fri", "sat", "sun", "mon"]
    for bad in ("", "sat", "funday 01:00-02:00", "sat 1-2", "sat,, 01:00-02:00"):
        with _pytest.raises(BadInput):
            parse_window(bad)
