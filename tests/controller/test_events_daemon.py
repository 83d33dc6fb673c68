"""Events from a real `metctl run` (the simulated cluster, a real process) over HTTP: the
store at /v1/events, its stream, `metctl events`, operator commands as events, and webhooks to
real receivers on loopback — one that answers, one that stalls its socket, one that is down."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import requests

from controller.cli import main
from controller.commands.events import _parse
from tests.fixtures.daemons import MetctlDaemon
from tests.fixtures.poll import poll
from tests.fixtures.webhooks import Receiver, StalledSocket, closed_port_url

pytestmark = pytest.mark.integration
SECRET = b"webhook-secret-for-tests"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    work = tmp_path_factory.mktemp("events")
    (work / "hook-secret").write_bytes(SECRET + b"\n")
    ok, stalled = Receiver(SECRET), StalledSocket()
    down = closed_port_url()
    secret = f"secret_file: '{work / 'hook-secret'}'"
    hooks = (f"webhooks: [{{name: ok, url: '{ok.url}', {secret}}}, "
             f"{{name: stalled, url: '{stalled.url}', {secret}, timeout_s: 120, retries: 0}}, "
             f"{{name: down, url: '{down}', {secret}, kinds: [decision], retries: 2, "
             f"backoff_s: 0.05}}]")
    d = MetctlDaemon(work, "ev", control=hooks)
    try:
        poll(lambda: d.status()["last_decision"], 60, "a first decision")
        yield d, ok, stalled
    finally:
        d.kill()
        ok.close()
        stalled.close()


def events(d: MetctlDaemon, query: str = "", *, auth: bool = False) -> list[dict]:
    r = d.get("/v1/events?limit=1000" + query, headers=d.auth if auth else {})
    assert r.status_code == 200, r.text
    return r.json()["events"]


def test_decisions_plans_and_steps_are_events_in_order(setup):
    d, _, _ = setup
    got = poll(lambda: (e := events(d)) and any(x["outcome"] == "measured" for x in e) and e,
               120, "a plan to end and its effect to be measured")
    ids = [e["id"] for e in got]
    assert ids == sorted(ids)
    for e in got:
        assert {"id", "at_unix_s", "kind", "subject", "reason", "outcome"} <= e.keys()
    kinds = {e["kind"] for e in got}
    assert {"decision", "action"} <= kinds
    # a filter and a resume point, as a tool tailing them uses
    assert {e["kind"] for e in events(d, "&kind=decision")} == {"decision"}
    later = events(d, f"&after={ids[len(ids) // 2]}")
    assert later and all(e["id"] > ids[len(ids) // 2] for e in later)
    assert d.get("/v1/events?kind=nonsense").status_code == 400
    assert d.get("/v1/events?limit=0").status_code == 400


def test_an_operator_command_is_an_event_with_who_and_why(setup):
    d, _, _ = setup
    since = events(d)[-1]["id"]
    assert d.call("POST", "/v1/pause", {"reason": "disk swap", "by": "ana", "for_s": 600}).ok
    assert d.call("POST", "/v1/resume", {"by": "ana"}).ok
    cmds = events(d, f"&after={since}&kind=command", auth=True)
    assert [(c["subject"], c["outcome"]) for c in cmds] == [("pause", "accepted"),
                                                             ("resume", "accepted")]
    assert cmds[0]["reason"] == "disk swap" and cmds[0]["details"]["by"] == "ana"
    # an open read does not show what operators typed, there or quoted in hold words
    anonymous = events(d, f"&after={since}")
    assert "disk swap" not in json.dumps(anonymous) and '"ana"' not in json.dumps(anonymous)
    assert [c["reason"] for c in anonymous if c["kind"] == "command"] == ["***", ""]
    # a refused change (no token) is no command
    assert d.call("POST", "/v1/pause", {}, auth=False).status_code == 401
    assert not [e for e in events(d, f"&after={cmds[-1]['id']}&kind=command")]


def test_the_stream_resumes_after_the_last_event_seen(setup):
    d, _, _ = setup
    stored = events(d)
    start = stored[-5]["id"]
    with requests.get(d.base + "/v1/events/stream", headers={"Last-Event-ID": str(start)},
                      stream=True, timeout=30) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        got = []
        for e in _parse(r.iter_lines(decode_unicode=True)):
            got.append(e)
            if len(got) == 6:  # the four stored after `start`, then live ones
                break
    assert [e["id"] for e in got[:4]] == [e["id"] for e in stored[-4:]]
    assert got[4]["id"] > stored[-1]["id"] and got[5]["id"] > got[4]["id"]


def test_metctl_events_prints_and_follows(setup, capsys):
    d, _, _ = setup
    token = str(d.state / "token")
    assert main(["events", "--api", d.base, "--token-file", token, "--limit", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and all(len(line.split()) >= 4 for line in out)
    assert main(["events", "--api", d.base, "--kind", "bogus"]) == 2
    assert main(["events", "--api", d.base, "--format", "json", "--limit", "2",
                 "--kind", "decision"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["kind"] for x in lines] == ["decision", "decision"]
    # --follow: new events keep arriving on stdout
    p = subprocess.Popen([sys.executable, "-m", "controller.cli", "events", "--follow",
                          "--limit", "1", "--format", "json", "--api", d.base],
                         stdout=subprocess.PIPE, text=True, cwd=d.workdir)
    try:
        seen = [json.loads(p.stdout.readline()) for _ in range(4)]
    finally:
        p.kill()
        p.wait(10)
    ids = [e["id"] for e in seen]
    assert ids == sorted(ids) and len(set(ids)) == 4


def test_the_webhook_gets_every_event_once_signed(setup):
    d, ok, _ = setup
    last = events(d)[-1]["id"]
    poll(lambda: any(int(x["headers"]["X-Metctl-Delivery"]) >= last for x in ok.got()), 60,
         "the webhook to catch up")
    stored = {e["id"]: e for e in events(d)}
    got = [x for x in ok.got() if int(x["headers"]["X-Metctl-Delivery"]) <= last]
    ids = [int(x["headers"]["X-Metctl-Delivery"]) for x in got]
    assert len(ids) == len(set(ids)), "an event was delivered twice"
    assert set(ids) == {i for i in stored if i <= last} | (set(ids) - set(stored))
    assert all(x["valid"] for x in got), "a delivery without a valid signature"
    body = json.loads(got[-1]["body"])
    assert body == stored.get(body["id"], body) and got[-1]["headers"]["X-Metctl-Event"] == body["kind"]


def test_a_stalled_and_a_down_receiver_never_delay_a_decision(setup):
    """The stalled receiver holds the first delivery open (120 s deadline) and never answers;
    the down one refuses every connection. Meanwhile the daemon goes on deciding and the
    answering webhook goes on receiving."""
    d, ok, stalled = setup
    poll(lambda: stalled.accepted, 30, "a delivery to reach the stalled receiver")
    first = events(d)[-1]["id"]
    poll(lambda: len([e for e in events(d, f"&after={first}&kind=decision")]) >= 5, 120,
         "five more decisions while the stalled delivery hangs")
    assert len(stalled.accepted) == 1, "the stalled receiver got a second delivery"
    counts = {c["name"]: c for c in d.status()["webhooks"]}
    assert counts["stalled"]["delivered"] == 0 and counts["stalled"]["queued"] > 0
    down = poll(lambda: counts_of(d)["down"]["dropped"] >= 2 and counts_of(d)["down"], 60,
                "the down receiver's events retried, then dropped")
    assert down["delivered"] == 0 and down["retried"] >= 2 * down["dropped"]
    assert counts_of(d)["ok"]["delivered"] > 0
    log = d.log.read_text()
    assert "webhook down: event" in log and "dropped after 3 attempts" in log
    assert SECRET.decode() not in log and "/hook" not in log  # neither secret nor URL


def counts_of(d: MetctlDaemon) -> dict[str, dict]:
    return {c["name"]: c for c in d.status()["webhooks"]}
