"""Files named on the command line: a path, or a file metctl ships inside its package by name,
so an installed copy works from any directory (`--snapshot example:met-5-nodes`, `--config
config:met`, `scenario:sudden-spike`; `metctl config list` names them all); and what a config
given explicitly must say before anything runs on it.

    resolve(text)             a path as given, or the shipped file a `kind:name` names
    load_given_config(path)   the config in `path` (None: the built-in default), which must name
                              its `cluster` and `datastore.driver` (the simulator runs only when
                              asked)
    change_marks(text)        lines of a template still marked `# CHANGE` (validate warns, run
                              refuses)
    state_base / with_state_paths   (controller/state_base.py) where relative state paths
                              point: never the working directory
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from common.documents import load_document
from controller.errors import BadInput
from controller.state_base import SHIPPED, state_base, state_base_of, with_state_paths



@dataclass(frozen=True)
class Kind:
    name: str  # the prefix: example:NAME
    folder: Path
    what: str
    recursive: bool = False


KINDS = {k.name: k for k in (
    Kind("config", SHIPPED, "configs (policies, the demo, production templates)", recursive=True),
    Kind("example", SHIPPED / "examples", "example snapshots", recursive=True),
    Kind("scenario", SHIPPED / "scenarios", "simulator scenarios"),
    Kind("calibration", SHIPPED / "calibration", "calibration files (simulator.calibration, "
         "executor.calibration: the simulated hardware and costs, the executor's timeouts)"),
)}
_SUFFIXES = (".yaml", ".yml", ".json")


def shipped(kind: str) -> dict[str, Path]:
    """name -> file of every shipped file of `kind` (a name is its path in the kind's folder
    without the suffix: `met`, `production/ec2`, `replay/01-overloaded`; a name that two files
    share, met-5-nodes.yaml and .json, is the YAML one; the JSON one keeps its suffix)."""
    k = KINDS[kind]
    files = sorted(k.folder.rglob("*") if k.recursive else k.folder.glob("*"))
    out: dict[str, Path] = {}
    for f in files:
        if f.suffix not in _SUFFIXES or not f.is_file():
            continue
        rel = f.relative_to(k.folder)
        if kind == "config" and rel.parts[0] in ("examples", "scenarios", "calibration"):
            continue
        stem = str(rel.with_suffix(""))
        out[str(rel)] = f
        if stem not in out or f.suffix in (".yaml", ".yml"):
            out[stem] = f
    return out


def resolve(text: str) -> str:
    """`text` as a file path, or the shipped file it names (`kind:name`)."""
    kind, sep, name = text.partition(":")
    if not sep or kind not in KINDS or Path(text).exists():
        if not Path(text).exists():
            _suggest(text)
        return text
    files = shipped(kind)
    if name not in files:
        names = ", ".join(n for n in files if Path(n).suffix not in _SUFFIXES)
        raise BadInput(text, "", f"a shipped {kind} name: {names} (metctl config list)")
    return str(files[name])


def _suggest(text: str) -> None:
    """A missing `configs/…` path (the source tree's, run from elsewhere or an installed copy)
    that metctl ships: say the name it goes by."""
    p = Path(text)
    if "configs" not in p.parts:
        return
    rel = Path(*p.parts[p.parts.index("configs") + 1:])
    for kind in KINDS.values():
        inside = kind.folder.relative_to(SHIPPED)
        if kind.name != "config" and rel.parts[:len(inside.parts)] != inside.parts:
            continue
        name = str(rel.relative_to(inside) if kind.name != "config" else rel)
        files = shipped(kind.name)
        if name in files:
            stem = str(Path(name).with_suffix(""))
            short = stem if files.get(stem) == files[name] else name
            raise BadInput(text, "", f"an existing file (no such file here; metctl ships it: "
                           f"{kind.name}:{short})")


class FileOrName(click.ParamType):
    """A click parameter: a path, or `kind:name` of a shipped file (see `resolve`)."""

    name = "file"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        return resolve(str(value))


FILE_OR_NAME = FileOrName()


def require_named(file: str, data: Any) -> None:
    """A config given explicitly names what it runs on: an empty, comment-only or partial file
    must not quietly become the simulated demo (a truncated /etc/metctl/metctl.yaml gave a
    controller that simulated and exited 0 under systemd)."""
    expected = ("a metctl config naming its `cluster` and `datastore.driver` (hbase or "
                "cassandra; sim for the simulator)")
    if data is None:
        raise BadInput(file, "", f"{expected}; the file holds no settings")
    if not isinstance(data, dict):
        return  # the model's own error names the type
    if "cluster" not in data:
        raise BadInput(file, "cluster", f"the cluster's name ({expected})")
    store = data.get("datastore")
    if not isinstance(store, dict) or "driver" not in store:
        raise BadInput(file, "datastore.driver",
                       f"hbase, cassandra or sim (the simulator runs only when asked; {expected})")


_CHANGE_MARK = re.compile(r"#\s*CHANGE\b")


def change_marks(text: str) -> list[int]:
    """Line numbers still carrying a template's `# CHANGE` mark (configs/production/: each
    names a value of the example site an operator must set, then delete the mark)."""
    return [i for i, line in enumerate(text.splitlines(), 1) if _CHANGE_MARK.search(line)]


def refuse_unfinished(file: str, text: str) -> None:
    """`run` acts on what a config says: not on a template's example site."""
    marks = change_marks(text)
    if marks:
        raise BadInput(file, f"line {marks[0]}", f"your own value: {len(marks)} line(s) still "
                       "marked `# CHANGE` (a template's placeholders); set each and delete its "
                       "mark (metctl validate lists them)")


def load_given_config(path: str | None, *, acting: bool = False, default: Path | None = None) -> Any:
    """The config a command was given (`--config`), or `default` (a shipped file: the demo for
    `run`), or the built-in default when neither; its state paths resolved (`state_base`).
    `acting` (metctl run): a template still marked `# CHANGE` is refused too."""
    # the config models load only when a config does (metctl plan without --config: ~0.1 s)
    from controller.config import config_from, load_config  # noqa: PLC0415

    if path is None:  # load_config resolves a file's state paths; the built-in's here
        return load_config(default) if default else with_state_paths(load_config(None), state_base(None))
    doc = load_document(resolve(path))
    require_named(doc.file, doc.data)
    config = config_from(doc.data, doc.file, doc)
    if acting:  # the file was read within its bounds just above
        refuse_unfinished(doc.file, Path(doc.file).read_text(errors="replace"))
    return with_state_paths(config, state_base_of(doc.file, doc.data))


__all__ = ["SHIPPED", "KINDS", "shipped", "resolve", "FILE_OR_NAME", "require_named",
           "change_marks", "refuse_unfinished", "state_base", "state_base_of", "with_state_paths",
           "load_given_config"]
