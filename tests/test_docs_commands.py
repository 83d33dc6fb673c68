"""Every command shown in README.md and docs/*.md still works, or says it needs a cluster.

A command is a line (backslash continuations joined) of a fenced ```sh / ```bash / ```shell
block; a block with a shell loop (`; do`) is one command. A line (or loop block) whose comment
contains `needs-cluster` is not run: it needs something this machine cannot give (your cluster,
the network, a long run) — its metctl arguments are still checked. Every other command must be:
- `metctl …` (also `.venv/bin/metctl`, `/any/bin/metctl`): arguments accepted by the CLI; `plan`
  and `validate` are really run (from the repository root) and must exit 0;
- `make TARGET`: a target of the Makefile;
- `python FILE …` (any python): FILE exists in the repository;
- `python3 -m venv DIR`, `DIR/bin/pip install .[EXTRAS]`: extras that pyproject.toml defines
  (the install itself is exercised by tests/deploy/test_install.py);
- a loop block: run with bash from the repository root (metctl on PATH), must exit 0.
Anything else fails with the line and what to do about it. Pages added to docs/ are checked too.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from controller.cli import cli

ROOT = Path(__file__).resolve().parents[1]
MARKER = "needs-cluster"
_FENCE = re.compile(r"^```(sh|bash|shell)[ \t]*\n(.*?)^```", re.S | re.M)


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def commands(page: Path) -> list[tuple[int, str]]:
    """(line number, command) for each command shown on a page."""
    text = page.read_text()
    out = []
    for m in _FENCE.finditer(text):
        start = text.count("\n", 0, m.start(2)) + 1
        body = m.group(2)
        if re.search(r";\s*do\b", body):
            out.append((start, body))
            continue
        pending, first = "", start
        for i, line in enumerate(body.splitlines()):
            if not pending:
                first = start + i
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            cmd = (pending + line).strip()
            pending = ""
            if cmd and not cmd.startswith("#"):
                out.append((first, cmd))
    return out


ALL = [(p, n, c) for p in doc_pages() for n, c in commands(p)]


def _words(cmd: str) -> list[str]:
    return shlex.split(cmd, comments=True)


def _is_metctl(word: str) -> bool:
    return word == "metctl" or word.endswith("/bin/metctl")


def _check_metctl_args(args: list[str]) -> None:
    """The CLI accepts these arguments (option names, choices, counts), without running them."""
    for stop in (">", "|", "&&"):
        if stop in args:
            args = args[:args.index(stop)]
    sub = cli.get_command(None, args[0]) if args else None
    assert sub is not None, f"no metctl command {args[:1]}"
    ctx = click.Context(sub, info_name=args[0])
    if isinstance(sub, click.Group):
        sub.make_context(args[0], list(args[1:]), resilient_parsing=True)
        return
    # parsed, not run: file paths of a cluster-only command need not exist here
    _opts, leftover, _order = sub.make_parser(ctx).parse_args(list(args[1:]))
    takes = any(isinstance(p, click.Argument) for p in sub.params)
    if leftover and not takes:
        raise click.UsageError(f"unexpected arguments {leftover}")


def _pyproject_extras() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def _make_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


@pytest.mark.parametrize("page,line,cmd", ALL, ids=[f"{p.name}:{n}" for p, n, _ in ALL])
def test_command_runs_or_is_marked(page, line, cmd, monkeypatch, tmp_path):
    where = f"{page.relative_to(ROOT)}:{line}: {cmd.splitlines()[0]!r}"
    monkeypatch.chdir(ROOT)
    if "\n" in cmd:  # a loop block
        if MARKER in cmd:
            return
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        script = cmd.replace(".venv/bin/", "")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{where}: exit {done.returncode}: {done.stderr[-500:]}"
        return
    words = _words(cmd)
    marked = MARKER in cmd
    if "&&" in words:
        words = words[:words.index("&&")]
    head = words[0]
    if _is_metctl(head):
        _check_metctl_args(words[1:])
        if not marked and words[1] in ("plan", "validate"):
            result = CliRunner().invoke(cli, words[1:], catch_exceptions=False)
            assert result.exit_code == 0, f"{where}: exit {result.exit_code}: {result.output[-500:]}"
        return
    if marked:
        return
    if head == "make":
        missing = set(words[1:]) - _make_targets()
        assert not missing, f"{where}: no Makefile target {sorted(missing)}"
    elif head == "python3" and words[1:3] == ["-m", "venv"]:
        pass
    elif head.endswith("/bin/pip") and words[1] == "install":
        for spec in words[2:]:
            m = re.fullmatch(r"\.(?:\[([\w,]+)\])?", spec)
            assert m, f"{where}: only `pip install .[extras]` runs here; mark others {MARKER}"
            unknown = set(filter(None, (m.group(1) or "").split(","))) - _pyproject_extras()
            assert not unknown, f"{where}: no extra {sorted(unknown)} in pyproject.toml"
    elif re.fullmatch(r"(.*/)?python(3(\.\d+)?)?", head) and words[1:2] == ["-m"]:
        module = words[2] if len(words) > 2 else ""
        assert module and importlib.util.find_spec(module), f"{where}: no module {module!r}"
    elif re.fullmatch(r"(.*/)?python(3(\.\d+)?)?", head):
        script = next((w for w in words[1:] if not w.startswith("-")), None)
        assert script and (ROOT / script).is_file(), f"{where}: no file {script!r}"
    else:
        pytest.fail(f"{where}: not a command this test can check; make it one, or add "
                    f"`# {MARKER}: why` to the line")


def test_every_page_is_found_and_the_marker_is_used():
    pages = {p for p, _, _ in ALL}
    assert ROOT / "README.md" in pages
    assert any(MARKER in c for _, _, c in ALL)
    # the two set-up commands stay at the very top of the README
    first = commands(ROOT / "README.md")[:2]
    assert [c.split()[:2] for _, c in first] == [["make", "run"], ["make", "test"]]


def test_the_checker_refuses_what_it_cannot_run(tmp_path):
    page = tmp_path / "x.md"
    page.write_text("```sh\ncurl http://x\nmetctl plan --bogus\n```\n")
    (n1, c1), (n2, c2) = commands(page)
    assert (n1, c1) == (2, "curl http://x")
    with pytest.raises(click.UsageError):
        _check_metctl_args(_words(c2)[1:])


def test_operations_page_commands_run_as_written(tmp_path, own_state_home):
    """What to show (issue 24): docs/operations.md's commands run as written, each one without a
    needs-cluster marker, from the repository root, after a round of the demo (`make run`'s
    built-in config, whose state the CLI finds from any directory)."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    demo = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--once", "--api", "off",
                           "--out", str(tmp_path / "out")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stderr[-2000:]
    page = ROOT / "docs" / "operations.md"
    ran = 0
    for line, cmd in commands(page):
        if MARKER in cmd:
            continue
        script = cmd.replace(".venv/bin/", "")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"docs/operations.md:{line}: {cmd!r}: exit {done.returncode}: {done.stderr[-1000:]}"
        ran += 1
    assert ran >= 2
