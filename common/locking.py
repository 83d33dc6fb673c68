"""Advisory file locks (flock) between metctl processes, in two uses:

- `locked(path)`: wait for the lock around a short read-modify-write of shared state (the local
  driver's node records, deploy/'s cluster.json), then release it.
- `hold(path)`: take the lock without waiting, for as long as a daemon runs, and write this
  process's PID in the lock file; a second taker gets `Held` naming that PID. The kernel
  releases the lock when the holder dies, however it dies (even SIGKILL): no stale lock file
  to clean up by hand.

Lock files are opened without following symlinks, created 0600 and closed on exec (a child a
daemon starts, e.g. a local RegionServer, never inherits its lock).
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


class Held(Exception):
    """The lock at `path` is held by another process (`pid`, None when it has not said)."""

    def __init__(self, path: Path, pid: int | None):
        self.path, self.pid = path, pid
        super().__init__(f"{path} is held by PID {pid if pid is not None else '(unknown)'}")


def _open(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return os.open(path, _FLAGS, 0o600)


@contextlib.contextmanager
def locked(path: str | Path) -> Iterator[None]:
    """Hold the exclusive lock on `path` (waiting for it) for the `with` block."""
    fd = _open(Path(path))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class Hold:
    """A lock held without waiting (see `hold`); `release()` lets it go."""

    def __init__(self, path: Path, fd: int):
        self.path, self._fd = path, fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def hold(path: str | Path) -> Hold:
    """Take the lock on `path` now, or raise Held naming the process that has it."""
    p = Path(path)
    fd = _open(p)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        finally:
            os.close(fd)
        raise Held(p, int(text) if text.isdigit() else None) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return Hold(p, fd)


__all__ = ["Held", "Hold", "hold", "locked"]
