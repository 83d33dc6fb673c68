"""Credential redaction shared by logs, error lines, the journal and everything rendered: the
same patterns everywhere, so an error body that echoes a request (an OpenStack 401 quoting the
password) never reaches stderr, a file or the terminal.

Values are masked, never words: a secret-looking key counts only as a key of its own (`password=`,
`"token": `, `OS_PASSWORD=`, `X-Auth-Token:`), not as the last part of a path or a dotted field
name (`metctl-state/api-token: the daemon's API token`, `../../etc/passwd: a mapping`,
`openstack.password: a string`), where the text after it is words, not a credential."""
from __future__ import annotations

import re

MASK = "***"

_SECRET_TEXT = (
    # key=value / key: value / "key": "value" where key names a secret. The key starts a word
    # of its own: not preceded by a path separator, a dot or another word character (so
    # `os_password` and `x-auth-token` count as wholes, `a/passwd` and `b.token` do not).
    (re.compile(r"""(?i)((?<![\w./\\-])[\w-]*?(?:pass(?:word|wd)?|secret(?:_access_key)?|token|"""
                r"""api[_-]?key|credentials?|authorization)["']?\s*[:=]\s*["']?)"""
                r"""(?:bearer\s+)?[^\s"',;&]+"""), r"\1" + MASK),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),  # AWS access key ids
    (re.compile(r"(?i)(://[^/\s:@]+:)[^@\s/]+@"), r"\1" + MASK + "@"),  # user:password@host
)


def redact(text: str) -> str:
    """`text` with anything that looks like a credential masked."""
    for pattern, repl in _SECRET_TEXT:
        text = pattern.sub(repl, text)
    return text


__all__ = ["MASK", "redact"]
