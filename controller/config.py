"""The metctl configuration: one model composed of the sections each package declares.

Every default lives in its section's model (with its unit and meaning); this module composes
them, loads YAML and turns validation failures into BadInput naming file, field and expectation.

It is also the one place that reads user documents (YAML or JSON) and formats validation
errors, so every command reports bad input the same way:

- `load_document(path)`           read and parse a YAML/JSON file (syntax errors with line numbers)
- `parse_model(model_cls, data, file)`  validate parsed data against a pydantic model
- `parse_file(model_cls, path)`   both, with the YAML line of the offending field in the message
- `load_config(path | None)`      the metctl config (None: the embedded default)
"""
from __future__ import annotations

import difflib
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from actuator.settings import DataStoreSettings, ExecutorSettings, InfrastructureSettings
from controller.control import ControlSettings
from controller.errors import BadInput
from controller.ha import HASettings
from controller.loop_settings import LoopSettings
from controller.telemetry import TelemetrySettings
from decision.policy import PolicyConfig
from monitor.settings import MonitorSettings
from simulator.settings import SimulatorSettings


class MetctlConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cluster: str = Field("demo", description="Cluster name; tags every node metctl launches.")
    policy: PolicyConfig = PolicyConfig()
    monitor: MonitorSettings = MonitorSettings()
    loop: LoopSettings = LoopSettings()
    infrastructure: InfrastructureSettings = InfrastructureSettings()
    datastore: DataStoreSettings = DataStoreSettings()
    executor: ExecutorSettings = ExecutorSettings()
    simulator: SimulatorSettings = SimulatorSettings()
    ha: HASettings = HASettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    control: ControlSettings = ControlSettings()


M = TypeVar("M", bound=BaseModel)

# Files larger than this are refused before parsing: a snapshot of 10,000 nodes and a million
# partitions is about 250 MB of JSON, so this only stops a wrong file (a disk image, a log).
MAX_DOCUMENT_BYTES = 1 << 30


# ---------------------------------------------------------------- reading documents


@dataclass(frozen=True)
class Document:
    """A parsed user file: the data, and (for YAML) the node tree to find a field's line."""

    file: str
    data: Any
    root: yaml.Node | None = None

    def line_of(self, loc: Sequence[str | int]) -> int | None:
        """1-based line of the value at `loc` (keys and list indices), or of its nearest parent."""
        node, line = self.root, None
        for key in loc:
            if node is None:
                break
            line = node.start_mark.line + 1
            if isinstance(node, yaml.MappingNode) and isinstance(key, str):
                node = next((v for k, v in node.value
                             if isinstance(k, yaml.ScalarNode) and k.value == key), None)
                if node is None:  # an unknown key is reported at its parent's line
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
                node = node.value[key] if 0 <= key < len(node.value) else None
            else:
                node = None
        if node is not None:
            line = node.start_mark.line + 1
        return line


def _read_text(path: str | Path) -> str:
    file = str(path)
    p = Path(path)
    try:
        if p.is_dir():
            raise BadInput(file, "", "a file, not a directory")
        if p.stat().st_size > MAX_DOCUMENT_BYTES:
            raise BadInput(file, "", f"a document under {MAX_DOCUMENT_BYTES >> 20} MB")
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(file, "", "an existing file (no such file)") from None
    except PermissionError:
        raise BadInput(file, "", "a readable file (permission denied)") from None
    except UnicodeDecodeError as err:
        raise BadInput(file, f"byte {err.start}", "UTF-8 text") from None
    except OSError as err:
        raise BadInput(file, "", f"a readable file ({err.strerror or err})") from None


# libyaml's loader when PyYAML was built with it (several times faster on big snapshots).
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _json_constant(name: str) -> float:
    # Python's json accepts NaN/Infinity, which are not JSON: refuse them at the source.
    raise ValueError(f"{name} is not a JSON number")


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON parsers keep the last of two equal keys; a snapshot with two `nodes` is a mistake.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"key {dup!r} appears twice in one object")
    return obj


def load_document(path: str | Path) -> Document:
    """Read a YAML or JSON file (JSON when it ends in .json). Syntax errors name the line."""
    file = str(path)
    text = _read_text(path)
    if file.lower().endswith(".json"):
        try:
            return Document(file, json.loads(text, parse_constant=_json_constant,
                                             object_pairs_hook=_json_object))
        except json.JSONDecodeError as err:
            raise BadInput(file, f"line {err.lineno}, column {err.colno}",
                           f"valid JSON ({err.msg})") from None
        except ValueError as err:
            raise BadInput(file, "", f"valid JSON ({err})") from None
    try:
        # One pass: compose the node tree (kept for line numbers), then build the data from it.
        loader = _SafeLoader(text)
        try:
            root = loader.get_single_node()
            if root is not None:  # before construction, which flattens merge keys in place
                _refuse_duplicate_keys(file, root)
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = err.problem or err.context or "syntax error"
        raise BadInput(file, where, f"valid YAML ({problem})") from None
    except yaml.YAMLError as err:
        raise BadInput(file, "", f"valid YAML ({err})") from None
    except RecursionError:
        raise BadInput(file, "", "valid YAML (nested too deeply)") from None
    return Document(file, data, root)


def _refuse_duplicate_keys(file: str, root: yaml.Node) -> None:
    """YAML lets a later `policy:` silently replace an earlier one; an operator never means that."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    seen_nodes: set[int] = set()  # aliases share nodes (and may be recursive): visit each once
    while stack:
        node, path = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                child = f"{path}.{name}" if path else str(name)
                if name is not None and key.tag != "tag:yaml.org,2002:merge":
                    if name in seen:
                        raise BadInput(file, f"{child} (line {key.start_mark.line + 1})",
                                       f"each key once (also on line {seen[name]})")
                    seen[name] = key.start_mark.line + 1
                stack.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(node.value))


# ---------------------------------------------------------------- validation errors

_BUILTIN_TAGS = {"int", "float", "str", "bool", "list", "dict", "tuple", "set", "none",
                 "datetime", "date", "bytes", "is-instance"}


def _unwrap(tp: Any) -> Any:
    """Strip Annotated[...] and Optional[...] down to the type that holds fields."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _model_field(model: type[BaseModel], key: str) -> Any | None:
    for name, info in model.model_fields.items():
        if key in (name, info.alias, info.validation_alias):
            return info.annotation if info.annotation is not None else Any
    return None


def _walk(model_cls: type[BaseModel], loc: Sequence[str | int]) -> tuple[str, list[str | int], Any]:
    """Turn a pydantic error location into the user's path (`partitions[3].node`).

    Drops the tags pydantic adds for union members (a discriminator value, a class name,
    `function-after[...]`), which are not keys in the user's file. Returns the path, the keys
    as they appear in the file (for the line lookup) and the type the location ends at.
    """
    path, keys, tp = "", [], model_cls
    for part in loc:
        cur = _unwrap(tp) if tp is not None else None
        if cur is not None and typing.get_origin(cur) in (typing.Union, types.UnionType):
            members = [_unwrap(m) for m in typing.get_args(cur) if m is not type(None)]
            tagged = [m for m in members if _is_model(m) and (
                m.__name__ == part or any(_literal_has(i.annotation, part)
                                          for i in m.model_fields.values()))]
            if tagged:
                tp = tagged[0]
                continue
            fielded = [m for m in members if _is_model(m) and _model_field(m, str(part))]
            if fielded:
                cur = fielded[0]
            elif isinstance(part, str):
                continue  # a member tag such as "float" or "function-after[...]"
        if isinstance(part, str) and ("[" in part or part in _BUILTIN_TAGS) and not (
                _is_model(cur) and _model_field(cur, part) is not None):
            continue
        if isinstance(part, int):
            path += f"[{part}]"
            keys.append(part)
            origin = typing.get_origin(cur)
            args = typing.get_args(cur)
            if origin in (list, tuple, set, frozenset) or (
                    isinstance(origin, type) and issubclass(origin, Sequence)):
                tp = args[0] if args else None
            elif origin is dict or (isinstance(origin, type) and issubclass(origin, Mapping)):
                tp = args[1] if len(args) == 2 else None
            else:
                tp = None
            continue
        path += f".{part}" if path else str(part)
        keys.append(part)
        if _is_model(cur):
            tp = _model_field(cur, part)
        elif typing.get_origin(cur) is dict or (
                isinstance(typing.get_origin(cur), type)
                and issubclass(typing.get_origin(cur), Mapping)):
            args = typing.get_args(cur)
            tp = args[1] if len(args) == 2 else None
        else:
            tp = None
    return path, keys, tp


def _literal_has(annotation: Any, value: Any) -> bool:
    ann = _unwrap(annotation)
    return typing.get_origin(ann) is typing.Literal and value in typing.get_args(ann)


def _describe_input(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# Values of fields named like these are never echoed back: error lines end up in logs.
_SECRET_WORDS = ("password", "secret", "token", "credential", "access_key", "api_key",
                 "private_key", "passphrase")


def _is_secret(loc: Sequence[str | int]) -> bool:
    return any(isinstance(k, str) and any(w in k.lower() for w in _SECRET_WORDS) for k in loc)


def _expected(err: Mapping[str, Any], parent: Any) -> str:
    """What the user should have written, in words, from one pydantic error."""
    kind, msg = err["type"], err["msg"]
    if _is_secret(err["loc"]):
        if kind in ("value_error", "assertion_error"):  # its words may quote the value
            return "a valid value (the value is secret and not shown)"
        err = {k: v for k, v in err.items() if k != "input"}
    ctx = err.get("ctx") or {}
    got = f", got {_describe_input(err['input'])}" if "input" in err else ""
    if kind == "extra_forbidden":
        model = _unwrap(parent)
        allowed = sorted(model.model_fields) if _is_model(model) else []
        close = difflib.get_close_matches(str(err["loc"][-1]), allowed, n=1, cutoff=0.75)
        if close:  # a typo: name the one key that was meant, not all of them
            return f"unknown key (did you mean {close[0]}?)"
        return "unknown key" + (f" (allowed: {', '.join(allowed)})" if allowed else "")
    if kind == "missing":
        return "a value (required field is missing)"
    if kind == "model_type" or kind == "dict_type":
        return f"a mapping{got}"
    if kind == "invalid_key":
        # Mostly `{node: rs1.example.org,16020}`: in a YAML flow mapping a comma ends the
        # value, and `16020` becomes a key of its own.
        return (f"text keys only{got.replace(', got', ', got the key')} (in YAML {{…}} a "
                "comma ends a value: quote values that contain one)")
    if kind == "finite_number":
        return f"a finite number{got}"
    if kind == "literal_error" and "expected" in ctx:
        return f"one of {ctx['expected']}{got}"
    if kind in ("timezone_aware", "datetime_parsing", "datetime_from_date_parsing",
                "datetime_type"):
        return f"an ISO 8601 timestamp with a timezone, e.g. 2026-11-22T10:00:00Z{got}"
    if kind in ("string_too_short", "too_short") and "min_length" in ctx:
        n = ctx["min_length"]
        what = "character" if kind == "string_too_short" else "item"
        return f"at least {n} {what}{'s' if n != 1 else ''}{got}"
    text = msg
    for prefix in ("Input should be ", "Value error, ", "Assertion failed, "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    text = text[:1].lower() + text[1:]
    if kind not in ("value_error", "assertion_error"):
        text += got
    return text


def parse_model(model_cls: type[M], data: Any, file: str | Path,
                document: Document | None = None) -> M:
    """Validate `data` against `model_cls`; the first error becomes one BadInput line.

    The field is the path in the user's file (`policy.cpu_high`, `partitions[3].node`), with
    its YAML line when `document` is given; more errors are counted, not listed.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise BadInput(str(file), "", f"a mapping of keys to values, got {_describe_input(data)}")
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        loc = first["loc"]
        if first["type"] == "invalid_key":  # the key itself is wrong: name where it sits
            loc = loc[:-1]
        path, keys, _ = _walk(model_cls, loc)
        parent = _walk(model_cls, first["loc"][:-1])[2] if first["loc"] else model_cls
        expected = _expected(first, parent)
        if len(errors) > 1:
            expected += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
        line = document.line_of(keys) if document is not None else None
        field = path + (f" (line {line})" if line and path else (f"line {line}" if line else ""))
        raise BadInput(str(file), field, expected) from None


def parse_file(model_cls: type[M], path: str | Path) -> M:
    """Read a YAML/JSON file and validate it against `model_cls` (scenario files, configs…)."""
    doc = load_document(path)
    return parse_model(model_cls, doc.data, doc.file, doc)


# ---------------------------------------------------------------- the metctl config


def default_config() -> MetctlConfig:
    """The embedded default: every section at its documented defaults (the simulator demo)."""
    return MetctlConfig()


def load_config(path: str | Path | None) -> MetctlConfig:
    """The config in `path` (YAML), or the embedded default when `path` is None.

    An empty file is the default config; unknown keys, wrong types and out-of-range values are
    BadInput naming the file, the field path and what was expected.
    """
    if path is None:
        return default_config()
    return parse_file(MetctlConfig, path)


__all__ = ["MetctlConfig", "Document", "load_document", "parse_model", "parse_file",
           "default_config", "load_config"]
