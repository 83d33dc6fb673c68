"""The decision memory file: what `metctl plan --state FILE` (and the daemon) carry between
decisions — MET Algorithm 1's `step`, whether the first decision was made, policy history.

Read it when it exists (a missing file is the fresh memory of a new controller); write it
atomically (common.files.write_atomic: a temporary file, fsync, os.replace; the directory is created
if needed), so a crash leaves the old memory or the new one, never half of either. A corrupt file is BadInput, never a reset:
silently forgetting `step` would change the next scaling decision.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from common.files import write_atomic
from common.documents import MAX_SMALL_BYTES, parse_json, read_text
from common.models import parse_model
from controller.errors import BadInput
from decision.model import DecisionMemory, memory_to_dict

STATE_VERSION: Literal[1] = 1


class MemoryFile(BaseModel):
    """The on-disk form: DecisionMemory's fields plus a format version."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    version: Literal[1] = Field(STATE_VERSION, description="Format of this file.")
    step: StrictInt = Field(1, ge=1, description="Nodes the next MET scale-out adds (Algorithm 1).")
    first_decision_done: StrictBool = Field(
        False, description="The first decision reaching Stage B (reconfigure only) was made.")
    history: list[tuple[Annotated[StrictStr, Field(min_length=1)], StrictFloat]] = Field(
        default_factory=list, description="Policy-private history, e.g. tiramola's cpu samples.")


def read_memory(path: str | Path) -> DecisionMemory:
    """The memory in `path`, or a fresh DecisionMemory when the file does not exist."""
    file = str(path)
    p = Path(path)
    if not p.exists():
        return DecisionMemory()
    text = read_text(p, MAX_SMALL_BYTES, "a metctl state file")
    if not text.strip():
        raise BadInput(file, "", "a metctl state file (JSON), got an empty file")
    data = parse_json(text, file, "a metctl state file in JSON", nan_to_model=True)
    if not isinstance(data, dict):  # `null` would otherwise validate as the fresh memory
        raise BadInput(file, "", "a metctl state file (a JSON mapping of version, step, ...), "
                       f"got {type(data).__name__ if data is not None else 'null'}")
    model = parse_model(MemoryFile, data, file)
    return DecisionMemory(step=model.step, first_decision_done=model.first_decision_done,
                          history=tuple((k, float(v)) for k, v in model.history))


def write_memory(path: str | Path, memory: DecisionMemory) -> None:
    """Replace `path` with `memory` atomically (common.files.write_atomic)."""
    file = str(path)
    p = Path(path)
    directory = p.parent if str(p.parent) else Path(".")
    try:
        # The daemon's default (loop.memory_path) sits in a directory of its own: make it.
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as err:
        raise BadInput(file, "", "a path whose directory can be created "
                       f"({err.strerror or err})") from None
    text = json.dumps({"version": STATE_VERSION, **memory_to_dict(memory)}, indent=2,
                      allow_nan=False) + "\n"
    if not os.access(directory, os.W_OK | os.X_OK):
        raise BadInput(file, "", "a writable directory (Permission denied)")
    write_atomic(p, text)  # a failed replace leaves the old file (OSError)


__all__ = ["MemoryFile", "read_memory", "write_memory", "STATE_VERSION"]
