"""One daemon per state directory. Without HA, `metctl run` keeps its controls (control.json),
decision memory and journal in files that only one process may own: a second daemon on them
would never see the first one's pause, overwrite its pin, and act on the same journal. Each
directory holding them is locked (common.locking.hold, `metctl.lock` inside) for the life of
the run; a second daemon exits 2 naming the first one's PID.

With HA (`ha.zookeeper_hosts`) the controls live in ZooKeeper and leadership fences the
actions, so instances may share directories (and a journal) by design: nothing is locked.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from common.files import private_dir
from common.locking import Held, hold
from controller.errors import BadInput
from controller.control_store import default_state_path

if TYPE_CHECKING:  # the config imports the sections this module serves
    from controller.config import MetctlConfig

LOCK_NAME = "metctl.lock"


def state_directories(config: MetctlConfig, *, live: bool) -> list[Path]:
    """The directories this run writes state into (each once), when HA is off."""

    if config.ha.enabled:
        return []
    dirs = [default_state_path(config).parent]
    if config.loop.memory_path:
        dirs.append(Path(config.loop.memory_path).parent)
    journal = str(config.executor.journal_path)
    if live and journal != ":memory:" and not journal.startswith("file:"):
        dirs.append(Path(journal).parent)
    seen: dict[Path, Path] = {}
    for d in dirs:
        seen.setdefault(d.expanduser().absolute(), d.expanduser())
    return list(seen.values())


@contextlib.contextmanager
def one_daemon(config: MetctlConfig, *, live: bool) -> Iterator[None]:
    """Hold the lock of every state directory of this run, or raise BadInput (exit 2)."""
    holds = []
    try:
        for d in state_directories(config, live=live):
            try:
                private_dir(d)  # 0700: the journal, controls and decisions name hosts and people
                holds.append(hold(d / LOCK_NAME))
            except Held as err:
                who = f"metctl PID {err.pid}" if err.pid is not None else "another metctl"
                raise BadInput(str(d), "", f"a state directory no other metctl daemon uses "
                               f"({who} holds {err.path}); stop it, or give this one a "
                               "state_dir of its own") from None
            except OSError as err:
                raise BadInput(str(d), "", f"a state directory metctl can lock "
                               f"({err.strerror or type(err).__name__})") from None
        yield
    finally:
        for h in holds:
            h.release()


__all__ = ["one_daemon", "state_directories", "LOCK_NAME"]
