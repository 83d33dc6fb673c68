"""A network failure in a few words: the operating system's reason (`Connection refused`,
`Name or service not known`, `timed out`) found inside whatever a client library wrapped it in,
instead of requests' and urllib3's nested reprs (`HTTPConnectionPool(host=…): Max retries
exceeded … (Caused by NewConnectionError(…))`), which name the same thing three times."""
from __future__ import annotations

import socket


def net_reason(err: BaseException) -> str:
    """The innermost OS-level reason of `err`, or `err`'s own text when there is none."""
    seen: set[int] = set()
    todo: list[object] = [err]
    while todo:
        e = todo.pop(0)
        if not isinstance(e, BaseException) or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, (socket.timeout, TimeoutError)):
            return "timed out"
        if isinstance(e, socket.gaierror):
            return e.strerror or "host name not resolved"
        if isinstance(e, OSError) and e.strerror:
            return e.strerror
        # requests/urllib3 keep the cause in .reason, in args, or as the context
        todo += [getattr(e, "reason", None), *e.args, e.__cause__, e.__context__]
    return str(err) or type(err).__name__


__all__ = ["net_reason"]
