"""The packages import in one direction only (DESIGN: the decision core is pure; drivers are
adapters; the controller wires them): a layer that reaches up makes a cycle that a later change
turns into an import error or a hidden dependency. Read from the source with ast, so a lazy
import inside a function counts too."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("common", "decision", "profiles", "monitor", "actuator", "simulator", "controller",
        "bench", "tests", "deploy")

# what each package may import of ours (besides itself)
ALLOWED = {
    "common": set(),
    "decision": {"common", "profiles"},
    "profiles": {"common", "decision"},
    "monitor": {"common", "decision"},
    "actuator": {"common", "decision", "profiles", "monitor"},
    "simulator": {"common", "decision", "profiles", "monitor", "actuator"},
    "controller": {"common", "decision", "profiles", "monitor", "actuator", "simulator"},
    "bench": {"common", "decision", "profiles", "monitor", "actuator", "simulator", "controller",
              "deploy"},
}
# A layer may reach these modules of a package it may not import otherwise: the executor
# benches run on the test doubles.
ALSO = {"bench": {"tests.fakes"}}


def imported_packages(path: Path, also: set[str] = frozenset()) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {n.split(".")[0] for n in names if n.split(".")[0] in OURS
                  and not any(n == m or n.startswith(m + ".") for m in also)}
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_the_layers_below_it(package):
    wrong = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_packages(path, ALSO.get(package, set())) - ALLOWED[package] - {package}
        if bad:
            wrong[str(path.relative_to(ROOT))] = sorted(bad)
    assert not wrong, f"{package}/ reaches into layers above it: {wrong}"
