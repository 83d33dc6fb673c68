"""Atomic file replacement, the one way metctl writes a state file: a reader (or a restart after
SIGKILL or power loss) sees the old content or the new, never half a file.

- `write_atomic(path, text)`  a temporary file in the same directory, owner-only (0600),
  fsync, os.replace, then the directory entry fsynced; temporaries a killed writer left
  behind are removed once they are old enough not to belong to a concurrent writer.
- `append_private(path, text)`  append to a log file created 0600 (tightened if metctl made it
  looser before), never through a symbolic link (OSError ELOOP).
- `private_dir(path)`  a state directory: created 0700, tightened to 0700 when this user owns
  it and others could read it.
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

# A temporary file older than this was left by a writer that was killed between mkstemp and
# os.replace (SIGKILL, power loss); younger ones may belong to a concurrent writer.
STALE_TMP_S = 600.0


def write_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) atomically, readable by its owner only (mkstemp's
    0600). The directory must exist; OSError when it cannot be written."""
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _remove_stale_temporaries(directory, p.name, keep=Path(tmp).name)
    _fsync_directory(directory)


def _remove_stale_temporaries(directory: Path, name: str, keep: str) -> None:
    now = time.time()
    for leftover in directory.glob(f".{name}.*.tmp"):
        try:
            if leftover.name != keep and now - leftover.stat().st_mtime > STALE_TMP_S:
                leftover.unlink()
        except OSError:
            pass  # gone already, or not ours to remove: never fail a write over it


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX; harmless where a directory cannot be opened)."""
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def append_private(path: str | Path, text: str) -> None:
    """Append `text` (UTF-8) to `path`, created 0600; a symbolic link at `path` is refused
    (OSError), never followed to append to, create or chmod its target."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        st = os.fstat(fd)
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.fchmod(fd, 0o600)  # made 0644 by an older metctl
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def private_dir(path: str | Path) -> Path:
    """`path` as a directory only its owner may enter: created 0700 (parents too), or
    tightened to 0700 when this user owns it and group or others have access."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = os.stat(p)
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        os.chmod(p, 0o700)
    return p


__all__ = ["write_atomic", "append_private", "private_dir", "STALE_TMP_S"]
