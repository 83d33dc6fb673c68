"""Processes a local cluster owns: a free port to give one, whether a PID is still ours (alive
and its command line naming our conf dir, so a recycled PID is never signalled), its memory
and CPU time, and the tail of its log for error messages."""
from __future__ import annotations

import contextlib
import os
import random
import socket
from pathlib import Path


class ClusterError(RuntimeError):
    """The local cluster could not be fetched, started or reached."""


def port_free(port: int) -> bool:
    """Whether a TCP port on 127.0.0.1 can be bound now."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


# Ports this process has handed out. A port is picked when a process is defined and bound
# seconds later, once it has started, so a second pick meanwhile could return it again: a
# CI run once gave a master's info port and a RegionServer's RPC port the same number, and the
# RegionServer died with "Address already in use". None is handed out twice.
_handed_out: set[int] = set()


def free_port(low: int = 20_000, high: int = 32_000) -> int:
    """A free TCP port on 127.0.0.1 below Linux's ephemeral range (32768+): ports are picked
    when a process is defined and bound seconds later, and an ephemeral pick could meanwhile
    be taken by some outgoing connection's source port. Never one this process handed out
    before (it may not be bound yet)."""
    for _ in range(200):
        port = random.randint(low, high)
        if port not in _handed_out and port_free(port):
            _handed_out.add(port)
            return port
    raise ClusterError(f"no free port in {low}..{high}")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child still "exists": reap it if it is ours
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def pid_owned(pid: int, conf_dir: str) -> bool:
    """True when `pid` is alive and its command line still names our conf dir."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return conf_dir in cmdline and pid_alive(pid)


def rss_mb(pid: int) -> float | None:
    """Resident memory of `pid` in MB, None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system, every thread: GC and JIT included) `pid` has used so far;
    0 for no PID or a process that is gone. Two readings over a window give the cores it
    used, whatever group it runs in (the cpu controller's own accounting lives in cpuacct, a
    separate hierarchy under cgroup v1 that the local clusters do not make groups in)."""
    if not pid:
        return 0.0
    try:
        return _stat_cpu_s(Path(f"/proc/{pid}/stat").read_text())
    except OSError:
        return 0.0


def _stat_cpu_s(stat: str) -> float:
    """utime + stime of a /proc .../stat line, in seconds (the command name, in parentheses,
    may hold spaces: the fields are counted after its closing one)."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_kind(name: str) -> str:
    """A thread's kind from its name: the name without its number (the JVM names its pools
    `GC Thread#3`, `C2 CompilerThre…`, HBase `RpcServer.default.FPBQ.Fifo.handler=12…`, cut to
    15 characters by the kernel), so the threads of one pool add up."""
    return name.rstrip("0123456789#=-_.").strip() or name.strip() or "?"


def threads_cpu_s(pid: int | None, *, precise: bool = False) -> dict[str, float]:
    """CPU seconds (user + system) each kind of thread of `pid` has used so far, by
    `thread_kind` of its name (/proc/PID/task/TID/comm, read every time: a new thread carries
    its creator's name until it is renamed); threads that ended are not counted (a pool's
    threads live as long as the process). Empty for no PID or a process that is gone. Two
    readings over a window say which of a process's threads spent its CPU: GC, JIT, RPC
    handlers, flushes. precise: from the scheduler's run time in ns (TID/schedstat) instead of
    stat's clock ticks (10 ms), for windows of a tenth of a second."""
    if not pid:
        return {}
    out: dict[str, float] = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return {}
    for task in tasks:
        try:
            name = (task / "comm").read_text().strip()
            spent = (int((task / "schedstat").read_text().split()[0]) / 1e9 if precise
                     else _stat_cpu_s((task / "stat").read_text()))
        except (OSError, ValueError, IndexError):  # the thread ended between listing and read
            continue
        kind = thread_kind(name)
        out[kind] = out.get(kind, 0.0) + spent
    return out


def tail(path: str | Path, lines: int = 30) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
