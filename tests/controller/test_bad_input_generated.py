"""The bad-input contract, on generated cases rather than hand-picked ones: whatever a careless or
hostile user passes, metctl ends with exit 0 (accepted) or exit 2 and one line on stderr naming
the file or option, never a traceback, an exit 1, a hang or an unbounded read.

Three generators:
- every numeric and boolean leaf of the config, set to each value the config must refuse
  (.inf, -.inf, .nan, "0.5", true, 1e308, a 200-digit number; for booleans "yes", 1);
- every file-taking option of every command, given each hostile file (a device, a FIFO, a
  directory, a missing path, binary bytes, deep YAML, deep JSON, a 5,000-digit number, null,
  duplicate keys, a path whose content must not be echoed);
- hypothesis: random edits of valid configs, snapshots and state files.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from controller.cli import main
from tests.fixtures.bad_input_tally import OUTCOMES
from controller.config import ConfigFile
from controller.layers import ADVANCED_FIELDS, FED
from decision.policy import PolicyConfig

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_YAML = ROOT / "configs" / "examples" / "met-5-nodes.yaml"
SNAPSHOT_JSON = ROOT / "configs" / "examples" / "met-5-nodes.json"


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, argv: list[str], *names: str, kind: str) -> str:
    code, out, err = run(capsys, argv)
    OUTCOMES[f"{kind}: exit {code}"] += 1
    assert code == 2, (argv, code, err)
    assert err.startswith("metctl: ") and len(err.splitlines()) == 1, (argv, err)
    assert "Traceback" not in err
    for name in names:
        assert name in err, (argv, name, err)
    return err


# ------------------------------------------------------------------ config leaves


def leaves(model: BaseModel, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    out = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            out += leaves(value, path + (name,))
        elif isinstance(value, bool | int | float):
            out.append((path + (name,), value))
    return out


def nested(path: tuple[str, ...], value: object) -> dict:
    doc: object = value
    for key in reversed(path):
        doc = {key: doc}
    return doc  # type: ignore[return-value]


NUMBER_BAD = [float("inf"), float("-inf"), float("nan"), "0.5", True, 1e308, "9" * 200]
BOOL_BAD = ["yes", 1, "true", 0.0]
# every key of the file as written: the sections' leaves (less the internal fields one key sets)
# and the preset's internals under policy.advanced
FILE_LEAVES = [(path, default) for path, default in leaves(ConfigFile())
               if ".".join(path) not in FED] + [
    (("policy", "advanced") + path, default) for path, default in leaves(PolicyConfig())
    if path[0] in ADVANCED_FIELDS]
CONFIG_CASES = [(path, bad) for path, default in FILE_LEAVES
                for bad in (BOOL_BAD if isinstance(default, bool) else NUMBER_BAD)]


def test_there_are_many_config_cases():
    assert len(CONFIG_CASES) > 500


def named(doc: dict) -> dict:
    """A config names its cluster and data store (or validate refuses it for that first)."""
    doc.setdefault("cluster", "demo")
    doc.setdefault("datastore", {}).setdefault("driver", "sim")
    return doc


@pytest.mark.parametrize("chunk", range(8))
def test_every_config_leaf_refuses_every_bad_value(tmp_path, capsys, chunk):
    for i, (path, bad) in enumerate(CONFIG_CASES):
        if i % 8 != chunk:
            continue
        cfg = tmp_path / f"c{i}.yaml"
        if isinstance(bad, str) and bad.isdigit():  # a 200-digit number, written as a number
            cfg.write_text(yaml.safe_dump(named(nested(path, 0))).replace(" 0\n", f" {bad}\n"))
        else:
            cfg.write_text(yaml.safe_dump(named(nested(path, bad))))
        names = (str(cfg),) if isinstance(bad, str) and bad.isdigit() else (str(cfg), path[-1])
        refused(capsys, ["validate", str(cfg)], *names, kind="config leaf")


# ------------------------------------------------------------------ hostile files


def hostile_files(tmp: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    files["device"] = "/dev/zero"
    fifo = tmp / "fifo.yaml"
    os.mkfifo(fifo)
    files["fifo"] = str(fifo)
    files["directory"] = str(tmp)
    files["missing"] = str(tmp / "nope.yaml")
    (tmp / "binary.yaml").write_bytes(bytes(range(256)) * 4)
    files["binary"] = str(tmp / "binary.yaml")
    (tmp / "deep.yaml").write_text("policy: " + "[" * 25000 + "]" * 25000)
    files["deep yaml"] = str(tmp / "deep.yaml")
    (tmp / "deep.json").write_text("[" * 1000 + "]" * 1000)
    files["deep json"] = str(tmp / "deep.json")
    (tmp / "digits.yaml").write_text("step: " + "7" * 5000 + "\n")
    files["long number yaml"] = str(tmp / "digits.yaml")
    (tmp / "digits.json").write_text('{"step": ' + "7" * 5000 + "}")
    files["long number json"] = str(tmp / "digits.json")
    (tmp / "null.json").write_text("null")
    files["null"] = str(tmp / "null.json")
    (tmp / "dup.json").write_text('{"version": 1, "step": 2, "step": 3}')
    files["duplicate keys"] = str(tmp / "dup.json")
    (tmp / "secret.txt").write_text("root:x:0:0:SECRET-CONTENT:/root:/bin/bash\n")
    files["text file"] = str(tmp / "secret.txt")
    (tmp / "list.yaml").write_text("- a\n- b\n")
    files["a list"] = str(tmp / "list.yaml")
    (tmp / "nan.json").write_text('{"version": 1, "step": NaN}')
    files["NaN"] = str(tmp / "nan.json")
    (tmp / "inf.yaml").write_text("policy:\n  cpu_high: .inf\n")
    files["inf"] = str(tmp / "inf.yaml")
    return files


COMMANDS = {
    "validate": lambda f: ["validate", f],
    "plan --snapshot": lambda f: ["plan", "--snapshot", f],
    "plan --config": lambda f: ["plan", "--snapshot", str(SNAPSHOT_YAML), "--config", f],
    "plan --state": lambda f: ["plan", "--snapshot", str(SNAPSHOT_YAML), "--state", f],
    "status --config": lambda f: ["status", "--config", f],
    "status --journal": lambda f: ["status", "--journal", f],
    "simulate --config": lambda f: ["simulate", "--config", f, "--no-plots"],
    "simulate --scenario": lambda f: ["simulate", "--scenario", f, "--no-plots"],
    "run --config": lambda f: ["run", "--config", f, "--once"],
}
# Files a command accepts: a missing --state is a fresh memory. (A JSON `null` config, like an
# empty one, is refused: a config given on the command line names its cluster and data store.)
ACCEPTED = {("plan --state", "missing")}


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "files"
    d.mkdir()
    return hostile_files(d)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_hostile_files(files, command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for kind, f in sorted(files.items()):
        if (command, kind) in ACCEPTED:
            continue
        if command == "status --journal" and kind in ("deep json", "null", "inf"):
            continue  # not SQLite: covered by "binary"/"text file"; same path
        err = refused(capsys, COMMANDS[command](f), kind=f"file option ({kind})")
        assert "SECRET-CONTENT" not in err and "\x00" not in err


# ------------------------------------------------------------------ CLI numbers and lists

OPTION_CASES = [
    (["snapshot", "--interval", v], "--interval") for v in ("nan", "inf", "-inf", "1e308", "-1", "abc", "")
] + [
    (["simulate", "--seed", v, "--no-plots"], "--seed") for v in ("-1", "nan", "1e308", "2.5", "9" * 30)
] + [
    (["status", "--errors", v], "--errors") for v in ("-1", "nan", "100000")
] + [
    (["simulate", "--compare", v, "--no-plots"], "--compare") for v in ("", ",", "met,met", "nope", "met,,nope")
] + [
    (["simulate", "--out", "/proc/nope/x", "--no-plots"], "/proc/nope/x"),
    (["plan", "--snapshot", str(SNAPSHOT_YAML), "--format", "xml"], "--format"),
]


@pytest.mark.parametrize("argv,name", OPTION_CASES)
def test_cli_options_name_themselves(argv, name, capsys):
    refused(capsys, argv, name, kind="option")


# ------------------------------------------------------------------ hypothesis: random edits

VALID = {"config": (ROOT / "configs" / "met.yaml").read_text(),
         "snapshot.yaml": SNAPSHOT_YAML.read_text(),
         "snapshot.json": SNAPSHOT_JSON.read_text(),
         "state.json": '{"version": 1, "step": 2, "first_decision_done": true, "history": []}\n'}
NASTY = ["", "\x00", "\x1b[31m", "[/]", ".inf", ".nan", "1e308", "-", ":", "{", "[", "]", "}", '"',
         "'", "&a", "*a", "!!python/object:os.system", "9" * 120, "true", "null", "\n", "  ", "#",
         "<<: *a", "NaN", "Infinity"]


def mutate(text: str, edits: list[tuple[int, int, str]]) -> str:
    for pos, cut, insert in edits:
        p = pos % (len(text) + 1)
        text = text[:p] + insert + text[p + cut:]
    return text


edits = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 8),
                           st.one_of(st.sampled_from(NASTY), st.text(max_size=4))),
                 min_size=1, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(VALID)), changes=edits)
def test_random_edits_are_accepted_or_refused_in_one_line(tmp_path_factory, capsys, kind, changes):
    tmp = tmp_path_factory.mktemp("edit")
    name = {"config": "c.yaml"}.get(kind, kind)
    f = tmp / name
    f.write_bytes(mutate(VALID[kind], changes).encode("utf-8", "replace"))
    if kind == "config":
        argv = ["validate", str(f)]
    elif kind.startswith("snapshot"):
        argv = ["plan", "--snapshot", str(f), "--format", "json"]
    else:
        argv = ["plan", "--snapshot", str(SNAPSHOT_YAML), "--state", str(f), "--format", "json"]
    code, out, err = run(capsys, argv)
    OUTCOMES[f"random edit ({kind}): exit {code}"] += 1
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert err.startswith("metctl: ") and len(err.splitlines()) == 1 and str(f) in err, err
