"""docs/simulator.md's reference of scenario files says what simulator/scenario.py declares:
every key of a scenario, a workload, a rate schedule and a scripted launch, its default and
its description, word for word, in the models' order."""
from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel

from simulator.scenario import (
    ConstantRate, DailyRate, PointsRate, RampRate, Scenario, ScriptedLaunch, SpikeRate, StepsRate,
    Workload,
)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "simulator.md"
ROW = re.compile(r"^\| `((?:workloads|launches|scenario)[^`]*)` \| .* \|$")
NOISE = ("noise", "noise_interval_s", "noise_seed")


def _rows(prefix: str, model: type[BaseModel], skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    out = []
    for name, f in model.model_fields.items():
        if name in skip:
            continue
        default = "required" if f.is_required() else f"`{json.dumps(f.get_default(call_default_factory=True))}`"
        key = f"{prefix}{name}"
        out.append((key, f"| `{key}` | {default} | {' '.join((f.description or '').split())} |"))
    return out


def expected_rows() -> list[tuple[str, str]]:
    rows = _rows("scenario.", Scenario) + _rows("workloads[].", Workload)
    rows += _rows("workloads[].rate.", PointsRate, skip=("shape", "points"))  # the noise keys, any shape
    for model in (PointsRate, ConstantRate, RampRate, StepsRate, DailyRate, SpikeRate):
        shape = model.model_fields["shape"].annotation.__args__[0]
        rows += _rows(f"workloads[].rate (shape: {shape}).", model, skip=NOISE)
    return rows + _rows("launches[].", ScriptedLaunch)


def test_the_scenario_reference_matches_the_models():
    have = [line for line in PAGE.read_text().splitlines() if ROW.match(line)]
    want = [line for _, line in expected_rows()]
    assert have == want, ("docs/simulator.md, 'Scenario files', differs from simulator/scenario.py; "
                          "the table's rows should read:\n" + "\n".join(want))
