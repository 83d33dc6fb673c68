"""Showing a Plan to people (rich tables) and to programs (stable JSON = Plan.to_dict()).

The table view reads top to bottom the way the decision was made: health per node (Stage A),
sizing (Stage B), groups and the assignment (Stage C), the ordered actions (Stage D) and the
summary. The snapshot is optional; with it the health table shows each node's metrics and the
actions name the table a partition belongs to.
"""
from __future__ import annotations

import io
import re
from collections import Counter
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from controller.json_out import plan_to_json  # noqa: F401  (re-exported: the JSON form lives there)
from decision.model import Action, ClusterSnapshot, Plan

VERDICT_STYLE = {"overloaded": "bold red", "underloaded": "yellow", "healthy": "green",
                 "unknown": "magenta"}
OP_STYLE = {"launch": "green", "terminate": "red", "drain": "red", "reconfigure": "cyan",
            "move": "blue", "compact": "magenta", "split": "yellow"}


# ---------------------------------------------------------------- escaping

# C0/C1 control characters (ESC starts ANSI sequences that would restyle or rewrite the
# operator's terminal); stored errors and ids from the cluster can carry them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Longest text shown in one table cell or line; the JSON form has all of it.
MAX_SHOWN_CHARS = 2000


def plain(value: Any, style: str = "", limit: int = MAX_SHOWN_CHARS) -> Text:
    """`value` as literal text for Rich: no markup (`rs1[/],16020` is shown as written, never
    parsed), control characters made visible, very long text cut with a note."""
    text = str(value)
    more = len(text) - limit
    if more > 0:
        text = text[:limit]
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    if more > 0:
        text += f" … ({more:,} more characters; --format json shows all)"
    return Text(text, style=style)


class PlainTable(Table):
    """A rich Table whose str cells and title are literal text (see `plain`)."""

    def __init__(self, *args: Any, title: Any = None, **kw: Any):
        super().__init__(*args, title=plain(title) if isinstance(title, str) else title, **kw)

    def add_row(self, *cells: Any, **kw: Any) -> None:
        super().add_row(*(plain(c) if isinstance(c, str) else c for c in cells), **kw)


# ---------------------------------------------------------------- tables


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x * 100:.0f}%"


def _rate(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.1f}"


def _tables_of(ids: tuple[str, ...], table_of: dict[str, str]) -> str:
    """'ycsb_a×2, ycsb_f×2' — what a node holds, by table, more readable than region hashes."""
    if not table_of:
        return ""
    counts = Counter(table_of.get(pid, "?") for pid in ids)
    return ", ".join(f"{t}×{n}" if n > 1 else t for t, n in sorted(counts.items()))


def _short(pid: str) -> str:
    # Region encoded names are 32 hex digits; 12 tell them apart on screen (the JSON has all).
    return pid if len(pid) <= 14 else pid[:12] + "…"


def _action_where(action: Action) -> str:
    if action.op == "move":
        return f"{action.source} → {action.target}"
    return action.node or ""


def _action_what(action: Action, table_of: dict[str, str]) -> str:
    if action.op == "launch":
        return f"profile {action.profile}"
    if action.op == "reconfigure":
        return f"{action.from_profile or '?'} → {action.profile}"
    part = _short(action.partition or "")
    if action.partition and action.partition in table_of:
        part = f"{table_of[action.partition]}/{part}"
    return part


# Rows per table in the summarised view of a large plan (`metctl plan --all` shows every row):
# rendering 1,000 nodes x 50,000 partitions in full took 543 s and 29 MB of text.
SUMMARY_ROWS = 40


def _more(shown: int, total: int, what: str) -> Text:
    return Text(f"… {total - shown:,} more {what} not shown (metctl plan --all shows every row; "
                "--format json has everything)", style="dim")


def plan_renderable(plan: Plan, snapshot: ClusterSnapshot | None = None, *,
                    rows: int | None = SUMMARY_ROWS) -> Group:
    """The plan as rich renderables (print with any Console). At most `rows` rows per table
    (the most loaded / least healthy first), a note counting the rest; None: every row."""
    nodes = {n.id: n for n in snapshot.nodes} if snapshot else {}
    table_of = {p.id: p.table for p in snapshot.partitions} if snapshot else {}
    hosted = Counter(p.node for p in snapshot.partitions) if snapshot else Counter()
    parts: list[Any] = []

    title = Text.assemble(("metctl plan", "bold"), f" · policy {plan.policy}")
    if snapshot is not None:
        title.append(" · snapshot taken at "
                     + snapshot.taken_at.isoformat().replace("+00:00", "Z"))
    parts.append(title)
    if plan.reason:
        parts.append(plain(plan.reason, style="italic"))
    if snapshot is not None and snapshot.missing:
        parts.append(plain("missing metrics: " + "; ".join(snapshot.missing), style="magenta"))

    # Stage A
    h = plan.health
    verdict = "healthy" if h.healthy else "unhealthy"
    health = PlainTable(title=f"Health — suboptimal {h.suboptimal:.2f} · remove "
                         f"{'yes' if h.remove else 'no'} · {verdict}",
                   box=box.SIMPLE_HEAD, title_justify="left")
    health.add_column("node")
    if nodes:
        for col in ("state", "profile"):
            health.add_column(col)
        for col in ("cpu", "io_wait", "memory", "partitions"):
            health.add_column(col, justify="right")
    health.add_column("verdict")
    health.add_column("reasons", overflow="fold")
    health_rows = list(h.nodes)
    if rows is not None and len(health_rows) > rows:  # unhealthy nodes first
        order = {"overloaded": 0, "unknown": 1, "underloaded": 2}
        health_rows = sorted(health_rows, key=lambda nh: order.get(nh.verdict, 3))[:rows]
    for nh in health_rows:
        row: list[str | Text] = [nh.node]
        if nodes:
            n = nodes.get(nh.node)
            m = n.metrics if n else None
            row += [n.state if n else "?", n.profile if n else "?",
                    _pct(m.cpu if m else None), _pct(m.io_wait if m else None),
                    _pct(m.memory if m else None), str(hosted.get(nh.node, 0))]
        row += [Text(nh.verdict, style=VERDICT_STYLE.get(nh.verdict, "")), "; ".join(nh.reasons)]
        health.add_row(*row)
    parts.append(health)
    if len(health_rows) < len(h.nodes):
        parts.append(_more(len(health_rows), len(h.nodes), "nodes"))
    if h.reason:
        parts.append(plain(h.reason))

    # Stage B
    s = plan.sizing
    parts.append(Text.assemble(
        ("\nSizing  ", "bold"), f"{s.current} → {s.target} nodes (delta {s.delta:+d}), "
        f"next step {s.step}", (f" — {s.reason}" if s.reason else "", "")))

    # Stage C
    if plan.groups:
        groups = PlainTable(title="Groups", box=box.SIMPLE_HEAD, title_justify="left")
        groups.add_column("group")
        groups.add_column("partitions", justify="right")
        groups.add_column("nodes", justify="right")
        for g in plan.groups:
            groups.add_row(g.group, str(g.partitions), str(g.nodes))
        parts.append(groups)
    if plan.assignment:
        mean = sum(a.load for a in plan.assignment) / len(plan.assignment)
        assign = PlainTable(title="Assignment", box=box.SIMPLE_HEAD, title_justify="left")
        assign.add_column("node")
        assign.add_column("profile")
        assign.add_column("partitions", justify="right")
        assign.add_column("load (req/s)", justify="right")
        assign.add_column("load / mean", justify="right")
        if table_of:
            assign.add_column("tables", overflow="fold")
        shown = list(plan.assignment)
        if rows is not None and len(shown) > rows:  # the most loaded nodes
            shown = sorted(shown, key=lambda a: -a.load)[:rows]
        for a in shown:
            row = [a.node, a.profile, str(len(a.partitions)), _rate(a.load),
                   f"{a.load / mean:.2f}" if mean > 0 else "—"]
            if table_of:
                row.append(_tables_of(a.partitions, table_of))
            assign.add_row(*row)
        parts.append(assign)
        if len(shown) < len(plan.assignment):
            parts.append(_more(len(shown), len(plan.assignment), "nodes"))

    # Stage D
    if plan.actions:
        acts = PlainTable(title=f"Actions ({len(plan.actions)}, in order)", box=box.SIMPLE_HEAD,
                     title_justify="left")
        acts.add_column("#", justify="right")
        acts.add_column("op")
        acts.add_column("node (move: from → to)")
        acts.add_column("what", overflow="fold")
        acts.add_column("reason", overflow="fold")
        n_acts = len(plan.actions) if rows is None else min(rows, len(plan.actions))
        for i, act in enumerate(plan.actions[:n_acts], 1):
            acts.add_row(str(i), Text(act.op, style=OP_STYLE.get(act.op, "")),
                         _action_where(act), _action_what(act, table_of), act.reason)
        parts.append(acts)
        if n_acts < len(plan.actions):
            counts = Counter(a.op for a in plan.actions[n_acts:])
            parts.append(_more(n_acts, len(plan.actions), "actions ("
                               + ", ".join(f"{n:,} {op}" for op, n in sorted(counts.items())) + ")"))
    else:
        parts.append(Text("\nNo actions.", style="bold"))

    total = plan.summary
    parts.append(Text.assemble(
        ("Summary  ", "bold"), f"moves {total.moves} · reconfigurations {total.reconfigurations} · "
        f"compactions {total.compactions} · "
        + (f"splits {total.splits} · " if total.splits else "")
        + f"launches {total.launches} · terminations {total.terminations} · "
        f"max_load_ratio {total.max_load_ratio:.2f}"
        + (f" · {total.moves_dropped} moves left for later (max_moves)" if total.moves_dropped
           else "")))
    return Group(*parts)


def plan_to_table(plan: Plan, snapshot: ClusterSnapshot | None = None, *, width: int = 140,
                  color: bool = False, rows: int | None = SUMMARY_ROWS) -> str:
    """The readable form as text (ANSI colours only when `color`)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, no_color=not color,
                      color_system="auto" if color else None, highlight=False, soft_wrap=False)
    console.print(plan_renderable(plan, snapshot, rows=rows))
    return buf.getvalue()


__all__ = ["plain", "PlainTable", "plan_to_json", "plan_to_table", "plan_renderable"]
