"""Reads a /jmx answer (`{"beans": [{"name": ..., attr: value, ...}, ...]}`) as its bytes arrive,
keeping only the attributes asked for: memory stays at what is kept plus a 64 KiB tail, whatever
the answer's size, and the work is one regular-expression scan in C (json.loads of a 64 MB
answer built ~1 GB of objects for the few attributes metctl uses; with 8 servers polled at once,
eight of them, for 95 s).

    reader = BeanReader(keys=rb"ProcessCpuLoad")      # a regex of the attribute names wanted
    for chunk in chunks:
        reader.feed(chunk)
    beans = reader.close()      # [{"name": ..., kept attributes...}, ...]

What is read: each `"key": value` pair whose key is `name` or matches `keys` and whose value is
a JSON scalar (number, string, true/false/null, and HBase's bare NaN / Infinity), taken once
the character after it (`,` or `}`) has arrived, so a number cut by a chunk's end is never
taken short. A `name` pair starts the next bean (HBase prints `name` first in every bean). Of
the rest only the frame is checked: the answer opens with `{`, names its `beans` list near the
start and ends with `}`; anything else raises ValueError naming what was expected. A key is a
key only where its opening quote is not escaped, so text inside a string value is not read.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

_VALUE = (rb'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?'
          rb"|NaN|-?Infinity|true|false|null")
# Bytes kept between chunks past the last pair read: a wanted pair cut by a chunk's end is
# read whole with the next one (a key and a scalar value fit in far less).
_TAIL = 64 << 10
# Where the `beans` list must be named, from the start of the answer.
_HEAD = 4096
_BEANS = re.compile(rb'^\s*\{\s*"beans"\s*:\s*\[')
_CONSTANTS: dict[bytes, Any] = {b"NaN": math.nan, b"Infinity": math.inf, b"-Infinity": -math.inf,
                                b"true": True, b"false": False, b"null": None}


def _scalar(raw: bytes) -> Any:
    try:
        return int(raw)  # counters, nearly every value read (int() takes ASCII bytes)
    except ValueError:
        pass
    if raw in _CONSTANTS:
        return _CONSTANTS[raw]
    return json.loads(raw)  # a fraction or a string, exactly as json reads it


class BeanReader:
    def __init__(self, keys: bytes):
        self._pairs = re.compile(rb'(?<!\\)"(name|' + keys + rb')"\s*:\s*(' + _VALUE
                                 + rb")\s*(?=[,}])")
        self.beans: list[dict[str, Any]] = []
        self._bean: dict[str, Any] | None = None
        self._buf = b""
        self._head = b""
        self._end = b""
        self.saw_beans = False

    def feed(self, data: bytes) -> None:
        if len(self._head) < _HEAD:
            self._head += data[:_HEAD - len(self._head)]
            if self._head.lstrip()[:1] not in (b"", b"{"):
                raise ValueError("an answer that opens with '{'")
        self._end = (self._end + data)[-16:]
        buf = self._buf + data
        last = 0
        bean = self._bean
        for m in self._pairs.finditer(buf):
            key, raw = m.group(1, 2)
            if key == b"name":
                bean = {"name": _scalar(raw)}
                self.beans.append(bean)
            elif bean is not None:
                bean[key.decode("ascii", "replace")] = _scalar(raw)
            last = m.end()
        self._bean = bean
        self._buf = buf[max(last, len(buf) - _TAIL):]

    def close(self) -> list[dict[str, Any]]:
        self.saw_beans = bool(_BEANS.match(self._head))
        if not self._head.strip():
            raise ValueError("an answer, got an empty body")
        if not self._end.rstrip().endswith(b"}"):
            raise ValueError("a complete /jmx JSON document (it ends early)")
        return self.beans


__all__ = ["BeanReader"]
