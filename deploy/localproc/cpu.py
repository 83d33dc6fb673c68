"""Where a local cluster's CPU went over a window: two readings of every process's CPU time,
its control group's CFS periods and the machine's busy time, and what lay between them (the
cores each process used, the share of its periods each group was throttled in, the machine's
busy cores). It tells which process set the pace of a measurement: a node at its cap, the
client at its cap, or the machine out of cores before any slice was full."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Mapping

from deploy.localproc.process import cpu_s


def machine_busy_s() -> float:
    """CPU seconds the machine's cores have been busy so far, summed over cores (/proc/stat's
    first line: everything but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def reading(cluster: Any, others: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Now: CPU seconds of each of the cluster's processes and of `others` (label: PID, e.g.
    a client), the CFS periods of each of their groups that exists, the machine's busy
    seconds."""
    cpu = cluster.cpu_s() | {label: cpu_s(pid) for label, pid in (others or {}).items()}
    groups = {name: g for name in cpu if (g := cluster.groups.throttling(name))} \
        if cluster.quota_on else {}
    return {"t": time.monotonic(), "cpu": cpu, "machine": machine_busy_s(), "groups": groups}


def spent(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """Between two readings: the cores each process used, the machine's busy cores (of
    `machine_cores`), and per group the share of its periods it was throttled in (near 1: it
    wanted more than its cap all along)."""
    span = max(after["t"] - before["t"], 1e-9)
    cores = {name: round((s - before["cpu"].get(name, 0.0)) / span, 3) for name, s in after["cpu"].items()}
    throttled = {}
    for name, g in after["groups"].items():
        g0 = before["groups"].get(name, {})
        periods = g.get("periods", 0) - g0.get("periods", 0)
        if periods > 0:
            throttled[name] = round((g.get("throttled", 0) - g0.get("throttled", 0)) / periods, 3)
    return {"window_s": round(span, 1), "cores": cores,
            "machine_busy_cores": round((after["machine"] - before["machine"]) / span, 2),
            "machine_cores": os.cpu_count(), "throttled_share": throttled}
