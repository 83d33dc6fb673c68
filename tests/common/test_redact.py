"""Credential redaction (common/redact.py) masks values, never the words around them: an error
line naming a token file or a path reads as written, and a secret that is a common word is
still masked where it is a value."""
from __future__ import annotations

import pytest

from common.redact import redact
from controller.cli import main


def test_redaction_masks_values_not_words_the_401_line_reads_as_written(api_server, tmp_path,
                                                                        capsys):
    """Issue 24 item 9: "metctl-state/api-token: *** daemon's API token" — `the` was masked."""
    served = api_server()
    wrong = tmp_path / "metctl-state" / "api-token"
    wrong.parent.mkdir()
    wrong.write_text("not-the-token\n")
    assert main(["resume", "--api", served.base, "--token-file", str(wrong)]) == 2
    # (only the CLI's line: a daemon run in this process earlier may have left a log handler)
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("metctl:")]
    assert err == [f"metctl: {wrong}: the daemon's API token (401: token refused)"]


@pytest.mark.parametrize("text,masked", [
    # a secret that is a common word is still masked where it is a value
    ("password=the rest", "password=*** rest"),
    ('{"password": "the"}', '{"password": "***"}'),
    ("OS_PASSWORD=the", "OS_PASSWORD=***"),
    ("token: the", "token: ***"),
    ("X-Auth-Token: the", "X-Auth-Token: ***"),
    ("https://admin:the@keystone:5000/v3", "https://admin:***@keystone:5000/v3"),
])
def test_a_secret_that_is_a_common_word_is_masked_as_a_value(text, masked):
    assert redact(text) == masked


@pytest.mark.parametrize("text", [
    "metctl-state/api-token: the daemon's API token (401: no token file)",
    "../../etc/passwd: a mapping of keys to values, got text",
    "/etc/metctl/token: a token (one line of text), got an empty file",
    "config.yaml: infrastructure.openstack.password: a string, got 5",
    "C:/keys/secret: a readable token file",
])
def test_paths_and_field_names_are_not_masked(text):
    """Issue 24 item 21: the masker turned `../../etc/passwd` into `passwd: ***`."""
    assert redact(text) == text
