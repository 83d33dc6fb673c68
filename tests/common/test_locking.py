"""common/locking.py between real processes: a held lock names its holder's PID and is free
again the moment the holder dies (even by SIGKILL); `locked` serialises read-modify-writes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from common.locking import Held, hold, locked

ROOT = Path(__file__).resolve().parents[2]


def holder(path: Path) -> subprocess.Popen:
    """Another process holding the lock on `path` until killed (it says when it has it)."""
    code = ("import sys, time; from common.locking import hold; hold(sys.argv[1]); "
            "print('held', flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_lock_names_its_holder_and_is_free_once_it_is_killed(tmp_path):
    path = tmp_path / "state" / "metctl.lock"
    proc = holder(path)
    try:
        with pytest.raises(Held) as err:
            hold(path)
        assert err.value.pid == proc.pid and str(proc.pid) in str(err.value)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    mine = hold(path)  # no stale lock left by the killed holder
    assert path.read_text().strip() == str(os.getpid())
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    mine.release()
    hold(path).release()


def test_a_lock_file_that_is_a_symlink_is_not_followed(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("keep me\n")
    (tmp_path / "metctl.lock").symlink_to(target)
    with pytest.raises(OSError):
        hold(tmp_path / "metctl.lock")
    assert target.read_text() == "keep me\n"


def test_locked_serialises_read_modify_write_across_processes(tmp_path):
    counter, lock = tmp_path / "n", tmp_path / ".lock"
    counter.write_text("0")
    code = ("import sys; from pathlib import Path; from common.locking import locked\n"
            "for _ in range(50):\n"
            "    with locked(sys.argv[2]):\n"
            "        p = Path(sys.argv[1]); p.write_text(str(int(p.read_text()) + 1))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(counter), str(lock)], cwd=ROOT)
             for _ in range(4)]
    with locked(lock):
        pass
    assert [p.wait(timeout=60) for p in procs] == [0] * 4
    assert counter.read_text() == "200"
