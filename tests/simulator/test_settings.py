"""docs/simulator.md's table of constants says what simulator/settings.py declares: every
hardware, cost and action constant, its default and its source, word for word (the same text
docs/config-reference.md is generated from)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from simulator.settings import ActionSettings, CostSettings, HardwareSettings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "simulator.md"
SECTIONS = {"hardware": HardwareSettings, "costs": CostSettings, "actions": ActionSettings}
ROW = re.compile(r"^\| `(simulator\.[a-z_]+\.[a-z_]+)` \| (.*) \|$")


def expected_rows() -> dict[str, str]:
    out = {}
    for section, model in SECTIONS.items():
        for name, field in model.model_fields.items():
            key = f"simulator.{section}.{name}"
            text = " ".join((field.description or "").split())
            out[key] = f"| `{key}` | `{json.dumps(field.default)}` | {text} |"
    return out


def test_the_constants_table_matches_the_settings():
    rows = {m.group(1): line for line in PAGE.read_text().splitlines() if (m := ROW.match(line))}
    want = expected_rows()
    missing = [want[k] for k in want if k not in rows]
    stale = [want[k] for k in want if k in rows and rows[k] != want[k]]
    extra = sorted(set(rows) - set(want))
    assert not (missing or stale or extra), (
        "docs/simulator.md, 'Constants and their sources', differs from simulator/settings.py; "
        "rows as they should read:\n" + "\n".join(missing + stale) + (f"\nno such setting: {extra}" if extra else ""))
    # in the models' order
    assert [k for k in rows] == [k for k in want]
