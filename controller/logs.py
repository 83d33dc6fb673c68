"""Structured logging: JSON lines when stderr is not a terminal, readable lines on a terminal.

`setup_logging(settings)` installs one handler on the `metctl` logger. Every record may carry
fields through `extra=` (event, plan_id, reason, op, node, …); JSON lines keep them as keys, the
human format appends them as key=value. `log_decision`, `log_hold` and `log_action` are the way
the loop reports what it decided and did, so each line carries its reason and plan id.

Credentials never reach a log: a filter masks values of fields whose names look secret
(password, secret, token, key, credential, auth) and known secret shapes in any text (AWS access
keys, `password=…`, `X-Auth-Token: …`, URLs with user:password@).
"""
from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
from datetime import datetime, timezone
from typing import IO, Any

from common.redact import MASK, redact  # shared with error lines, the journal, status
from decision.model import Plan

ROOT = "metctl"

# attributes every LogRecord has: everything else came in through `extra=`
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
_SECRET_KEY = re.compile(r"pass(word|wd)?|secret|token|credential|auth|api[_-]?key|access[_-]?key"
                         r"|private[_-]?key", re.I)


def _clean(key: str, value: Any) -> Any:
    if _SECRET_KEY.search(key) and key not in ("author",):
        return MASK
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _clean(str(k), v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(key, v) for v in value]
    return value


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a record carries (from `extra=`), credentials masked."""
    return {k: _clean(k, v) for k, v in vars(record).items()
            if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object a line: ts, level, logger, msg, then the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(
                timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": redact(record.getMessage()),
        }
        line.update(fields_of(record))
        if record.exc_info:
            line["error"] = redact(self.formatException(record.exc_info))
        return json.dumps(line, default=str, ensure_ascii=False)


class HumanFormatter(logging.Formatter):
    """`HH:MM:SS level  message  key=value …` for a person at a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        fields = fields_of(record)
        fields.pop("event", None)  # the message already says it in words
        tail = "  ".join(f"{k}={v}" for k, v in fields.items())
        line = f"{when} {record.levelname.lower():7} {redact(record.getMessage())}"
        if tail:
            line += f"  [{tail}]"
        if record.exc_info:
            line += "\n" + redact(self.formatException(record.exc_info))
        return line


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record is written, not when the handler was
    made: a CLI command run in-process (tests, an embedding program) that swaps stderr never
    leaves metctl logging into a closed stream."""

    @property
    def stream(self) -> IO[str]:
        return sys.stderr

    @stream.setter
    def stream(self, value: IO[str]) -> None:
        pass


def choose_format(log_format: str, stream: IO[str]) -> str:
    if log_format != "auto":
        return log_format
    isatty = getattr(stream, "isatty", None)
    return "human" if isatty is not None and isatty() else "json"


def setup_logging(settings: Any = None, stream: IO[str] | None = None) -> logging.Logger:
    """Install metctl's handler (replacing any earlier one from here); returns the logger.
    `settings` is a TelemetrySettings (log_format, log_level) or None for the defaults."""
    fmt = choose_format(getattr(settings, "log_format", "auto"),
                        stream if stream is not None else sys.stderr)
    logger = logging.getLogger(ROOT)
    for old in [h for h in logger.handlers if getattr(h, "_metctl", False)]:
        logger.removeHandler(old)
    handler: logging.StreamHandler = (logging.StreamHandler(stream) if stream is not None
                                      else _StderrHandler())
    setattr(handler, "_metctl", True)  # marks the handler this function installed
    handler.setFormatter(JsonFormatter() if fmt == "json" else HumanFormatter())
    logger.addHandler(handler)
    logger.setLevel(getattr(settings, "log_level", "INFO"))
    logger.propagate = False
    return logger


# ---- what the loop reports ------------------------------------------------------------------
def decision_kind(plan: Plan) -> str:
    """scale_out / scale_in / rebalance / none — the enumerated kind of a decision."""
    if plan.sizing.delta > 0:
        return "scale_out"
    if plan.sizing.delta < 0:
        return "scale_in"
    return "rebalance" if plan.actions else "none"


def log_decision(logger: logging.Logger, plan: Plan, plan_id: str | None) -> None:
    """One line per decision that makes a plan: its kind in the message, the reason once (a
    piped log is read line by line: each word says something once), sizing and actions."""
    reason = plan.reason or plan.sizing.reason
    extra: dict[str, Any] = {"event": "decision", "plan_id": plan_id, "reason": reason,
                             "policy": plan.policy, "current": plan.sizing.current,
                             "target": plan.sizing.target, "actions": len(plan.actions)}
    if plan.sizing.reason and plan.sizing.reason not in reason:
        extra["sizing_reason"] = plan.sizing.reason
    logger.info("decision: %s", decision_kind(plan), extra=extra)


def log_hold(logger: logging.Logger, reason: str, detail: str = "",
             plan_id: str | None = None, plan: Any = None) -> None:
    """A round that ends without a plan (stale metrics, cooldown, the policy's own hold …): the
    cause and its words, once; with the policy's `plan`, the size it kept."""
    extra: dict[str, Any] = {"event": "hold", "plan_id": plan_id, "reason": reason,
                             "detail": detail}
    if plan is not None:
        extra.update(policy=plan.policy, current=plan.sizing.current, target=plan.sizing.target)
    logger.info("hold: %s", reason, extra=extra)


def log_action(logger: logging.Logger, action: Any, plan_id: str | None, result: str,
               duration_s: float | None = None, error: str | None = None) -> None:
    """One line per action carried out (or failed): op, its fields, reason and plan id."""
    fields = {k: getattr(action, k, None) for k in
              ("op", "node", "profile", "from_profile", "partition", "source", "target", "cause")}
    fields = {k: v for k, v in fields.items() if v not in (None, "")}
    logger.log(
        logging.WARNING if result == "failed" else logging.INFO,
        "action %s %s: %s", fields.get("op"), result, getattr(action, "reason", ""),
        extra={"event": "action", "plan_id": plan_id, "result": result,
               "reason": getattr(action, "reason", ""), "duration_s": duration_s,
               "error": error, **fields},
    )


@contextlib.contextmanager
def log_stream(stream: IO[str]):
    """metctl's log lines go to `stream` for a while: the live view passes its console's
    stderr proxy, so a line is printed above the view, never through it (in tmux each line
    written past the view left a stale copy of the view in the scrollback)."""
    handlers = [h for h in logging.getLogger(ROOT).handlers
                if getattr(h, "_metctl", False) and isinstance(h, logging.StreamHandler)]
    old = [h.setStream(stream) for h in handlers]
    try:
        yield
    finally:
        for h, s in zip(handlers, old):
            h.setStream(s)
