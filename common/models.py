"""Validate parsed user documents against pydantic models; the first error becomes one BadInput
line naming the file, the field's path (with its YAML line) and what was expected.

Shared by every layer that reads a user file: the metctl config (controller/config.py),
scenario files (simulator/scenario.py), snapshots and plans.

- `parse_model(model_cls, data, file)`  validate parsed data against a pydantic model
- `parse_file(model_cls, path)`   read a YAML/JSON file and validate it, with the YAML line of
  the offending field in the message
"""
from __future__ import annotations

import difflib
import math
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from common.documents import Document, load_document
from common.errors import BadInput

M = TypeVar("M", bound=BaseModel)

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


def field_error(title: str, loc: tuple[str | int, ...], expected: str,
                value: Any = None) -> ValidationError:
    """A validation error at `loc`, for a check across fields or sections that refuses one
    field in particular (raised from a model validator, it keeps its place: BadInput names the
    field, not the section)."""
    kind = PydanticCustomError("value_error", "{expected}", {"expected": expected})
    return ValidationError.from_exception_data(
        title, [InitErrorDetails(type=kind, loc=loc, input=value)])


def parse_model(model_cls: type[M], data: Any, file: str | Path,
                document: Document | None = None) -> M:
    """Validate `data` against `model_cls`; the first error becomes one BadInput line.

    The field is the path in the user's file (`policy.cpu_high`, `partitions[3].node`), with
    its YAML line when `document` is given; more errors are counted, not listed.
    """
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        # Name the kind only: a wrong path (`../../etc/passwd`) must not echo the file's bytes.
        kind = ("text" if isinstance(data, str) else "a list" if isinstance(data, list | tuple)
                else "a number" if isinstance(data, int | float) else type(data).__name__)
        raise BadInput(str(file), "", f"a mapping of keys to values, got {kind}")
    try:
        model = model_cls.model_validate(data)
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
    _refuse_lax_values(data, model, str(file), document)
    return model


# Largest magnitude accepted for any number in a user document: far above every real rate,
# size or duration, far below where sums over a million partitions overflow a float64 (1e308
# rates passed validation and overflowed in the sums).
MAX_MAGNITUDE = 1e15


def _lax_value(raw: Any, value: Any) -> str | None:
    """What was expected, if the raw YAML/JSON leaf `raw` only became `value` by coercion or is
    not a finite number of sane size; None when it is fine."""
    if isinstance(value, bool):
        if not isinstance(raw, bool):
            return f"true or false, got {_describe_input(raw)}"
    elif isinstance(value, int | float):
        if isinstance(raw, bool | str):  # `true` became 1.0, "0.5" became 0.5
            return f"a number, got {_describe_input(raw)}"
        if not math.isfinite(value) or (isinstance(raw, float) and not math.isfinite(raw)):
            return f"a finite number, got {_describe_input(raw)}"
        if abs(value) > MAX_MAGNITUDE:
            return f"a number of magnitude at most {MAX_MAGNITUDE:.0e}, got {_describe_input(raw)}"
    elif isinstance(raw, float) and not math.isfinite(raw):
        return f"a finite number, got {_describe_input(raw)}"
    return None


def _refuse_lax_values(data: Any, model: BaseModel, file: str, document: Document | None) -> None:
    """The config is as strict as snapshots: walk the user's data beside the validated model and
    refuse numbers given as text or booleans, booleans given as anything else, and non-finite
    or overflowing numbers, in every section (whichever package declares it)."""
    stack: list[tuple[Any, Any, tuple[str | int, ...]]] = [(data, model, ())]
    names: dict[type, dict[Any, str]] = {}
    while stack:
        raw, value, keys = stack.pop()
        kind = type(raw)
        # The common leaf (a finite number of sane size that stayed what it was) costs one
        # comparison: a 100,000-partition snapshot has ~800,000 of them.
        if (kind is float or kind is int) and type(value) is kind and -MAX_MAGNITUDE <= raw <= MAX_MAGNITUDE:
            continue
        if kind is str and type(value) is str:
            continue
        if isinstance(raw, Mapping):
            if isinstance(value, BaseModel):
                by_key = names.get(type(value))
                if by_key is None:
                    by_key = names[type(value)] = {
                        **{i.alias: n for n, i in type(value).model_fields.items() if i.alias},
                        **{n: n for n in type(value).model_fields}}
                for k, v in raw.items():
                    name = by_key.get(k)
                    if name is not None:
                        stack.append((v, getattr(value, name), keys + (k,)))
            elif isinstance(value, Mapping):
                stack.extend((v, value[k], keys + (k,)) for k, v in raw.items() if k in value)
        elif isinstance(raw, list | tuple):
            if isinstance(value, list | tuple) and len(value) == len(raw):
                stack.extend((r, v, keys + (i,)) for i, (r, v) in enumerate(zip(raw, value)))
        else:
            expected = _lax_value(raw, value)
            if expected is not None:
                if _is_secret(keys):
                    expected = expected.split(", got")[0] + " (the value is secret and not shown)"
                path = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)
                path = path.lstrip(".")
                line = document.line_of(list(keys)) if document is not None else None
                raise BadInput(file, path + (f" (line {line})" if line else ""), expected)


def parse_file(model_cls: type[M], path: str | Path) -> M:
    """Read a YAML/JSON file and validate it against `model_cls` (scenario files, configs…)."""
    doc = load_document(path)
    return parse_model(model_cls, doc.data, doc.file, doc)
