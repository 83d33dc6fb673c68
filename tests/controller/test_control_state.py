"""The operator's control state can never brick the daemon (issue 24 item 15): every duration is
bounded at the API, and a stored state that does not validate starts the daemon paused, with a
loud warning and the bad file kept aside — never a refusal to start, never a silent reset.
Real API servers and real `metctl run` processes."""
from __future__ import annotations

import json
import time

import pytest
import requests

from controller.cli import main
from tests.fixtures.controllers import poll
from tests.fixtures.daemons import MetctlDaemon

DAY = 86400.0


@pytest.mark.parametrize("for_s", [1e15, 2.5e11, 30 * DAY + 1, 365 * DAY])
def test_a_pause_longer_than_30_days_is_400_and_nothing_is_applied(api_server, for_s):
    served = api_server()
    r = requests.post(served.base + "/v1/pause", json={"for_s": for_s}, headers=served.auth,
                      timeout=10)
    assert r.status_code == 400 and "for_s" in r.json()["error"]
    assert "2592000" in r.json()["error"] and served.store.state.pause is None


def test_a_pause_of_30_days_is_applied(api_server):
    served = api_server()
    r = requests.post(served.base + "/v1/pause", json={"for_s": 30 * DAY}, headers=served.auth,
                      timeout=10)
    assert r.status_code == 200 and r.json()["paused"] is True


def test_the_cli_exit_code_says_whether_the_server_applied_it(api_server, capsys):
    """The CLI reported an error for a pause the server applied (its rendering of a far-future
    expiry failed); now: applied is exit 0 with the date, refused is exit 2 and nothing applied."""
    served = api_server()
    args = ["--api", served.base, "--token-file", str(served.token_file)]
    assert main(["pause", "--for", "31d", *args]) == 2
    # the CLI's one line (the in-process server's log lines share stderr here)
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("metctl:")]
    assert len(err) == 1 and "for_s" in err[0]
    assert served.store.state.pause is None
    assert main(["pause", "--for", "29d", *args]) == 0
    out = capsys.readouterr().out
    assert "paused by" in out and "until 20" in out
    assert served.store.state.pause is not None


NOW = time.time()


@pytest.mark.integration
@pytest.mark.parametrize("bad", [
    # what POST /v1/pause {"for_s": 1e15} used to store: refused on restart (exit 2)
    {"version": 1, "pause": {"reason": "", "by": "x", "at_unix_s": NOW,
                             "until_unix_s": NOW + 1e15, "stop_plan": True}},
    # for_s 2.5e11: stored, then every decision failed with "year 33715 is out of range"
    {"version": 1, "pause": {"reason": "", "by": "x", "at_unix_s": NOW,
                             "until_unix_s": NOW + 1e12, "stop_plan": True}},
    # a pin that can never hold, a protection of a path
    {"version": 1, "pin": {"min_nodes": 9, "max_nodes": 3, "by": "x", "at_unix_s": NOW}},
    {"version": 1, "protected": {"../../etc/passwd": {"reason": "", "by": "x", "at_unix_s": NOW}}},
    "{not json",
], ids=["until-1e15", "until-year-33658", "pin-min-over-max", "protect-a-path", "not-json"])
def test_a_stored_state_that_does_not_validate_starts_paused_with_a_loud_warning(tmp_path, bad):
    state = tmp_path / "d-state"
    state.mkdir(mode=0o700)
    text = bad if isinstance(bad, str) else json.dumps(bad)
    (state / "control.json").write_text(text)
    d = MetctlDaemon(tmp_path, "d")
    try:
        s = d.status()
        assert s["paused"] is True and s["pause"]["until_unix_s"] is None
        assert "did not validate" in s["pause"]["reason"] and "control.json" in s["pause"]["reason"]
        warned = d.events("control.invalid_state")
        assert warned and warned[0]["level"] in ("error", "critical")
        # the bad file kept aside, the safe state stored (a second restart stays paused)
        assert (state / "control.json.invalid").read_text() == text
        assert json.loads((state / "control.json").read_text())["pause"]["by"] == "metctl"
        # decisions go on, each held because paused, none failing
        held = poll(lambda: [x for x in d.decisions(200)
                             if (x.get("hold") or {}).get("cause") == "paused"], 120,
                    "a decision held because paused")
        assert held
        assert not [x for x in d.decisions(200) if (x.get("hold") or {}).get("cause") == "error"]
        # an operator who has checked resumes, and that sticks
        assert d.call("POST", "/v1/resume", {}).status_code == 200
        assert d.status()["paused"] is False
        assert json.loads((state / "control.json").read_text())["pause"] is None
    finally:
        d.kill()
