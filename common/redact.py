"""Credential redaction shared by logs, error lines, the journal and everything rendered: the
same patterns everywhere, so an error body that echoes a request (an OpenStack 401 quoting the
password) never reaches stderr, a file or the terminal."""
from __future__ import annotations

import re

MASK = "***"

_SECRET_TEXT = (
    # key=value / key: value / "key": "value" where key names a secret
    (re.compile(r"""(?i)((?:pass(?:word|wd)?|secret(?:_access_key)?|token|api[_-]?key|"""
                r"""credentials?|x-auth-token|x-subject-token|authorization)["']?\s*[:=]\s*["']?)"""
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
