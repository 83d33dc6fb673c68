"""HBase's Java exceptions in metctl's words: an admin call that raises becomes a DriverError
(retryable: HBase's are), and the master's refusal to split a region is read for what it means
(retry later, never, or already done)."""
from __future__ import annotations

import re
from typing import Any, Callable

from actuator.drivers import DriverError


def call(what: str, fn: Callable[[], Any]) -> Any:
    """Run one admin call; Java exceptions become DriverError naming `what`."""
    from py4j.protocol import Py4JError

    try:
        return fn()
    except Py4JError as e:
        msg = str(e).strip().splitlines()
        raise DriverError(f"HBase {what}: {' '.join(msg[:3])[:400]}") from e


def java_reason(e: DriverError) -> tuple[str, str]:
    """(Java exception class, first line of its message without class-name prefixes) of a
    DriverError raised by call(); ("", str(e)) when Java did not raise it."""
    from py4j.protocol import Py4JJavaError

    cause = e.__cause__
    if not isinstance(cause, Py4JJavaError):
        return "", str(e)
    java = cause.java_exception
    lines = str(java.getMessage() or "").strip().splitlines()
    # a remote exception arrives as "<class>: <class>: text"
    first = lines[0] if lines else ""
    return str(java.getClass().getName()), re.sub(r"^(?:[\w.$]+(?:Exception|Error): )+", "", first)


def split_refusal(partition_id: str, reason: str) -> DriverError | None:
    """What the master's refusal to split a region means (its messages in HBase 2.6): the error
    to raise, or None when the region is already split."""
    state = re.search(r"is not OPEN; state=(\w+)", reason)
    if state and state.group(1) in ("SPLIT", "SPLITTING"):
        return None
    if state and state.group(1) in ("MERGED", "MERGING"):
        meaning, retryable = "it was merged into another region", False
    elif state:
        meaning, retryable = "it is in transition (HBase splits only an open region)", True
    elif "bestSplitPoint = null" in reason:
        # no store file has a middle key apart from its first and last: too little data
        meaning, retryable = "HBase finds no split point in it (too small)", False
    elif "NOT splittable" in reason:
        # a daughter keeps references to its parent's files until they are compacted and
        # cleaned (minutes), or its RegionServer is stopping: both pass
        meaning, retryable = "not yet (a daughter of a recent split, or its server is stopping)", True
    elif "split switch off" in reason:
        meaning, retryable = "HBase's split switch is off (an operator's setting)", False
    else:
        return DriverError(f"split of region {partition_id} failed; HBase: {reason}")
    return DriverError(f"cannot split region {partition_id}: {meaning}; HBase: {reason}",
                       retryable=retryable)
