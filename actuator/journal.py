"""The executor's write-ahead journal: one SQLite file (standard library) holding every plan,
each of its steps with its state, and an event log of transitions and errors.

Parqua's phases map onto it: *prepare* journals the whole plan (every action `pending`) before
anything is touched; *execute* records each step before its driver call (intent) and after it
(acknowledged, then verified by observation); one *commit point* is a single write once the
new layout is verified; *recovery* (compactions restore locality, drains, terminations) follows
it. A controller killed between any two writes finds here everything it needs to resume.

Each public mutating method is exactly one transaction ("a journal write"); an optional
`on_write(when, number, what)` hook runs just before and just after each one — the kill-point
tests use it to SIGKILL the process at every write.
"""
from __future__ import annotations

import errno
import json
from dataclasses import fields
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from tenacity import retry, retry_if_exception, stop_after_delay, wait_fixed

from actuator.executor.states import Phase, PlanState, StepState, states_comment
from actuator.executor.step import STEP_COLUMNS, Step
from common.errors import BadInput
from common.redact import redact

PLAN_STATES_IN_FLIGHT = (PlanState.RUNNING.value, PlanState.ABANDONING.value)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS plans (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id TEXT UNIQUE NOT NULL,
    cluster TEXT NOT NULL,
    state TEXT NOT NULL,            -- {states_comment(PlanState)}
    phase TEXT NOT NULL,            -- {states_comment(Phase)}
    committed INTEGER NOT NULL DEFAULT 0,
    balancer_was_on INTEGER,        -- NULL until the balancer was switched off by this plan
    plan_json TEXT NOT NULL,        -- the plan as `metctl plan --format json` prints it
    layout_json TEXT,               -- partition -> server when the plan was prepared (for rollback)
    error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS steps (
    plan_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    parent INTEGER,
    op TEXT NOT NULL,
    node TEXT, profile TEXT, from_profile TEXT, partition TEXT, source TEXT, target TEXT,
    reason TEXT, cause TEXT,
    state TEXT NOT NULL,            -- {states_comment(StepState)}
    sub_state TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    instance_id TEXT, server_id TEXT, host TEXT, token TEXT,
    called INTEGER NOT NULL DEFAULT 0,
    since REAL, started_at REAL, next_try_at REAL, finished_at REAL,
    error TEXT, note TEXT,
    PRIMARY KEY (plan_id, idx)
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    plan_id TEXT NOT NULL,
    at REAL NOT NULL,
    level TEXT NOT NULL,            -- info | error
    idx INTEGER,
    message TEXT NOT NULL
);
"""

WriteHook = Callable[[str, int, str], None]


def _private_file(path: Path) -> None:
    """Create the journal 0600 in a 0700 directory (errors it holds may name hosts and users;
    SQLite gives its -wal and -shm files the database's mode)."""
    if not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # never through a symbolic link (the journal, or the -wal/-shm SQLite opens beside it):
    # it created, chmod-ed and wrote the link's target
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if name.is_symlink():
            raise BadInput(str(name), "", "a journal file, not a symbolic link (metctl does not "
                           "write through links)")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise BadInput(str(path), "", "a journal file, not a symbolic link (metctl does not "
                           "write through links)") from None
        raise
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o600)  # a journal made 0644 by an older metctl
    finally:
        os.close(fd)


def _redacted(fields: dict[str, Any]) -> dict[str, Any]:
    """Error texts (often a cloud API's body echoing the request) lose their credentials
    before they are journaled: `status` shows them and the file outlives the process."""
    return {k: redact(v) if k in ("error", "note") and isinstance(v, str) else v
            for k, v in fields.items()}


def _locked(err: BaseException) -> bool:
    return isinstance(err, sqlite3.OperationalError) and "locked" in str(err)


# Several controllers may open one shared journal at the same moment (HA fail-over, systemd
# restarts). Switching to WAL takes an exclusive lock that SQLite's busy timeout does not wait
# for, so the loser failed with "database is locked": wait for the other opener instead.
@retry(retry=retry_if_exception(_locked), stop=stop_after_delay(30), wait=wait_fixed(0.05),
       reraise=True)
def _prepare(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.executescript(_SCHEMA)


class JournalError(Exception):
    """The journal file is missing or is not a metctl journal."""


# What each step column may hold, from Step's annotations (the one field list): a row that
# holds anything else (a text idx, an unknown state) was not written by metctl and is refused
# by name instead of failing later inside a tick.
_COLUMN_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,), "int | None": (int, type(None)), "str": (str,), "str | None": (str, type(None)),
    "float | None": (int, float, type(None)),
}


def _check_step_row(path: str, plan_id: str, row: dict[str, Any]) -> None:
    for f in fields(Step):
        value, allowed = row.get(f.name), _COLUMN_TYPES.get(str(f.type))
        if allowed is not None and (isinstance(value, bool) or not isinstance(value, allowed)):
            raise BadInput(path, f"steps.{f.name} (plan {plan_id}, step {row.get('idx')!r})",
                           f"{f.type} as metctl writes it, got {type(value).__name__} {str(value)[:40]!r}"
                           " (the journal was changed outside metctl)")
    if row["state"] not in {s.value for s in StepState}:
        raise BadInput(path, f"steps.state (plan {plan_id}, step {row['idx']})",
                       f"one of {states_comment(StepState)}, got {str(row['state'])[:40]!r}")


def _check_plan_row(path: str, row: dict[str, Any]) -> None:
    for column, enum in (("state", PlanState), ("phase", Phase)):
        if row.get(column) not in {s.value for s in enum}:
            raise BadInput(path, f"plans.{column} (plan {row.get('plan_id')})",
                           f"one of {states_comment(enum)}, got {str(row.get(column))[:40]!r}"
                           " (the journal was changed outside metctl)")


class Journal:
    """A SQLite journal. Safe to open from another process (read-only use by `metctl status`)."""

    def __init__(self, path: str | Path, on_write: WriteHook | None = None, *, readonly: bool = False):
        """`readonly` opens an existing journal without creating or changing anything (raises
        JournalError when the file is missing or is not a metctl journal)."""
        self.path = str(path)
        self.readonly = readonly
        if readonly:
            if not Path(self.path).is_file():
                raise JournalError(f"{self.path}: no such journal file")
            self._db = sqlite3.connect(f"file:{Path(self.path).absolute()}?mode=ro", uri=True,
                                       isolation_level=None, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            try:
                tables = {r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            except sqlite3.DatabaseError as err:
                self._db.close()
                raise JournalError(f"{self.path}: not a metctl journal ({err})") from None
            if not {"plans", "steps", "events"} <= tables:
                self._db.close()
                raise JournalError(f"{self.path}: not a metctl journal (tables plans/steps/events missing)")
        else:
            if self.path != ":memory:" and not self.path.startswith("file:"):
                _private_file(Path(self.path))
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.row_factory = sqlite3.Row
            _prepare(self._db)
        self._lock = threading.Lock()
        self.on_write = on_write
        self.writes = 0  # journal writes made through this object

    def close(self) -> None:
        self._db.close()

    # -- writing -----------------------------------------------------------------------------
    def _write(self, what: str, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only")
        with self._lock:
            self.writes += 1
            if self.on_write is not None:
                self.on_write("before", self.writes, what)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in statements:
                    self._db.execute(sql, args)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            if self.on_write is not None:
                self.on_write("after", self.writes, what)

    @staticmethod
    def _event(plan_id: str, at: float, level: str, idx: int | None, message: str):
        return ("INSERT INTO events (plan_id, at, level, idx, message) VALUES (?,?,?,?,?)",
                (plan_id, at, level, idx, redact(message)))

    @staticmethod
    def _update_step(plan_id: str, idx: int, fields: Mapping[str, Any]):
        sets = ", ".join(f"{k} = ?" for k in fields)
        return (f"UPDATE steps SET {sets} WHERE plan_id = ? AND idx = ?",
                (*fields.values(), plan_id, idx))

    @staticmethod
    def _insert_step(plan_id: str, step: Mapping[str, Any]):
        cols = [c for c in STEP_COLUMNS if c in step]
        sql = (f"INSERT INTO steps (plan_id, {', '.join(cols)}) "
               f"VALUES (?, {', '.join('?' for _ in cols)})")
        return sql, (plan_id, *(step[c] for c in cols))

    def create_plan(self, plan_id: str, cluster: str, plan: Mapping[str, Any],
                    steps: Sequence[Mapping[str, Any]], now: float) -> None:
        """Prepare: the plan and all its steps, `pending`, in one write."""
        stmts = [("INSERT INTO plans (plan_id, cluster, state, phase, plan_json, created_at, updated_at) "
                  "VALUES (?,?,?,?,?,?,?)",
                  (plan_id, cluster, "running", "prepare", json.dumps(plan, sort_keys=True), now, now))]
        stmts += [self._insert_step(plan_id, s) for s in steps]
        stmts.append(self._event(plan_id, now, "info", None, f"plan journaled with {len(steps)} actions"))
        self._write(f"create plan {plan_id}", stmts)

    def update_plan(self, plan_id: str, now: float, *, event: str | None = None,
                    level: str = "info", **fields: Any) -> None:
        fields = _redacted(fields)
        sets = "".join(f"{k} = ?, " for k in fields)
        stmts = [(f"UPDATE plans SET {sets}updated_at = ? WHERE plan_id = ?",
                  (*fields.values(), now, plan_id))]
        if event:
            stmts.append(self._event(plan_id, now, level, None, event))
        self._write(f"plan {plan_id} {fields}", stmts)

    def update_step(self, plan_id: str, idx: int, now: float, *, event: str | None = None,
                    level: str = "info", **fields: Any) -> None:
        fields = _redacted(fields)
        stmts = [self._update_step(plan_id, idx, fields)] if fields else []
        if event:
            stmts.append(self._event(plan_id, now, level, idx, event))
        if stmts:
            self._write(f"step {idx} {fields}", stmts)

    def update_steps(self, plan_id: str, updates: Sequence[tuple[int, Mapping[str, Any]]],
                     now: float, *, event: str) -> None:
        """Several steps' changes and one plan event, in one write: a crash leaves all of them
        applied or none (the executor's cut_short cancels a scale-in's remaining steps so)."""
        stmts = [self._update_step(plan_id, idx, _redacted(dict(fields))) for idx, fields in updates]
        stmts.append(self._event(plan_id, now, "info", None, event))
        self._write(f"update {len(updates)} steps", stmts)

    def add_steps(self, plan_id: str, steps: list[Mapping[str, Any]], now: float, *,
                  parent_update: tuple[int, Mapping[str, Any]] | None = None,
                  updates: Sequence[tuple[int, Mapping[str, Any]]] = (),
                  event: str | None = None) -> None:
        """Derived steps (e.g. the moves evacuating a node) and their parent's new sub-state, or
        other steps' changes (`updates`: the moves an extension re-targets, cancelled), in one
        write: a crash leaves all of them applied or none."""
        changes = list(updates)
        if parent_update is not None and parent_update[1]:
            changes.insert(0, parent_update)
        stmts = [self._insert_step(plan_id, s) for s in steps]
        stmts += [self._update_step(plan_id, idx, _redacted(dict(fields))) for idx, fields in changes]
        if event:
            stmts.append(self._event(plan_id, now, "info", parent_update[0] if parent_update else None, event))
        self._write(f"add {len(steps)} steps", stmts)

    # -- reading -----------------------------------------------------------------------------
    def in_flight(self) -> str | None:
        row = self._db.execute(
            "SELECT plan_id FROM plans WHERE state IN (?, ?) ORDER BY seq DESC LIMIT 1",
            PLAN_STATES_IN_FLIGHT).fetchone()
        return row["plan_id"] if row else None

    def latest(self) -> str | None:
        row = self._db.execute("SELECT plan_id FROM plans ORDER BY seq DESC LIMIT 1").fetchone()
        return row["plan_id"] if row else None

    def plan_ids(self, limit: int = 20) -> list[str]:
        rows = self._db.execute("SELECT plan_id FROM plans ORDER BY seq DESC LIMIT ?", (limit,))
        return [r["plan_id"] for r in rows]

    def recent_plans(self, limit: int = 10) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT plan_id, state, phase, committed, error, created_at, updated_at FROM plans "
            "ORDER BY seq DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows]

    def load_plan(self, plan_id: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT * FROM plans WHERE plan_id = ?", (plan_id,)).fetchone()
        if row is None:
            return None
        out = dict(row)
        _check_plan_row(self.path, out)
        out["plan"] = json.loads(out.pop("plan_json"))
        layout = out.pop("layout_json")
        out["layout"] = json.loads(layout) if layout else {}
        return out

    def load_steps(self, plan_id: str) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT * FROM steps WHERE plan_id = ? ORDER BY idx", (plan_id,))
        out = [{k: r[k] for k in STEP_COLUMNS} for r in rows]
        for row in out:
            _check_step_row(self.path, plan_id, row)
        return out

    def events(self, plan_id: str, *, level: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        sql = "SELECT at, level, idx, message FROM events WHERE plan_id = ?"
        args: tuple[Any, ...] = (plan_id,)
        if level:
            sql += " AND level = ?"
            args += (level,)
        sql += " ORDER BY seq DESC LIMIT ?"
        rows = self._db.execute(sql, (*args, limit)).fetchall()
        return [dict(r) for r in reversed(rows)]
