"""What `metctl run` leaves on disk is private and goes where it is meant to (issue 24 item 21):
the state directory 0700, decisions.jsonl 0600, no file followed through a symbolic link, a
token file others can read said loudly. A real daemon on the simulated cluster."""
from __future__ import annotations

import os
import stat

import pytest

from tests.fixtures.controllers import poll
from tests.fixtures.daemons import MetctlDaemon

pytestmark = pytest.mark.integration


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_state_directory_and_every_file_in_it_are_private(tmp_path):
    """decisions.jsonl was 0644 and the state directory 0755 (an old one is tightened too)."""
    state = tmp_path / "d-state"
    state.mkdir(mode=0o755)
    state.chmod(0o755)
    d = MetctlDaemon(tmp_path, "d")
    try:
        poll(lambda: (state / "decisions.jsonl").exists(), 60, "a decision recorded")
        assert d.call("POST", "/v1/pause", {"reason": "r"}).status_code == 200
        poll(lambda: (state / "memory.json").exists(), 60, "the decision memory written")
    finally:
        d.kill()
    assert mode(state) == 0o700
    files = {p.name: mode(p) for p in state.iterdir() if p.is_file()}
    assert {"decisions.jsonl", "control.json", "api-token", "memory.json"} <= files.keys()
    assert {n: m for n, m in files.items() if m & 0o077} == {}, files


def test_decisions_jsonl_is_not_followed_through_a_symbolic_link(tmp_path):
    """decisions.jsonl followed symlinks: appending to (and creating) the link's target."""
    state = tmp_path / "d-state"
    state.mkdir(mode=0o700)
    target = tmp_path / "elsewhere.txt"
    target.write_text("not metctl's\n")
    target.chmod(0o644)
    (state / "decisions.jsonl").symlink_to(target)
    d = MetctlDaemon(tmp_path, "d")
    try:
        poll(lambda: d.decisions(), 60, "a decision")
        said = poll(lambda: d.events("control.decision_log_unwritable"), 30,
                    "the refusal said in the log")
        assert "symbolic link" in said[0]["msg"]
        assert d.proc.poll() is None  # the daemon goes on
    finally:
        d.kill()
    assert target.read_text() == "not metctl's\n" and mode(target) == 0o644


def test_a_token_file_others_can_read_is_said_loudly(tmp_path):
    """A pre-existing 0644 token file was used without a word."""
    state = tmp_path / "d-state"
    state.mkdir(mode=0o700)
    (state / "api-token").write_text("an-old-token-of-mine\n")
    (state / "api-token").chmod(0o644)
    d = MetctlDaemon(tmp_path, "d")
    try:
        warned = poll(lambda: d.events("api.token_exposed"), 30, "the warning")
        assert warned[0]["level"] == "warning" and "0644" in warned[0]["msg"]
        assert "an-old-token" not in warned[0]["msg"]
        assert d.token == "an-old-token-of-mine"  # still the operator's token: it works
        assert d.call("POST", "/v1/resume", {}).status_code == 200
    finally:
        d.kill()
