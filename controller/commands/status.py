"""`metctl status` — what the executor's journal says: the current (or latest) plan, its phase
and commit point, each action's state with attempts and errors, and the last errors.

The journal is opened read-only, so this is safe while the daemon runs. `--journal FILE` names
it; otherwise it is the config's `executor.journal_path` (`--config FILE`, or the built-in default).
"""
from __future__ import annotations

import json
import sqlite3
import sys
from typing import Any

import click

from actuator.journal import Journal, JournalError
from controller.config_files import FILE_OR_NAME, load_given_config
from controller.errors import BadInput
from controller.json_out import _finite
from controller.production import status_lines
from controller.production import status_of
from controller.render import PlainTable, plain
from rich.console import Console
from rich.text import Text

# The plan states the executor writes (actuator/journal.py's schema comment).
PLAN_STATES = ("running", "abandoning", "done", "failed", "abandoned")

_STATE_STYLE = {"done": "green", "running": "yellow", "pending": "", "failed": "bold red",
                "cancelled": "dim", "skipped": "dim", "rolled_back": "magenta"}


def gather(journal: Journal, plan_id: str | None = None, *, errors: int = 10) -> dict[str, Any]:
    """The status document (`--format json` prints it as is; its field names are stable)."""
    pid = plan_id or journal.in_flight() or journal.latest()
    doc: dict[str, Any] = {"journal": journal.path, "in_flight": journal.in_flight(),
                           "plan": None, "actions": [], "errors": [],
                           "recent_plans": journal.recent_plans(10)}
    if pid is None:
        return doc
    row = journal.load_plan(pid)
    if row is None:
        raise BadInput(journal.path, "plan", f"a plan id in this journal (no plan {pid!r})")
    plan = row["plan"]
    if row["state"] not in PLAN_STATES:  # shown as if fine before, and dropped by resume()
        raise BadInput(journal.path, f"plans.state of {pid}",
                       f"one of {', '.join(PLAN_STATES)} (got {str(row['state'])[:40]!r})")
    if not isinstance(plan, dict):
        raise BadInput(journal.path, f"plans.plan_json of {pid}", "a JSON object")
    doc["plan"] = {
        "plan_id": pid, "cluster": row["cluster"], "state": row["state"], "phase": row["phase"],
        "committed": bool(row["committed"]), "error": row["error"], "reason": plan.get("reason", ""),
        "policy": plan.get("policy"), "summary": plan.get("summary", {}),
        "created_at": row["created_at"], "updated_at": row["updated_at"],
    }
    steps = journal.load_steps(pid)
    doc["actions"] = [{k: v for k, v in s.items() if v is not None and v != ""} for s in steps]
    doc["errors"] = journal.events(pid, level="error", limit=errors)
    return doc


def _table(doc: dict[str, Any]) -> None:
    """Everything shown is literal text (`plain`): ids, errors and reasons come from the
    cluster and the journal and may hold Rich markup, ANSI escapes or megabytes."""



    console = Console(width=None if sys.stdout.isatty() else 160)
    if "leader" in doc:

        for line in status_lines(doc):
            console.print(plain(line), highlight=False)
    plan = doc["plan"]
    if plan is None:
        console.print(plain(f"journal {doc['journal']}: no plan yet"))
        return
    committed = "committed" if plan["committed"] else "not committed"
    console.print(Text.assemble(
        (f"plan {plain(plan['plan_id'], limit=200)}", "bold"),
        plain(f" ({plan['policy']}, cluster {plan['cluster']}): "
              f"{plan['state']}, phase {plan['phase']}, {committed}")))
    if plan["reason"]:
        console.print(Text.assemble("  why: ", plain(plan["reason"])))
    if plan["error"]:
        console.print(Text.assemble("  ", plain(f"stopped: {plan['error']}", style="red")))
    table = PlainTable(show_lines=False)
    for col in ("#", "op", "what", "state", "sub-state", "tries", "note / error"):
        table.add_column(col)
    for s in doc["actions"]:
        what = {
            "launch": f"{s.get('node')} ({s.get('profile')})" + (f" = {s['server_id']}" if s.get("server_id") else ""),
            "reconfigure": f"{s.get('node')}: {s.get('from_profile', '?')} -> {s.get('profile')}",
            "move": f"{s.get('partition')}: {s.get('source', '?')} -> {s.get('target')}",
            "compact": f"{s.get('partition')}",
            "split": f"{s.get('partition')} on {s.get('node')}",
        }.get(s["op"], f"{s.get('node')}" + (f" ({s['instance_id']})" if s.get("instance_id") else ""))
        idx = str(s["idx"]) if s.get("parent") is None else f"  {s['idx']}<{s['parent']}"
        op = s["op"] if s.get("parent") is None else f"{s['op']} ({s.get('cause', '')})"
        state = plain(s["state"], style=_STATE_STYLE.get(s["state"], ""))
        table.add_row(idx, op, what, state, s.get("sub_state") or "", str(s.get("attempts", 0)),
                      s.get("error") or s.get("note") or "")
    console.print(table)
    if doc["errors"]:
        console.print(Text("last errors", style="bold"))
        for e in doc["errors"]:
            where = f"step {e['idx']}: " if e.get("idx") is not None else ""
            at = e["at"] if isinstance(e["at"], int | float) else float("nan")
            console.print(plain(f"  t={at:.0f} {where}{e['message']}"))


@click.command(name="status")
@click.option("--journal", "journal_file", metavar="FILE", default=None,
              help="The executor's journal (SQLite). Default: the config's executor.journal_path.")
@click.option("--config", "config_file", metavar="FILE", default=None, type=FILE_OR_NAME,
              help="metctl config (YAML) naming the journal. Default: built-in.")
@click.option("--plan", "plan_id", metavar="ID", default=None,
              help="Show this plan instead of the one in flight (or the latest).")
@click.option("--errors", "n_errors", type=click.IntRange(0, 1000), default=10, show_default=True,
              help="How many of the last errors to show.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def command(journal_file: str | None, config_file: str | None, plan_id: str | None, n_errors: int,
            fmt: str) -> None:
    """Show the plan in flight (or the latest), each action's state and the last errors."""
    if journal_file is not None and config_file is not None:
        raise BadInput("--journal/--config", "", "one of --journal FILE or --config FILE, not both")
    config = load_given_config(config_file)
    path = journal_file
    field = ""
    if path is None:
        path = config.executor.journal_path
        field = "executor.journal_path" if config_file else ""
    try:
        journal = Journal(path, readonly=True)
    except JournalError as err:
        raise BadInput(config_file or path, field, f"an existing metctl journal ({err})") from None
    try:
        doc = gather(journal, plan_id, errors=n_errors)
    except BadInput:
        raise
    except (sqlite3.DatabaseError, TypeError, KeyError, IndexError, ValueError, AttributeError) as err:
        # A corrupted journal (malformed pages, a NULL plan_json, a dropped column, text where
        # numbers belong): name the journal, exit 2 — never a bare message and exit 1.
        raise BadInput(path, "", f"an intact metctl journal ({type(err).__name__}: "
                       f"{' '.join(str(err).split())[:200]})") from None
    finally:
        journal.close()

    doc.update(status_of(config, journal_path=path))
    if fmt == "json":
        # Strict JSON: NaN/Infinity (not JSON) become null, like `plan --format json`.
        # Streamed to stdout as it is encoded: a plan's reason can be 100 MB, and one string
        # of the whole document, then click.echo's ANSI strip over it (ensure_ascii leaves no
        # escape character to strip), cost ~0.3 s of copies.
        out = sys.stdout
        json.dump(_finite(doc), out, indent=2, sort_keys=True, allow_nan=False)
        out.write("\n")
        out.flush()
    else:
        _table(doc)
