"""One journaled step: a plan action, or a move the executor derived from one. Its fields are
the ONE list the journal's step columns come from (`STEP_COLUMNS`)."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from actuator.executor.states import FINISHED_STEP_STATES


@dataclass
class Step:
    idx: int
    op: str
    parent: int | None = None
    node: str | None = None
    profile: str | None = None
    from_profile: str | None = None
    partition: str | None = None
    source: str | None = None  # move: the server it leaves · split: its table (daughters counted there)
    target: str | None = None
    reason: str = ""
    cause: str = ""
    state: str = "pending"  # a StepState value
    sub_state: str | None = None
    attempts: int = 0
    instance_id: str | None = None
    server_id: str | None = None
    host: str | None = None
    token: str | None = None
    called: int = 0  # 1 once the driver call of the current attempt went out
    since: float | None = None  # when the step entered its current sub-state
    started_at: float | None = None
    next_try_at: float | None = None
    finished_at: float | None = None
    error: str | None = None
    note: str | None = None

    def need(self, column: Literal["node", "partition", "target", "instance_id", "token"]) -> str:
        """A column this step's op always has by the time it is read (from its action, or set
        by the phase before): a journal edited by hand without it stops the step with this
        error, rather than a None sent to a driver."""
        value = getattr(self, column)
        if value is None:
            raise ValueError(f"step {self.idx} ({self.op}) has no {column} in the journal")
        return str(value)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STEP_STATES

    def row(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in STEP_COLUMNS}

    def describe(self) -> str:
        if self.op == "launch":
            return f"launch {self.node} ({self.profile})"
        if self.op == "reconfigure":
            return f"reconfigure {self.node} -> {self.profile}"
        if self.op == "move":
            return f"move {self.partition} -> {self.target}"
        if self.op == "split":
            return f"split {self.partition} on {self.node}"
        if self.op == "compact":
            return f"compact {self.partition}"
        return f"{self.op} {self.node}"


STEP_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Step))
# The fields a plan action carries into its step (the rest are the executor's bookkeeping).
ACTION_FIELDS: tuple[str, ...] = ("op", "node", "profile", "from_profile", "partition", "source",
                                  "target", "reason", "cause")
