"""The one bounded wait: call a predicate until it returns something truthy, or raise a
TimeoutError naming what did not happen within `timeout_s` (outside tests too, so not an
AssertionError; pytest reports it the same way). Used by the tests (through
tests/fixtures/poll.py), the benches and the local-cluster scripts in deploy/, so they all wait
the same way."""
from __future__ import annotations

import time
from typing import Callable, TypeVar

T = TypeVar("T")


def poll(predicate: Callable[[], T], timeout_s: float, what: str, every_s: float = 0.02) -> T:
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(every_s)
