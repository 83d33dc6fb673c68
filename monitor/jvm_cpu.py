"""Per-RegionServer system metrics from the RegionServer's own JVM, through its /jmx servlet:
for RegionServers that share one machine (the local cluster), where a host-wide Ganglia CPU
figure would pin every server to the same number.

- cpu    = `ProcessCpuLoad` of `java.lang:type=OperatingSystem` (this JVM's share of all the
  machine's cores, 0..1), read by monitor/hbase_jmx.py's `parse_process_cpu`, the one parser
  `monitor.hbase_process_cpu` uses too (absent, NaN or negative = missing);
- memory = heap used / heap max of `java.lang:type=Memory` (`HeapMemoryUsage`);
- io_wait = the JVM process's block-I/O delay (field 42 of /proc/<pid>/stat, delayacct_blkio_ticks)
  per second between two samples, when its PID (`java.lang:type=Runtime` Name "pid@host") is
  visible here; else missing (metctl holds, it never guesses).
The host name is the server id "host,port" (tag.serverName of the RegionServer Server bean,
asked again only when the JVM's "pid@host" changes); use `host_name_rule: identity`.

Each figure is asked alone (`?get=bean::attribute`), and the JVM's CPU only here when this source
is on (monitor/live.py): on a 0.15-core RegionServer a whole bean cost 4–16 ms of CPU per question
and the two sources asked eight a sample (docs/evaluation.md, "What a sample costs a
RegionServer").

Every question goes through monitor/hbase_jmx.py's `ask`, as the per-region source's do: one
deadline for a server's whole poll (`monitor.http.read_timeout_s`), at most `monitor.http.max_mb`
of an answer read, as it arrives (docs/input-limits.md). Enabled by
`monitor.hbase_jvm_system_metrics`.
"""
from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence

from monitor.hbase_jmx import OS_BEAN, SERVER_BEAN, JmxError, QuestionPacer, ask, parse_process_cpu
from monitor.http_fetch import shown_url
from monitor.settings import HttpSettings
from monitor.source import HostSample, Sample

MEMORY_BEAN = "java.lang:type=Memory"
RUNTIME_BEAN = "java.lang:type=Runtime"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _bean(url: str, name: str, attribute: str, deadline: float, http: HttpSettings,
          pacer: QuestionPacer | None = None) -> dict[str, Any]:
    """The bean `name` with its one `attribute` (`?get=`: the servlet computes no other; a whole
    Server or Runtime bean costs a small RegionServer milliseconds of CPU per question), through
    monitor/hbase_jmx.py's `ask`: the answer read as it arrives, at most monitor.http.max_mb.
    A composite attribute (HeapMemoryUsage) comes back as its scalar fields on the bean (`used`,
    `max`): the answer holds only that attribute, so its field names are its own."""
    keep = rb"used|max" if attribute == "HeapMemoryUsage" else re.escape(attribute).encode()
    doc = ask(url, name, deadline, http, attribute, keep=keep, pacer=pacer)
    beans = doc.get("beans") or []
    if not beans:
        raise JmxError(f"hbase {shown_url(url)}: /jmx has no bean {name}")
    return beans[0]


def _blkio_ticks(pid: int) -> int | None:
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[39]) if len(fields) > 39 else None  # field 42 overall, 40th after "(comm)"


class JvmSystemSource:
    def __init__(self, urls: Sequence[str], discover: Callable[[], Sequence[str]] | None = None,
                 clock: Callable[[], float] = time.time, http: HttpSettings | None = None,
                 pacer: QuestionPacer | None = None):
        """`http`: the monitor's limits (monitor.http; read_timeout_s is one server's whole
        poll, its questions together). `pacer`: the gap kept between questions to one server,
        shared with the per-region source (monitor/live.py); none by default."""
        self.pacer = pacer
        self.urls = tuple(u.rstrip("/") for u in urls)
        self.discover, self.clock = discover, clock
        self.http = http or HttpSettings()
        self._last_io: dict[str, tuple[float, int]] = {}  # url -> (when, blkio ticks)
        # url -> (the JVM's "pid@host", its server id): the same JVM is the same server, so the
        # Server bean (the costliest question, its metrics snapshot) is asked once per process
        self._server_of: dict[str, tuple[str, str]] = {}

    def _server_id(self, url: str, jvm: str, deadline: float) -> str:
        known = self._server_of.get(url)
        if known is not None and known[0] == jvm:
            return known[1]
        server = _bean(url, SERVER_BEAN, "tag.serverName", deadline, self.http, self.pacer)
        host = ",".join(str(server["tag.serverName"]).split(",")[:2])
        self._server_of[url] = (jvm, host)
        return host

    def _one(self, url: str) -> HostSample | str:
        # one deadline for the server's whole poll, as the per-region source has
        deadline = time.monotonic() + self.http.read_timeout_s
        try:
            jvm = str(_bean(url, RUNTIME_BEAN, "Name", deadline, self.http, self.pacer)["Name"])
            pid = int(jvm.split("@")[0])
            host = self._server_id(url, jvm, deadline)
            osb = _bean(url, OS_BEAN, "ProcessCpuLoad", deadline, self.http, self.pacer)
            mem = _bean(url, MEMORY_BEAN, "HeapMemoryUsage", deadline, self.http, self.pacer)
        except JmxError as e:
            return str(e)[:300]
        except (ValueError, KeyError, TypeError) as e:
            return f"hbase {shown_url(url)}: /jmx: {type(e).__name__}: {str(e)[:200]}"
        cpu = parse_process_cpu(osb)
        memory = float(mem["used"]) / float(mem["max"]) if float(mem.get("max", 0)) > 0 else None
        io_wait, reason = None, ""
        ticks, now = _blkio_ticks(pid), self.clock()
        if ticks is None:
            reason = f"process {pid} not visible here: no io_wait"
        else:
            last = self._last_io.get(url)
            self._last_io[url] = (now, ticks)
            if last is not None and now > last[0] and ticks >= last[1]:
                io_wait = min(1.0, (ticks - last[1]) / _TICKS / (now - last[0]))
            else:
                reason = "io_wait needs two samples"
        return HostSample(host=host, cpu=cpu, io_wait=io_wait,
                          memory=memory, reason=reason)

    def sample(self) -> Sample:
        urls = list(self.urls)
        errors: list[str] = []
        if self.discover is not None:
            try:
                urls += [u.rstrip("/") for u in self.discover() if u and u.rstrip("/") not in urls]
            except Exception as e:  # noqa: BLE001 - reported, never raised (MetricsSource contract)
                errors.append(f"discovering RegionServers failed: {e}")
        with ThreadPoolExecutor(max_workers=max(1, min(8, len(urls)))) as pool:
            got = list(pool.map(self._one, urls))
        hosts = tuple(g for g in got if isinstance(g, HostSample))
        errors += [g for g in got if isinstance(g, str)]
        return Sample(taken_at=self.clock(), hosts=hosts, errors=tuple(errors))
