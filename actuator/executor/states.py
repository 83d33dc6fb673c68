"""The executor's declared states: plan, phase and step states as Enums, ONE transition table
for each (`set_state` refuses any move not in it), and ONE timeout table naming, for every
state a step may get stuck in, the `executor.*` setting that bounds it.

The work phases overlap: while a phase runs, the later work phases named in `ALONGSIDE` start
those of their steps that are ready — each op's step waits only for what `WAITS_FOR` names
(actuator/executor/ready.py checks each dependency). The phase column is the earliest phase
with work still to finish; the commit point still comes after every work phase (verify).

The journal stores the Enums' string values; docs/executor.md's state section and the journal
schema's state comments are generated from these tables (`describe_states()`), so they cannot
drift (tests/actuator/test_executor_states.py).
"""
from __future__ import annotations

import math
from enum import Enum
from typing import Any, Mapping

from actuator.settings import ExecutorSettings


class PlanState(str, Enum):
    RUNNING = "running"          # phases advance tick by tick
    ABANDONING = "abandoning"    # rolling back: partitions off the new nodes, then terminate them
    DONE = "done"
    FAILED = "failed"            # stopped at a consistent point (every partition served); the journal says why
    ABANDONED = "abandoned"      # rolled back: the nodes it launched are terminated


class Phase(str, Enum):
    PREPARE = "prepare"
    LAUNCH = "launch"
    RECONFIGURE = "reconfigure"
    SPLIT = "split"
    MOVE = "move"
    VERIFY = "verify"
    COMMITTED = "committed"
    COMPACT = "compact"
    DRAIN = "drain"
    TERMINATE = "terminate"
    FINISH = "finish"


class StepState(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"          # nothing to do any more (partition gone, server already gone)
    CANCELLED = "cancelled"      # the plan stopped or was abandoned before it finished
    FAILED = "failed"            # its attempts are used up (the plan stops or is abandoned)
    ROLLED_BACK = "rolled_back"  # a launched node terminated by the rollback


# Sub-states a running step passes through, per op (what `sub_state` may hold).
SUB_STATES: dict[str, tuple[str, ...]] = {
    "launch": ("requested", "booting", "joining", "ready", "cleanup", "rollback"),
    "reconfigure": ("evacuate", "restart", "fill"),
    "drain": ("evacuate", "decommission"),
}

PLAN_TRANSITIONS: dict[PlanState, frozenset[PlanState]] = {
    PlanState.RUNNING: frozenset({PlanState.ABANDONING, PlanState.DONE, PlanState.FAILED}),
    PlanState.ABANDONING: frozenset({PlanState.ABANDONED, PlanState.FAILED}),
    PlanState.DONE: frozenset(),
    PlanState.FAILED: frozenset(),
    PlanState.ABANDONED: frozenset(),
}

PHASE_ORDER: tuple[Phase, ...] = tuple(Phase)
# Each phase to the next; verify may send the plan back to move (the store moved a partition away).
PHASE_TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    p: frozenset({PHASE_ORDER[i + 1]} if i + 1 < len(PHASE_ORDER) else set())
    for i, p in enumerate(PHASE_ORDER)
}
PHASE_TRANSITIONS[Phase.VERIFY] = PHASE_TRANSITIONS[Phase.VERIFY] | {Phase.MOVE}

# The work phases run side by side: in every tick the current phase runs, then each later work
# phase listed here starts those of its steps that are ready (WAITS_FOR). So a scale-out plan's
# reconfigurations, splits and moves between existing nodes go on while the new VMs boot.
# A phase still begins only when the one before it is complete, so the phase order and the
# commit point (after verify, hence after every launch) are unchanged.
ALONGSIDE: dict[Phase, tuple[Phase, ...]] = {
    Phase.LAUNCH: (Phase.RECONFIGURE, Phase.SPLIT, Phase.MOVE),
    Phase.RECONFIGURE: (Phase.MOVE,),  # a split waits for every reconfigure
    Phase.SPLIT: (Phase.MOVE,),
}

# What a plan step waits for before it starts (its dependencies; each is checked by
# actuator/executor/ready.py, under the same name). Once its own phase has come, every
# dependency holds: the earlier phases are complete.
DEPENDENCIES: dict[str, str] = {
    "earlier reconfigure": "every reconfigure before it in the plan is finished (one node at a time)",
    "new nodes its partitions go to": "every new node a partition on its node is headed for "
                                      "(by a plan move or the assignment) is launched and registered",
    "reconfigures finished": "every reconfigure of the plan is finished (an evacuation or fill "
                             "may move any partition, the one to split too)",
    "target launched": "its target is an existing node, or a new node that is launched and registered",
    "ends not reconfiguring": "neither its source nor its target has a reconfigure still to finish "
                              "(that reconfigure's evacuation or fill carries the partition)",
    "partition not splitting": "its partition has no split still to finish",
}
WAITS_FOR: dict[str, tuple[str, ...]] = {
    "launch": (),
    "reconfigure": ("earlier reconfigure", "new nodes its partitions go to"),
    "split": ("reconfigures finished",),
    "move": ("target launched", "ends not reconfiguring", "partition not splitting"),
}

_S = StepState
STEP_TRANSITIONS: dict[StepState, frozenset[StepState]] = {
    _S.PENDING: frozenset({_S.RUNNING, _S.DONE, _S.SKIPPED, _S.CANCELLED, _S.FAILED, _S.ROLLED_BACK}),
    # back to pending: a failed attempt waits for its back-off
    _S.RUNNING: frozenset({_S.PENDING, _S.DONE, _S.SKIPPED, _S.CANCELLED, _S.FAILED, _S.ROLLED_BACK}),
    # done -> pending: verify found the move undone; done -> rolled_back: a launched node rolled back
    _S.DONE: frozenset({_S.PENDING, _S.ROLLED_BACK}),
    _S.SKIPPED: frozenset(),
    _S.CANCELLED: frozenset(),
    _S.FAILED: frozenset(),
    _S.ROLLED_BACK: frozenset(),
}
FINISHED_STEP_STATES: frozenset[str] = frozenset(
    s.value for s in (_S.DONE, _S.SKIPPED, _S.CANCELLED, _S.FAILED, _S.ROLLED_BACK))
IN_FLIGHT_PLAN_STATES: tuple[str, ...] = (PlanState.RUNNING.value, PlanState.ABANDONING.value)

# (op, sub_state or the step state) -> the executor.* setting bounding how long a step may stay
# there; the only timeouts there are (drivers start an operation and return; none waits).
TIMEOUTS: dict[tuple[str, str], str] = {
    ("launch", "requested"): "requested_timeout_s",
    ("launch", "booting"): "booting_timeout_s",
    ("launch", "joining"): "joining_timeout_s",
    ("reconfigure", "restart"): "restart_timeout_s",
    ("split", "running"): "split_timeout_s",
    ("move", "running"): "move_timeout_s",
    ("compact", "running"): "compaction_timeout_s",
    ("drain", "decommission"): "drain_timeout_s",
    ("terminate", "running"): "terminate_timeout_s",
}


class IllegalTransition(RuntimeError):
    """A state change the tables do not allow: a bug in the executor, never a cluster condition."""


def set_state(kind: str, old: str | None, new: str) -> None:
    """Refuse a move the transition table of `kind` (plan | phase | step) does not allow.
    Staying in the same state is not a move."""
    tables: dict[str, tuple[type[Enum], Mapping[Any, frozenset[Any]]]] = {
        "plan": (PlanState, PLAN_TRANSITIONS), "phase": (Phase, PHASE_TRANSITIONS),
        "step": (StepState, STEP_TRANSITIONS)}
    enum, table = tables[kind]
    try:
        target = enum(new)
    except ValueError:
        raise IllegalTransition(f"{kind} state {new!r} is not one of {[e.value for e in enum]}") from None
    if old is None or old == new:
        return
    if target not in table[enum(old)]:
        raise IllegalTransition(f"{kind}: {old} -> {new} is not a declared transition")


def timeout_s(settings: Any, op: str, state: str | None) -> float | None:
    """The limit on (op, state) from the timeout table, or None when that state has none."""
    field = TIMEOUTS.get((op, state or ""))
    return float(getattr(settings, field)) if field else None


def limit_s(settings: Any, op: str, state: str | None) -> float:
    """timeout_s, infinite where the table has none: how long a step may stay there."""
    limit = timeout_s(settings, op, state)
    return math.inf if limit is None else limit


def states_comment(enum: type[Enum]) -> str:
    """'a | b | c' for a journal schema comment."""
    return " | ".join(e.value for e in enum)


def _table(title: str, table: Mapping[Any, frozenset[Any]], order: tuple[Any, ...],
           alongside: Mapping[Any, tuple[Any, ...]] | None = None) -> list[str]:
    extra = alongside is not None
    rows = [f"### {title}", "", "| from | may become |" + (" also starts the ready steps of |" if extra else ""),
            "|---|---|" + ("---|" if extra else "")]
    for s in order:
        nxt = [n.value for n in order if n in table[s]]
        row = f"| `{s.value}` | {', '.join(f'`{n}`' for n in nxt) or '(final)'} |"
        if extra:
            row += f" {', '.join(f'`{p.value}`' for p in (alongside or {}).get(s, ())) or '-'} |"
        rows.append(row)
    return rows + [""]


def describe_states() -> str:
    """The markdown of docs/executor.md's generated section (between its markers)."""
    out = _table("Plan states", PLAN_TRANSITIONS, tuple(PlanState))
    out += _table("Phases", PHASE_TRANSITIONS, PHASE_ORDER, ALONGSIDE)
    out += ["### What a plan step waits for", "", "| op | starts once |", "|---|---|"]
    out += [f"| `{op}` | {'; '.join(DEPENDENCIES[d] for d in deps) or 'at once'} |"
            for op, deps in WAITS_FOR.items()]
    out += [""]
    out += _table("Step states", STEP_TRANSITIONS, tuple(StepState))
    out += ["### Sub-states of a running step", "", "| op | sub-states |", "|---|---|"]
    out += [f"| `{op}` | {', '.join(f'`{s}`' for s in subs)} |" for op, subs in SUB_STATES.items()]
    out += ["", "### Timeouts (the only ones; drivers never wait)", "",
            "The table's values are a calibration file's, `timeouts_s: {op: {state: seconds}}`: "
            "the shipped one (configs/calibration/executor.yaml, the column below) unless "
            "`executor.calibration: FILE` names another; a key written in the config "
            "(`executor.booting_timeout_s`) wins over the file.", "",
            "| op | state | bounded by | shipped, s |", "|---|---|---|---|"]
    shipped = ExecutorSettings()
    out += [f"| `{op}` | `{st}` | `executor.{field}` | {getattr(shipped, field):g} |"
            for (op, st), field in TIMEOUTS.items()]
    return "\n".join(out) + "\n"


BEGIN, END = "<!-- states: generated, do not edit -->", "<!-- end of generated states -->"


def render_doc(doc: str) -> str:
    """`doc` (docs/executor.md) with its generated section replaced by describe_states()."""
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{describe_states()}{END}{tail}"


if __name__ == "__main__":  # rewrite docs/executor.md's generated section
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "docs" / "executor.md"
    path.write_text(render_doc(path.read_text()))
