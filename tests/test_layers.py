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


PRODUCT = ("common", "decision", "profiles", "monitor", "actuator", "simulator", "controller")


def module_imports() -> dict[str, set[str]]:
    """Each product module -> the product modules it imports, anywhere in it (a lazy import
    inside a function too; an import under `if TYPE_CHECKING:` is for the type checker only)."""
    modules = {}
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        deps = set()
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            deps |= {t for t in targets if t in modules and t != name}
        graph[name] = deps
    return graph


def test_no_two_modules_import_each_other_even_through_others():
    """A circle of imports between modules (e.g. moves -> protection -> moves) works only as long
    as one side imports lazily; one moved import line turns it into an ImportError at start.
    A package importing its own modules (its __init__) is no circle."""
    graph = module_imports()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                members.append(w)
                if w == v:
                    break
            inner = {m for m in members
                     if not any(o.startswith(m + ".") for o in members if o != m)}
            if len(members) > 1 and len(inner) > 1:
                circles.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, f"modules that import each other: {circles}"
