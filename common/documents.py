"""The one reader of user files: bounded reads (regular files only, a byte limit whatever the
file claims to be) and the YAML/JSON loader with depth, number-length and duplicate-key checks
done before or while parsing, so hostile input ends in one BadInput line, never a hang, an
out-of-memory kill or a crash inside libyaml.

- `read_bytes(path, limit)`   at most `limit` bytes of a regular file (devices, FIFOs refused)
- `read_text(path, limit)`    the same, decoded as UTF-8
- `parse_json(text, file)`    strict JSON (no NaN/Infinity, no duplicate keys, bounded depth)
- `load_document(path)`       a YAML or JSON file (JSON when it ends in .json) as a Document

Large JSON (a 100,000-partition snapshot) is read through a fast path that only accepts; what
it would refuse is read again by the reference parser, which words every refusal
(`parse_json`, docs/performance.md).
"""
from __future__ import annotations

import functools
import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic_core import from_json

from common.cyclic_gc import cyclic_gc_paused
from common.errors import BadInput

# Size limits per format (docs/input-limits.md). JSON parses at ~5 bytes of memory per byte of
# text, so 512 MiB (a 10,000-node, million-partition snapshot is ~250 MB) stays under ~3 GB.
# YAML keeps a node tree for line numbers and costs ~45 bytes per byte (a 200 MB YAML file took
# > 9 GB): 16 MiB stays under ~1 GB; larger snapshots belong in JSON.
MAX_JSON_BYTES = 512 << 20
MAX_YAML_BYTES = 16 << 20
# Small files metctl itself writes and reads back (the decision memory, node records).
MAX_SMALL_BYTES = 16 << 20
# Deepest nesting accepted; metctl's documents nest at most ~6 levels. libyaml's composer
# recursed into a segfault at ~25,000 levels, Python's json into RecursionError at ~1,000.
MAX_DEPTH = 100
# Longest run of digits accepted in a number (Python refuses ints over 4,300 digits, slowly).
MAX_NUMBER_DIGITS = 100

# Back-compatible name: the largest document of any format.
MAX_DOCUMENT_BYTES = MAX_JSON_BYTES


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n} bytes"


def read_bytes(path: str | Path, limit: int, what: str = "a file") -> bytes:
    """At most `limit` bytes of the regular file `path`; BadInput otherwise.

    The limit is enforced on what is read, not on st_size (0 for /dev/zero); FIFOs, devices
    and sockets are refused before any read (a FIFO would block forever)."""
    file = str(path)
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            raise BadInput(file, "", f"{what}, not a directory")
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(file, "", f"{what} (a regular file, not a device, FIFO or socket)")
        # O_NONBLOCK: should a FIFO replace the file between stat and open, open won't block.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise BadInput(file, "", f"{what} (a regular file, not a device, FIFO or socket)")
            if st.st_size > limit:
                raise BadInput(file, "", f"{what} of at most {_size(limit)} "
                               f"(this one has {st.st_size} bytes)")
            chunks: list[bytes] = []
            total = 0
            # First read: the whole file as stat sees it, plus one byte to see it grow, in one
            # buffer (joining 16 MiB chunks copied a large snapshot once more).
            size = max(st.st_size + 1, 1 << 16)
            while total <= limit:
                chunk = os.read(fd, min(size if not chunks else 1 << 24, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
            if total > limit:
                raise BadInput(file, "", f"{what} of at most {_size(limit)} (it grew past it)")
            return b"".join(chunks)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise BadInput(file, "", f"{what} that exists and is readable (no such file)") from None
    except PermissionError:
        raise BadInput(file, "", f"{what} that is readable (permission denied)") from None
    except IsADirectoryError:
        raise BadInput(file, "", f"{what}, not a directory") from None
    except OSError as err:
        raise BadInput(file, "", f"{what} that is readable ({err.strerror or type(err).__name__})") from None


def read_text(path: str | Path, limit: int, what: str = "a file") -> str:
    """read_bytes decoded as UTF-8 (BadInput naming the first bad byte)."""
    return _utf8(path, read_bytes(path, limit, what))


def _utf8(path: str | Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(str(path), f"byte {err.start}", "UTF-8 text") from None


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


# ---------------------------------------------------------------- limits checked before parsing

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_LONG_DIGITS = re.compile(r"[0-9][0-9_]{%d,}" % MAX_NUMBER_DIGITS)


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _check_digits(file: str, text: str) -> None:
    m = _LONG_DIGITS.search(text)
    if m:
        raise BadInput(file, f"line {_line_at(text, m.start())}",
                       f"numbers of at most {MAX_NUMBER_DIGITS} digits")


# bytes.translate table: digits and "_" (what _LONG_DIGITS runs over) become "d", the rest ".".
_DIGIT_RUNS = bytes(ord("d") if chr(b) in "0123456789_" else ord(".") for b in range(256))
_QUOTE, _BACKSLASH, _COLON = 34, 92, 58
_OPENS = (91, 123)  # [ {


def _where(raw: np.ndarray, byte: int, mask: np.ndarray) -> np.ndarray:
    """Positions of `byte` in `raw`, through one scratch mask: a fresh temporary the size of
    the text for each comparison cost its page faults every time."""
    np.equal(raw, byte, out=mask)
    return np.flatnonzero(mask)


def _real_quotes(raw: np.ndarray, data: bytes, mask: np.ndarray) -> np.ndarray:
    """Positions of the quotes that open or close a string: a quote after an odd run of
    backslashes is escaped (two backslashes and a quote end a string, one and a quote do not)."""
    quotes = _where(raw, _QUOTE, mask)
    if quotes.size == 0 or data.find(b"\\") < 0:
        return quotes
    slashes = _where(raw, _BACKSLASH, mask)
    # Length of the run of backslashes ending at each backslash.
    starts = np.ones(slashes.size, dtype=bool)
    starts[1:] = slashes[1:] != slashes[:-1] + 1
    first = np.maximum.accumulate(np.where(starts, np.arange(slashes.size), 0))
    run = np.arange(slashes.size) - first + 1
    # The run that ends right before each quote, if any.
    j = np.minimum(np.searchsorted(slashes, quotes - 1), slashes.size - 1)
    before = np.where(slashes[j] == quotes - 1, run[j], 0)
    return quotes[before % 2 == 0]


def _brackets(raw: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Positions of [ { ] } in the scratch mask's memory, in place: OR 0x20 folds [ ] onto
    { } and nothing else onto them; minus "{" leaves 0 or 2 exactly for those, and & 0xFD
    maps just 0 and 2 to 0 (uint8 arithmetic wraps)."""
    folded = mask.view(np.uint8)
    np.bitwise_or(raw, 0x20, out=folded)
    np.subtract(folded, ord("{"), out=folded)
    np.bitwise_and(folded, 0xFD, out=folded)
    np.equal(folded, 0, out=mask)
    return np.flatnonzero(mask)


def _check_json_limits(file: str, text: str, data: bytes | None = None) -> int:
    """Depth and number length of JSON text, checked before parsing, in one linear pass of
    numpy over its bytes. Returns how many key-value pairs the text writes (its colons outside
    strings): the parsed data holds as many unless a key was written twice in one object.

    Strings are told apart by their quotes (escaped quotes excluded). On text that is not JSON
    the pass may misjudge what follows the first error, but the parser stops there too: up to
    it the text is a valid prefix, where the pass sees exactly what the parser will."""
    if data is None:
        data = text.encode("utf-8", errors="surrogatepass")
    # Long digit runs: a cheap superset test on the whole text (a run of 101 digits or "_"
    # anywhere, strings included); only on a hit does the exact search on the text without its
    # strings run (a regex over every digit of a 20 MB snapshot cost 0.3 s).
    if b"d" * (MAX_NUMBER_DIGITS + 1) in data.translate(_DIGIT_RUNS):
        _check_digits(file, _JSON_STRING.sub('""', text))
    raw = np.frombuffer(data, dtype=np.uint8)
    mask = np.empty(raw.size, dtype=bool)
    quotes = _real_quotes(raw, data, mask)
    # A position is inside a string when an odd number of real quotes precede it.
    colons = _where(raw, _COLON, mask)
    outside = np.searchsorted(quotes, colons) % 2 == 0
    pairs = int(np.count_nonzero(outside))
    brackets = _brackets(raw, mask)
    if brackets.size <= MAX_DEPTH:
        return pairs  # cannot nest deeper than it has brackets
    brackets = brackets[np.searchsorted(quotes, brackets) % 2 == 0]
    if brackets.size == 0:
        return pairs
    kind = raw[brackets]
    step = np.where((kind == _OPENS[0]) | (kind == _OPENS[1]), 1, -1).astype(np.int32)
    deepest = int(np.cumsum(step).max())
    if deepest > MAX_DEPTH:
        raise BadInput(file, "", f"JSON nested at most {MAX_DEPTH} levels deep "
                                 f"(this one nests {deepest})")
    return pairs


def _flow_depth(text: str) -> int:
    """Deepest nesting of [ { ] } in the text, quotes and comments not told apart: an upper
    bound on a YAML document's flow nesting, read without any YAML library."""
    raw = np.frombuffer(text.encode("utf-8", errors="surrogatepass"), dtype=np.uint8)
    brackets = _brackets(raw, np.empty(raw.size, dtype=bool))
    if brackets.size == 0:
        return 0
    kind = raw[brackets]
    step = np.where((kind == _OPENS[0]) | (kind == _OPENS[1]), 1, -1).astype(np.int32)
    return int(np.cumsum(step).max())


def _check_yaml_depth(file: str, text: str) -> None:
    """Walk libyaml's events (its parser keeps explicit stacks) and stop at the first level
    past MAX_DEPTH, before the recursive composer could overflow the C stack.

    Newer libyaml refuses deep flow nesting itself, while scanning ahead and before the
    first event, with wording of its own: when the library refuses a text whose brackets
    nest past MAX_DEPTH, the refusal is metctl's, so the limit and its message do not
    depend on the YAML library's version."""
    loader = _core_loader(_SafeLoader)(text)
    depth = 0
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise BadInput(file, f"line {event.start_mark.line + 1}",
                                   f"YAML nested at most {MAX_DEPTH} levels deep")
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        if _flow_depth(text) > MAX_DEPTH:
            raise BadInput(file, "", f"YAML nested at most {MAX_DEPTH} levels deep") from None
        raise
    finally:
        loader.dispose()


# ---------------------------------------------------------------- parsing

# libyaml's loader when PyYAML was built with it (several times faster on big snapshots).
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# YAML 1.2's core schema for plain scalars (https://yaml.org/spec/1.2.2/#1032-tag-resolution),
# not PyYAML's YAML 1.1: `yes`/`no`/`on`/`off` are text, not booleans; `1:30` is text, not 90
# (base 60); `010` is ten, not eight; `0b11` and `1_000` are text. A number or boolean field
# then refuses such text by name instead of reading a value the operator did not mean.
# Timestamps stay (snapshots write `taken_at: 2026-11-22T10:00:00Z`); merge keys stay.
_CORE_SCALARS: tuple[tuple[str, str, str], ...] = (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
              r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
    ("null", r"^(?:~|null|Null|NULL|)$", "~nN"),
)


@functools.lru_cache(maxsize=None)
def core_dumper(base: type) -> type:
    """`base` (a safe dumper) quoting every string the core-schema loader would read as
    something else (`0E0`, `1e3`: text to YAML 1.1, numbers to the core schema), as well as
    those YAML 1.1 would: what it writes reads back as it was."""
    dumper = type(f"Core{base.__name__}", (base,), {})
    dumper.yaml_implicit_resolvers = {k: list(v) for k, v in base.yaml_implicit_resolvers.items()}
    for name, pattern, first in _CORE_SCALARS:
        starts = list(first) + ([""] if name == "null" else [])
        dumper.add_implicit_resolver(f"tag:yaml.org,2002:{name}", re.compile(pattern), starts)
    return dumper


def _core_int(loader: Any, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text, 10)  # a leading 0 is decimal, as in YAML 1.2


@functools.lru_cache(maxsize=None)
def _core_loader(base: type) -> type:
    """`base` (libyaml's or the pure-Python safe loader) reading plain scalars by the core
    schema."""
    loader = type(f"Core{base.__name__}", (base,), {})
    loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers
                if tag in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:merge")]
        for first, resolvers in base.yaml_implicit_resolvers.items()}
    for name, pattern, first in _CORE_SCALARS:
        tag = f"tag:yaml.org,2002:{name}"
        starts = list(first) + ([""] if name == "null" else [])
        loader.add_implicit_resolver(tag, re.compile(pattern), starts)
    loader.add_constructor("tag:yaml.org,2002:int", _core_int)
    return loader


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


def _json_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e999 parses to inf: refuse, as NaN is
        raise ValueError(f"{text[:20]} overflows a float")
    return value


def _nan(name: str) -> float:
    return float("nan")


_INF, _MINUS_INF = float("inf"), float("-inf")
_CONTAINER = frozenset((dict, list)).__contains__


def _pairs_and_overflow(data: Any) -> tuple[int, bool]:
    """Key-value pairs held by the dicts of parsed JSON, and whether any number is infinite
    (only an overflowing float such as 1e999 parses to one when NaN/Infinity are refused).

    Level by level, with the per-item work in C (map, set, list.__contains__): a 100,000-
    partition snapshot is 200,000 dicts and 900,000 leaves; a plain walk cost 0.15 s."""
    pairs, overflow = 0, False
    items = [data]  # the document itself first: a bare 1e999 is a whole JSON document too
    while items:
        # `in` compares by == after identity: only an infinite float equals inf.
        overflow = overflow or _INF in items or _MINUS_INF in items
        types = list(map(type, items))
        kinds = set(types)
        if dict not in kinds and list not in kinds:
            break
        level = list(compress(items, map(_CONTAINER, types)))
        dicts = [x for x in level if type(x) is dict]
        pairs += sum(map(len, dicts))
        items = list(chain(chain.from_iterable(map(dict.values, dicts)),
                           chain.from_iterable(x for x in level if type(x) is list)))
    return pairs, overflow


def _strict_json(text: str, file: str, expected: str, nan_to_model: bool) -> Any:
    """The reference parser: every check in a Python hook (NaN/Infinity, overflowing floats,
    duplicate keys named). Used when the fast path saw something to refuse or name."""
    try:
        return json.loads(text, parse_constant=_nan if nan_to_model else _json_constant,
                          parse_float=float if nan_to_model else _json_float,
                          object_pairs_hook=_json_object)
    except BadInput:
        raise
    except json.JSONDecodeError as err:
        raise BadInput(file, f"line {err.lineno}, column {err.colno}",
                       f"{expected} ({err.msg})") from None
    except RecursionError:
        raise BadInput(file, "", f"{expected} (nested too deeply)") from None
    except ValueError as err:
        raise BadInput(file, "", f"{expected} ({err})") from None


def parse_json(text: str, file: str, expected: str = "valid JSON", *,
               nan_to_model: bool = False, utf8: bytes | None = None) -> Any:
    """Strict JSON: no NaN/Infinity or overflowing floats, no duplicate keys, bounded depth and
    number length. BadInput names the line and column of a syntax error.

    nan_to_model: NaN/Infinity/overflow become float NaN for a model with allow_inf_nan=False
    to refuse, naming the field. utf8: the text's UTF-8 bytes, when the caller has them (the
    file as read), to scan without encoding the text again.

    Fast path: pydantic's Rust JSON parser (pydantic_core.from_json, there with pydantic
    anyway; 2x json's C parser, and 4x it with the Python hooks that did the checks), then two
    exact checks on what it built: as many key-value pairs as the text writes (fewer means a
    key was written twice) and no infinite number (an overflow such as 1e999). Its grammar is
    RFC 8259, as strict as json's or stricter (it refuses NaN and lone surrogates); whatever
    it refuses, or the checks find, goes to the hooked reference parser, which decides and
    names the problem exactly as before (tests/common/test_documents.py compares the two)."""
    pairs_written = _check_json_limits(file, text, utf8)
    try:
        with cyclic_gc_paused():
            data = from_json(text, allow_inf_nan=False)
    except (ValueError, TypeError):  # TypeError: text that is not UTF-8 (a lone surrogate)
        return _strict_json(text, file, expected, nan_to_model)
    pairs, overflow = _pairs_and_overflow(data)
    if pairs != pairs_written or overflow:
        return _strict_json(text, file, expected, nan_to_model)
    return data


def parse_yaml(text: str, file: str) -> Document:
    """YAML with a node tree for line numbers; duplicate keys, deep nesting and long numbers
    refused before construction."""
    _check_digits(file, text)
    try:
        _check_yaml_depth(file, text)
        # One pass: compose the node tree (kept for line numbers), then build the data from it.
        loader = _core_loader(_SafeLoader)(text)
        try:
            root = loader.get_single_node()
            if root is not None:  # before construction, which flattens merge keys in place
                _refuse_duplicate_keys(file, root)
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except BadInput:
        raise
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = err.problem or err.context or "syntax error"
        raise BadInput(file, where, f"valid YAML ({problem})") from None
    except yaml.YAMLError as err:
        raise BadInput(file, "", f"valid YAML ({err})") from None
    except RecursionError:
        raise BadInput(file, "", "valid YAML (nested too deeply)") from None
    except (ValueError, OverflowError) as err:  # e.g. an int constructor refusing its digits
        raise BadInput(file, "", f"valid YAML ({err})") from None
    return Document(file, data, root)


def load_document(path: str | Path) -> Document:
    """Read a YAML or JSON file (JSON when it ends in .json). Syntax errors name the line."""
    file = str(path)
    if file.lower().endswith(".json"):
        data = read_bytes(path, MAX_JSON_BYTES, "a JSON document")
        return Document(file, parse_json(_utf8(path, data), file, utf8=data))
    return parse_yaml(read_text(path, MAX_YAML_BYTES, "a YAML document"), file)


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


__all__ = ["BadInput", "Document", "core_dumper", "load_document", "parse_json", "parse_yaml", "read_bytes",
           "read_text", "MAX_JSON_BYTES", "MAX_YAML_BYTES", "MAX_SMALL_BYTES", "MAX_DEPTH",
           "MAX_NUMBER_DIGITS", "MAX_DOCUMENT_BYTES"]
