"""Where the operator's controls (pause, pin, protection: controller.control.ControlState) live.

- `FileControlStore`: without HA, one JSON file beside the decision memory, 0600, replaced
  atomically (temporary file, fsync, rename), so a crash leaves the old state or the new one.
- `ZooKeeperControlStore`: with `ha.zookeeper_hosts`, the znode `<root_znode>/<cluster>/control`,
  so every instance honours the same controls and a new leader inherits them. Its own kazoo
  client (the election's lives in controller.ha); a watch keeps a cached copy, so the loop reads
  memory, not ZooKeeper, on every iteration; changes are compare-and-set on the znode version.
  While ZooKeeper is unreachable the last state seen stays in force and changes are refused.

Both: `state` (the current ControlState, never blocks), `update(fn)` (fn: state -> new state;
returns the new state; serialised), `close()`.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TYPE_CHECKING

from common.files import write_atomic
from controller.control import ControlState, Pause
from controller.errors import BadInput
from common.documents import MAX_SMALL_BYTES, parse_json, read_bytes

if TYPE_CHECKING:  # the config imports the sections this module serves
    from controller.config import MetctlConfig

log = logging.getLogger("metctl.control")


class ControlStoreError(RuntimeError):
    """A change could not be stored (ZooKeeper unreachable, a file not writable)."""


def default_state_path(config: MetctlConfig) -> Path:
    """control.state_path, else control.json beside the decision memory (or the journal)."""
    if config.control.state_path:
        return Path(config.control.state_path)
    base = config.loop.memory_path
    if not base:
        journal = str(config.executor.journal_path)
        base = journal if journal != ":memory:" and not journal.startswith("file:") \
            else "metctl-state/memory.json"
    return Path(base).with_name("control.json")


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text` atomically, readable by its owner only (0600); its directory
    is made when missing."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, text)


def paused_instead(where: str, problem: BadInput) -> ControlState:
    """The safe state in place of a stored one that does not validate: paused until an operator
    has looked (decisions are still made and shown, each held `paused`; a plan in flight waits),
    said loudly. Never a refusal to start (one bad value would brick the daemon) and never a
    silent reset (the pin and protections it held would be dropped without a word)."""
    why = problem.line()
    log.error("the stored control state %s did not validate (%s): metctl starts PAUSED; check "
              "the pin, protections and windows, then `metctl resume`", where, why,
              extra={"event": "control.invalid_state"})
    reason = (f"metctl paused itself: the stored control state {where} did not validate "
              f"({why[:240]}); check the pin, protections and windows, then resume")
    return ControlState(pause=Pause(reason=reason[:500], by="metctl", at_unix_s=time.time()))


class FileControlStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self.state = self._read()

    def _read(self) -> ControlState:

        if not self.path.exists():
            return ControlState()
        raw = b""
        try:
            raw = read_bytes(self.path, MAX_SMALL_BYTES, "a metctl control state")
            text = raw.decode("utf-8")
            data = parse_json(text, str(self.path), "a metctl control state in JSON") \
                if text.strip() else {}
            return ControlState.from_dict(data, str(self.path))
        except UnicodeDecodeError as err:
            problem = BadInput(str(self.path), f"byte {err.start}", "UTF-8 text")
        except BadInput as err:
            problem = err
        # keep what was there for the operator, store the safe state (a restart stays paused)
        state = paused_instead(self.path.name, problem)
        try:
            write_private(self.path.with_name(self.path.name + ".invalid"), raw.decode(
                "utf-8", "replace"))
            write_private(self.path, json.dumps(state.to_dict(), indent=2) + "\n")
        except OSError as err:
            log.error("cannot store the safe control state in %s: %s", self.path, err,
                      extra={"event": "control.write_error"})
        return state

    def update(self, fn: Callable[[ControlState], ControlState]) -> ControlState:
        with self._lock:
            new = fn(self.state)
            try:
                write_private(self.path, json.dumps(new.to_dict(), indent=2) + "\n")
            except OSError as err:
                raise ControlStoreError(f"cannot write {self.path}: {err}") from err
            self.state = new
            return new

    def close(self) -> None:
        pass


class ZooKeeperControlStore:
    def __init__(self, settings: Any, cluster: str, *, client: Any = None):
        from kazoo.client import KazooClient  # noqa: PLC0415 — optional extra: metctl[ha]

        root = "" if settings.root_znode == "/" else settings.root_znode
        self.path = f"{root}/{cluster}/control"
        self._own = client is None
        self.client = client or KazooClient(hosts=settings.zookeeper_hosts,
                                            timeout=settings.session_timeout_s)
        self._lock = threading.Lock()
        self.state = ControlState()
        if self._own:
            self.client.start(timeout=settings.connect_timeout_s)
        self.client.ensure_path(self.path)
        data, _ = self.client.get(self.path)
        self.state = self._parse(data)
        self.client.DataWatch(self.path, self._on_change)

    def _parse(self, data: bytes | None) -> ControlState:

        if not data:
            return ControlState()
        where = f"zookeeper:{self.path}"
        try:
            text = data.decode("utf-8")
            return ControlState.from_dict(parse_json(text, where, "a metctl control state in "
                                                     "JSON"), where)
        except UnicodeDecodeError as err:
            problem = BadInput(where, f"byte {err.start}", "UTF-8 text")
        except BadInput as err:
            problem = err
        # every instance reads the same znode, so every one pauses alike; the first operator
        # change (resume) replaces the znode with a valid state
        return paused_instead(where, problem)

    def _on_change(self, data: bytes | None, stat: Any) -> None:
        self.state = self._parse(data)

    def update(self, fn: Callable[[ControlState], ControlState]) -> ControlState:
        from kazoo.exceptions import BadVersionError, KazooException  # noqa: PLC0415 — optional extra: metctl[ha]

        with self._lock:
            for _ in range(20):  # compare-and-set; another instance may write meanwhile
                try:
                    data, stat = self.client.get(self.path)
                    new = fn(self._parse(data))
                    self.client.set(self.path, json.dumps(new.to_dict()).encode(),
                                    version=stat.version)
                    self.state = new
                    return new
                except BadVersionError:
                    continue
                except KazooException as err:
                    raise ControlStoreError(f"ZooKeeper {self.path}: {type(err).__name__}") from err
            raise ControlStoreError(f"ZooKeeper {self.path}: too many concurrent changes")

    def close(self) -> None:
        if self._own:
            try:
                self.client.stop()
                self.client.close()
            except Exception:  # noqa: BLE001
                pass


def open_control_store(config: MetctlConfig) -> FileControlStore | ZooKeeperControlStore:
    if config.ha.enabled:
        return ZooKeeperControlStore(config.ha, config.cluster)
    return FileControlStore(default_state_path(config))


__all__ = ["FileControlStore", "ZooKeeperControlStore", "ControlStoreError", "open_control_store",
           "default_state_path", "write_private"]
