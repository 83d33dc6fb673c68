"""The executor package (see core.py for what it does). `from actuator.executor import Executor`
keeps working; names are loaded on first use so that the journal can import the state tables
and the step field list without an import cycle."""
from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Executor": "core", "ExecutorBusy": "core", "ExecutionStatus": "core", "PHASE_TICKS": "core",
    "Step": "step", "STEP_COLUMNS": "step",
    "PlanState": "states", "Phase": "states", "StepState": "states", "IllegalTransition": "states",
    "TIMEOUTS": "states",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'actuator.executor' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"actuator.executor.{mod}"), name)
