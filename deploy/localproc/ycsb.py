"""A YCSB client as a local process, whichever binding it drives (deploy/local_hbase/ycsb.py,
deploy/local_cassandra/ycsb.py): the binding module's build, the client's command line, its
start with output to files, its end, and what its output says (operations by status, the
per-second status lines, latencies)."""
from __future__ import annotations

import re
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from deploy.localproc.process import ClusterError


def build_module(module: Path, out: Path, quiet: bool = True) -> Path:
    """`mvn package` of a binding module (ycsb-hbase/, ycsb-cassandra/) into `out`, skipped
    while out/<module name>.jar is newer than the pom and every Java source. Returns `out`."""
    jar = out / f"{module.name}.jar"
    sources = [module / "pom.xml", *module.rglob("*.java")]
    if jar.exists() and all(s.stat().st_mtime <= jar.stat().st_mtime for s in sources):
        return out
    cmd = ["mvn", "-B", *(["-q"] if quiet else []), "-f", str(module / "pom.xml"),
           f"-Dycsb.build.dir={out}", "package"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ClusterError(f"building {module.name} failed:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return out


@dataclass
class Result:
    workload: str
    phase: str  # load | run
    seconds: float
    ops: int
    ok: int
    throughput: float  # ops/s as YCSB reports it ([OVERALL] Throughput)
    per_op: dict[str, dict[str, int]] = field(default_factory=dict)  # op -> {status: count}
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (s, current ops/s)
    # from the per-second status lines: (s, operations not OK in that second), and (s, the
    # longest operation in that second, µs): how long operations waited through a fault
    failures: list[tuple[float, int]] = field(default_factory=list)
    max_wait_us: list[tuple[float, int]] = field(default_factory=list)
    # op -> {"avg": …, "p95": …, "p99": …, "max": …} in µs, from YCSB's summary
    latency_us: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def success_fraction(self) -> float:
        return self.ok / self.ops if self.ops else 0.0

    @property
    def failed(self) -> int:
        """Operations that did not return OK (YCSB's ERROR, NOT_FOUND, … and its -FAILED)."""
        return self.ops - self.ok


_STATUS_LINE = re.compile(r"(\d+) sec: (\d+) operations; ([0-9.]+) current ops/sec")
_RETURN = re.compile(r"^\[([A-Z-]+)\], Return=([A-Z_]+), (\d+)$")
_THROUGHPUT = re.compile(r"^\[OVERALL\], Throughput\(ops/sec\), ([0-9.E+-]+)$")
_STATUS_OP = re.compile(r"\[([A-Z_-]+): Count=(\d+), Max=(\d+)")
# YCSB's Status names other than OK (site.ycsb.Status), and its generic -FAILED suffix
_NOT_OK = ("ERROR", "NOT_FOUND", "NOT_IMPLEMENTED", "UNEXPECTED_STATE", "BAD_REQUEST", "FORBIDDEN",
           "SERVICE_UNAVAILABLE", "FAILED")


def split_status(name: str) -> tuple[str, str]:
    """"READ-NOT_FOUND" -> ("READ", "NOT_FOUND"); "READ-MODIFY-WRITE" -> ("READ-MODIFY-WRITE", "OK")."""
    op, _, status = name.rpartition("-")
    return (op, status) if op and status in _NOT_OK else (name, "OK")
_LATENCY = re.compile(r"^\[([A-Z-]+)\], (AverageLatency|95thPercentileLatency|99thPercentileLatency|MaxLatency)"
                      r"\(us\), ([0-9.E+-]+)$")
_LATENCY_KEY = {"AverageLatency": "avg", "95thPercentileLatency": "p95", "99thPercentileLatency": "p99",
                "MaxLatency": "max"}


def parse_output(workload: str, phase: str, stdout: str, stderr: str, seconds: float) -> Result:
    per_op: dict[str, dict[str, int]] = {}
    latency: dict[str, dict[str, float]] = defaultdict(dict)
    throughput = 0.0
    for line in stdout.splitlines():
        if m := _RETURN.match(line.strip()):
            op, status, n = m.group(1), m.group(2), int(m.group(3))
            if split_status(op)[1] != "OK" or op == "CLEANUP":
                continue
            per_op.setdefault(op, {})[status] = per_op.get(op, {}).get(status, 0) + n
        elif m := _THROUGHPUT.match(line.strip()):
            throughput = float(m.group(1))
        elif (m := _LATENCY.match(line.strip())) and m.group(1) != "CLEANUP":
            latency[m.group(1)][_LATENCY_KEY[m.group(2)]] = float(m.group(3))
    ops = sum(sum(s.values()) for s in per_op.values())
    ok = sum(s.get("OK", 0) for s in per_op.values())
    timeline = [(float(m.group(1)), float(m.group(3))) for m in _STATUS_LINE.finditer(stderr)]
    # a status line carries the cumulative operation count and, per operation type, the
    # interval's count and longest latency; failures apart ("READ-NOT_FOUND: Count=…")
    lines = [(m, ln) for ln in stderr.splitlines() if (m := _STATUS_LINE.search(ln))]
    failures: list[tuple[float, int]] = []
    max_wait: list[tuple[float, int]] = []
    interval: dict[str, dict[str, int]] = {}
    for m, ln in lines:
        bad, longest = 0, 0
        for name, n, mx in _STATUS_OP.findall(ln):
            op, status = split_status(name)
            if int(n):
                interval.setdefault(op, {})[status] = interval.get(op, {}).get(status, 0) + int(n)
                longest = max(longest, int(mx))
            if status != "OK":
                bad += int(n)
        failures.append((float(m.group(1)), bad))
        max_wait.append((float(m.group(1)), longest))
    if not per_op and lines:
        # stopped before its summary (SIGTERM): the status lines are all there is
        last = lines[-1][0]
        ops = int(last.group(2))
        ok = ops - sum(n for _, n in failures)
        per_op = interval
        throughput = ops / float(last.group(1)) if float(last.group(1)) else 0.0
    return Result(workload, phase, seconds, ops, ok, throughput, per_op, timeline, latency_us=dict(latency),
                  failures=failures, max_wait_us=max_wait)


def client_command(java_opts: list[str], cp: str, binding: str, phase: str, threads: int,
                   target_ops: float | None, props: Mapping[str, Any]) -> list[str]:
    """The YCSB client's command line (both bindings, HBase and Cassandra, share it)."""
    cmd = ["java", *java_opts, "-cp", cp, "site.ycsb.Client",
           "-load" if phase == "load" else "-t", "-db", binding, "-threads", str(threads), "-s"]
    if target_ops:
        cmd += ["-target", str(int(target_ops))]
    for k, v in props.items():
        cmd += ["-p", f"{k}={v}"]
    return cmd


def clients_group(cluster: Any) -> Callable[[int], None] | None:
    """Where a cluster's YCSB clients run: its "ycsb" control group, one for all of them (a
    cluster object without groups, e.g. a stand-in, has none)."""
    place = getattr(cluster, "place", None)
    return (lambda pid: place("ycsb", "ycsb", pid)) if place is not None else None


def start_command(cmd: list[str], workdir: Path, label: str,
                  place: Callable[[int], None] | None = None) -> tuple[subprocess.Popen, float]:
    """Start a YCSB client command in `workdir`, its output in workdir/ycsb/<label>-<ns>.out|.err;
    `place(pid)` puts it into the clients' control group (the cluster's `place`)."""
    logs = workdir / "ycsb"
    logs.mkdir(parents=True, exist_ok=True)
    stem = logs / f"{label}-{time.time_ns()}"
    with open(f"{stem}.out", "w") as out, open(f"{stem}.err", "w") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=workdir)
    if place is not None:
        try:
            place(proc.pid)
        except ClusterError:
            proc.kill()
            proc.wait()
            raise
    proc.ycsb_stem = stem  # type: ignore[attr-defined]
    return proc, time.monotonic()


def outputs(proc: subprocess.Popen) -> tuple[str, str]:
    """The client's stdout and stderr as written so far."""
    stem = proc.ycsb_stem  # type: ignore[attr-defined]
    return (Path(f"{stem}.out").read_text(errors="replace"), Path(f"{stem}.err").read_text(errors="replace"))


def finish(proc: subprocess.Popen, t0: float, workload: str, phase: str, timeout_s: float = 900) -> Result:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    out, err = outputs(proc)
    result = parse_output(workload, phase, out, err, time.monotonic() - t0)
    if proc.returncode != 0 and not result.ops:
        raise ClusterError(f"YCSB {phase} {workload} failed ({proc.returncode}):\n{err[-3000:]}")
    return result


def operations_so_far(proc: subprocess.Popen) -> int:
    """Operations the client's status lines count so far (0 before its first line)."""
    last = None
    for last in _STATUS_LINE.finditer(outputs(proc)[1]):
        pass
    return int(last.group(2)) if last else 0


def wait_for_operations(procs: Mapping[str, subprocess.Popen], timeout_s: float, every_s: float = 0.5) -> float:
    """Wait until every client has done an operation, so that what follows is timed from the
    first one, not from the JVM's start (on a loaded machine a client's start-up can take the
    whole of a short fixed run). Returns the seconds waited; a client that ends first, or does
    nothing within `timeout_s`, is a ClusterError naming it."""
    t0 = time.monotonic()
    waiting = dict(procs)
    while waiting:
        for label, proc in list(waiting.items()):
            if operations_so_far(proc) > 0:
                del waiting[label]
            elif proc.poll() is not None:
                raise ClusterError(f"YCSB {label} ended ({proc.returncode}) before its first operation:\n"
                                   f"{outputs(proc)[1][-2000:]}")
        if not waiting:
            break
        if time.monotonic() - t0 > timeout_s:
            raise ClusterError(f"YCSB {', '.join(sorted(waiting))}: no operation within {timeout_s:.0f} s")
        time.sleep(every_s)
    return time.monotonic() - t0


def stop(proc: subprocess.Popen, t0: float, workload: str, phase: str = "run") -> Result:
    """End a running client early (SIGTERM) and read what its status lines counted."""
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=60)
    out, err = outputs(proc)
    return parse_output(workload, phase, out, err, time.monotonic() - t0)


def report(results: Mapping[str, Result]) -> str:
    rows = [f"{'workload':8} {'ops/s':>9} {'ops':>8} {'ok %':>8}"]
    for w, r in sorted(results.items()):
        rows.append(f"{w:8} {r.throughput:9.1f} {r.ops:8d} {100 * r.success_fraction:8.3f}")
    return "\n".join(rows)
