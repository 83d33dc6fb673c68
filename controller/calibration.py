"""Calibration files: the measured constants a config points at instead of writing them inline
(issue 26 item 4). `simulator.calibration`: the simulated node's hardware, what each operation
costs it and how long each elasticity action takes; `executor.calibration`: the executor's
timeout table (how long a step may stay in each state).

A constant's layers, lowest first: the shipped calibration (configs/calibration/*.yaml: the
models' defaults, each with its source, generated from simulator/settings.py and
actuator/settings.py so the two cannot disagree), the operator's calibration file, the key
written inline in the config (it wins). `bench/calibrate_hbase.py` writes a simulator
calibration file of what it measured.

    python -m controller.calibration            # rewrite configs/calibration/*.yaml
    python -m controller.calibration --check    # exit 1 if they are out of date
"""
from __future__ import annotations

import argparse
import copy
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from actuator.executor.states import TIMEOUTS
from actuator.settings import ExecutorSettings
from common.documents import Document, parse_json, parse_yaml, read_text
from common.errors import BadInput
from common.models import parse_model
from controller.state_base import SHIPPED
from simulator.settings import ActionSettings, CostSettings, HardwareSettings

FOLDER = SHIPPED / "calibration"
# A calibration file holds a few dozen numbers; anything this large is not one.
MAX_CALIBRATION_BYTES = 1 << 20
_STRICT = ConfigDict(extra="forbid", frozen=True)


class SimulatorCalibration(BaseModel):
    """A simulator calibration file: any of the `simulator:` section's measured constants (a
    key left out keeps the shipped value)."""

    model_config = _STRICT

    hardware: HardwareSettings = HardwareSettings()
    costs: CostSettings = CostSettings()
    actions: ActionSettings = ActionSettings()


# Constants of the simulator that are one setting with a config key elsewhere
# (controller.layers.FED): a calibration file naming them says where they are set.
_NOT_CALIBRATION = {("actions", "sender_mb_s"): "datastore.move_mb_s in the config (the rate a "
                    "move's data travels: the policy and the executor read it too)"}


def _timeout_table() -> tuple[type[BaseModel], dict[tuple[str, str], str]]:
    """The executor's timeout table as a file model: `op: {state: seconds}`, each entry with
    the `executor.*` setting's constraints, default and description."""
    by_op: dict[str, dict[str, Any]] = {}
    for (op, state), name in TIMEOUTS.items():
        by_op.setdefault(op, {})[state] = (float, copy.copy(ExecutorSettings.model_fields[name]))
    ops: dict[str, Any] = {}
    for op, states in by_op.items():
        model = create_model(f"{op.title()}Timeouts", __config__=_STRICT, **states)
        ops[op] = (model, model())
    return create_model("TimeoutTable", __config__=_STRICT, **ops), dict(TIMEOUTS)


TimeoutTable, _TIMEOUT_KEYS = _timeout_table()
ExecutorCalibration: type[BaseModel] = create_model(
    "ExecutorCalibration", __config__=_STRICT, __doc__="An executor calibration file: its "
    "timeout table (an entry left out keeps the shipped value).",
    timeouts_s=(TimeoutTable, TimeoutTable()))


@dataclass(frozen=True)
class Kind:
    """One section's calibration file: its model, and how the file's values become the
    section's keys."""

    section: str
    model: type[BaseModel]
    to_section: Callable[[dict[str, Any]], dict[str, Any]]
    what: str


def _simulator_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {k: dict(v) for k, v in data.items() if isinstance(v, dict)}


def _executor_keys(data: dict[str, Any]) -> dict[str, Any]:
    table = data.get("timeouts_s") or {}
    return {name: table[op][state] for (op, state), name in _TIMEOUT_KEYS.items()
            if isinstance(table.get(op), dict) and state in table[op]}


KINDS = {k.section: k for k in (
    Kind("simulator", SimulatorCalibration, _simulator_keys,
         "the simulated node's hardware, operation costs and action times"),
    Kind("executor", ExecutorCalibration, _executor_keys, "the executor's timeout table"),
)}


def calibrated(key: str) -> bool:
    """Whether a calibration file sets the config key `key` (`simulator.costs.get_cpu_ms`)."""
    section, _, rest = key.partition(".")
    if section == "simulator":
        part, _, name = rest.partition(".")
        return part in SimulatorCalibration.model_fields and bool(name) \
            and (part, name) not in _NOT_CALIBRATION
    return section == "executor" and rest in _TIMEOUT_KEYS.values()


def shipped_file(section: str) -> Path:
    return FOLDER / f"{section}.yaml"


def kind_of(data: Any) -> str | None:
    """The section whose calibration file `data` (a parsed document) is, if it is one: a
    mapping of that file's keys only (a config names its cluster)."""
    if not isinstance(data, dict) or not data or "cluster" in data:
        return None
    for section, kind in KINDS.items():
        if set(data) <= set(kind.model.model_fields):
            return section
    return None


def where(given: str, config_file: str | None) -> Path:
    """The file `given` names: `calibration:NAME` a shipped one, a relative path is taken from
    the config file's directory (never the one metctl runs in)."""
    if given.startswith("calibration:"):
        return FOLDER / f"{given.removeprefix('calibration:')}.yaml"
    path = Path(given).expanduser()
    if path.is_absolute() or config_file is None:
        return path
    return Path(config_file).resolve().parent / path


def _read(section: str, path: str | Path) -> Document:
    """The calibration file `path` of `section` (simulator | executor), validated: one BadInput
    line naming the file, the field (with its line) and what was expected."""
    file = str(path)
    text = read_text(path, MAX_CALIBRATION_BYTES, f"a {section} calibration file")
    doc = Document(file, parse_json(text, file)) if file.lower().endswith(".json") \
        else parse_yaml(text, file)
    parse_model(KINDS[section].model, doc.data, file, doc)
    for (part, key), instead in _NOT_CALIBRATION.items():
        if section == "simulator" and key in ((doc.data or {}).get(part) or {}):
            line = doc.line_of([part, key])
            raise BadInput(file, f"{part}.{key}" + (f" (line {line})" if line else ""),
                           f"no calibration key: {instead}")
    return doc


def load(section: str, path: str | Path) -> BaseModel:
    """The calibration file `path` of `section`, validated (see _read), as its model: every
    constant, the shipped value where the file sets none."""
    return KINDS[section].model.model_validate(_read(section, path).data or {})


def section_values(section: str, path: str | Path) -> dict[str, Any]:
    """The `section:` keys the calibration file `path` sets, as written (validated with the
    rest of the config once merged)."""
    return KINDS[section].to_section(_read(section, path).data or {})


def _under(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """`top` over `base`, mapping by mapping (a key written in `top` wins)."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _under(out[key], value)
        else:
            out[key] = value
    return out


def apply(data: Any, config_file: str, document: Document | None = None) -> Any:
    """The config document `data` with the calibration file each section names merged under
    the keys the section writes itself; `calibration` becomes the file's absolute path."""
    if not isinstance(data, dict):
        return data
    out = data
    for section in KINDS:
        node = data.get(section)
        if not isinstance(node, dict) or node.get("calibration") is None:
            continue
        given = node["calibration"]
        line = document.line_of([section, "calibration"]) if document is not None else None
        field = f"{section}.calibration" + (f" (line {line})" if line else "")
        if not isinstance(given, str) or not given:
            raise BadInput(config_file, field, f"the path of a calibration file ({KINDS[section].what}) "
                           "or calibration:NAME of a shipped one")
        path = where(given, config_file)
        if not path.exists():
            raise BadInput(config_file, field, f"a calibration file that exists (no such file: {path})")
        merged = _under(section_values(section, path), {k: v for k, v in node.items()
                                                        if k != "calibration"})
        merged["calibration"] = str(path.resolve())
        out = {**out, section: merged}
    return out


# ---------------------------------------------------------------- the shipped files

_HEADERS = {
    "simulator": """\
# The simulator's calibration: one simulated server's hardware, what each operation costs it,
# how long each elasticity action takes. Every value with its source (papers/ and
# /work/shared/REAL-COMPONENTS.md) or marked an assumption.
#
{sources}
#
# These are the values metctl uses when a config names no calibration file. To calibrate your
# own: copy this file, change what you measured (a key left out keeps the value here), and point
# the config at it: `simulator.calibration: my-cluster.yaml` (a relative path is read from the
# config file's directory). A key written inline under `simulator:` in the config wins over the
# file. `make calibrate-hbase` writes one of a local HBase (out/calibrate-hbase/calibration.yaml).
# The rate a move's data travels (the simulated sender) is `datastore.move_mb_s` in the config.
#
# Generated by `python -m controller.calibration` from simulator/settings.py: do not edit here.
""",
    "executor": """\
# The executor's timeout table: for each operation (launch, move, ...) and each state one of
# its steps may wait in, how many seconds it may stay there before the attempt counts as failed
# (actuator/executor/states.py, TIMEOUTS; docs/executor.md).
#
# These are the values metctl uses when a config names no calibration file. To use your own
# (a slow cloud's boot, a large cluster's moves): copy this file, change what you measured (an
# entry left out keeps the value here), and point the config at it:
# `executor.calibration: my-cloud.yaml` (a relative path is read from the config file's
# directory). A timeout written inline in the config (`executor.booting_timeout_s`) wins.
#
# Generated by `python -m controller.calibration` from actuator/settings.py: do not edit here.
""",
}


def _sources() -> str:
    """simulator/settings.py's key to the sources its descriptions cite, as comment lines."""
    doc = sys.modules[HardwareSettings.__module__].__doc__ or ""
    cited = doc[doc.index("Sources cited"):].strip() if "Sources cited" in doc else ""
    return "\n".join(f"# {line}".rstrip() for line in cited.splitlines())


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width=96 - len(indent), initial_indent=indent + "# ",
                         subsequent_indent=indent + "# ", break_on_hyphens=False)


def _number(value: Any) -> str:
    return repr(value)


def render(section: str) -> str:
    """The shipped calibration file of `section`, from the models' defaults and descriptions."""
    out = [_HEADERS[section].replace("{sources}", _sources())]
    if section == "simulator":
        for part, model in SimulatorCalibration.model_fields.items():
            sub: Any = model.annotation
            out.append(f"{part}:  # {(sub.__doc__ or '').strip()}")
            for name, info in sub.model_fields.items():
                if (part, name) in _NOT_CALIBRATION:
                    continue
                out += _comment(info.description or "", "  ")
                out.append(f"  {name}: {_number(info.default)}")
            out.append("")
    else:
        out.append("timeouts_s:")
        for op, info in TimeoutTable.model_fields.items():
            out.append(f"  {op}:")
            sub = info.annotation
            assert sub is not None
            for state, entry in sub.model_fields.items():
                setting = _TIMEOUT_KEYS[(op, state)]
                out += _comment(f"{entry.description} (executor.{setting})", "    ")
                out.append(f"    {state}: {_number(entry.default)}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


__all__ = ["SimulatorCalibration", "ExecutorCalibration", "TimeoutTable", "KINDS", "apply", "calibrated", "kind_of",
           "load", "section_values", "where", "render", "shipped_file", "MAX_CALIBRATION_BYTES"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for section in KINDS:
        path, text = shipped_file(section), render(section)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    for path in stale:
        print(f"{path} is out of date: run python -m controller.calibration", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
