"""A local cluster's state file (W/cluster.json): read freely, changed only under an flock on
W/.lock (the tests, the CLI and a process driver's exec-rs may change it at once), written
whole to a temporary file and renamed, so a reader never sees half a file."""
from __future__ import annotations

import contextlib
import fcntl
import json
import time
from pathlib import Path
from typing import Any, Callable, Iterator


class StateFile:
    def __init__(self, path: Path, empty: Callable[[], dict[str, Any]]):
        self.path = path
        self.empty = empty  # the state of a cluster never started

    def read(self) -> dict[str, Any]:
        if self.path.exists():
            return json.loads(self.path.read_text())
        return self.empty()

    @contextlib.contextmanager
    def locked(self) -> Iterator[dict[str, Any]]:
        """Read-modify-write: the state as it is now; what the caller changed is written back
        when the block ends without an error."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self.read()
            yield state
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(state, indent=2))
            tmp.replace(self.path)


@contextlib.contextmanager
def held(lock_path: str | None, held_s: list[float] | None = None) -> Iterator[None]:
    """The machine-wide lock around one run of a long bench (`flock` on `lock_path`; nothing
    when None), so other clusters run between runs instead of waiting for the whole bench.
    The seconds held are appended to `held_s`."""
    if not lock_path:
        yield
        return
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        t0 = time.monotonic()
        try:
            yield
        finally:
            if held_s is not None:
                held_s.append(time.monotonic() - t0)
            fcntl.flock(lock, fcntl.LOCK_UN)
