"""The config reference is generated from the models and the committed file matches them."""
from __future__ import annotations

from pydantic import BaseModel

from controller.config import ConfigFile
from controller.config_reference import OUTPUT, main, render
from controller.layers import ADVANCED_FIELDS, FED


def keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            out += keys(sub, f"{prefix}{name}.")
        else:
            out.append(f"{prefix}{name}")
    return out


def test_committed_reference_matches_the_models():
    assert OUTPUT.read_text() == render(), (
        "docs/config-reference.md is out of date: run `python -m controller.config_reference`")


def test_every_key_is_documented_with_its_level_default_and_meaning():
    text = render()
    file_keys = [k for k in keys(ConfigFile) if k not in FED and k != "policy.advanced"]
    for key in file_keys + [f"policy.advanced.{name}" for name in ADVANCED_FIELDS]:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{key}` |")), None)
        assert row is not None, key
        assert row.count(" | ") >= 4 and not row.rstrip().endswith("|  |"), row
        assert row.split(" | ")[1] in ("0", "1", "2 (advanced)", "cal"), row


def test_internal_fields_set_by_one_key_are_not_keys_of_the_file():
    text = render()
    key_rows = [line for line in text.splitlines() if line.count(" | ") >= 4]
    for internal in FED:
        assert not [row for row in key_rows if row.startswith(f"| `{internal}` |")], internal


def test_check_mode_reports_drift(tmp_path):
    stale = tmp_path / "ref.md"
    stale.write_text("old\n")
    assert main(["--check", "--output", str(stale)]) == 1
    assert main(["--output", str(stale)]) == 0
    assert main(["--check", "--output", str(stale)]) == 0
