"""HBase source: polls each RegionServer's `/jmx` servlet and reports, per region, the cumulative
request counters, size and locality, plus which server serves it.

Beans read (two queries per server, `?qry=` keeps the answer small):
- `Hadoop:service=HBase,name=RegionServer,sub=Regions`: attributes
  `Namespace_<ns>_table_<table>_region_<encoded>_metric_<X>`;
- `Hadoop:service=HBase,name=RegionServer,sub=Server`: `tag.serverName` (host,port,startcode),
  `tag.Hostname`, `percentFilesLocal`.
A server whose Server bean answers but has no Regions bean (it serves no region yet) is reported
in `Sample.servers` with no partitions; only a missing or garbled answer is an error.

Counter mapping (HBase 2.x per-region counters, MetricsRegionSourceImpl; each is cumulative since
the region opened on this server and restarts at 0 when it moves):
- reads  = `getCount`  — point reads (Get RPCs), the design page's "reads";
- scans  = `scanCount` — scan RPCs (each next() batch of a scanner), the design's "scan requests";
- writes = `putCount + deleteCount + incrementCount + appendCount` — mutations.
`readRequestCount`/`writeRequestCount` are not used: they count rows, so one scan of 1,000 rows
would weigh like 1,000 gets and Stage C's read/scan split would be lost. A region whose op
counters are absent (HBase before 2.0) or NaN gets NaN, which the collector treats as missing.
- size_mb  = `storeFileSize` / 2^20 (on-disk store files; the memstore is not data on disk yet);
- locality = per-region `getDataLocality()` from the admin API when a `RegionMetricsProvider` is
  given, else the server's `percentFilesLocal` / 100 for each of its regions (a server-wide
  fallback, the best /jmx offers).

RPC latency: `Hadoop:service=HBase,name=RegionServer,sub=IPC` `TotalCallTime_mean` (ms a call
spent queued plus processed, HBase's histogram; names checked on HBase 2.6.4, see
tests/monitor/data/jmx-rs1-ipc.json), or with `hbase_call_time: p99` the same histogram's
`TotalCallTime_99th_percentile`, reported in `Sample.server_latency_ms`. Optional: a server
without the bean or with a non-finite value simply has none (the regions still count).
Call queue: the same bean's `numCallsInGeneralQueue` + `numCallsInReadQueue` +
`numCallsInWriteQueue` + `numCallsInScanQueue` (calls waiting for a handler; the read/write/scan
queues exist only when hbase.ipc.server.callqueue.read.ratio splits them, a missing one counts
0; none of the four present: no figure), in `Sample.server_queue_length`. The queue is bounded
(hbase.ipc.server.max.callqueue.length, 10 x handlers by default): beyond it HBase refuses calls
(`exceptions.callQueueTooBig`), so on a server far past saturation it reads at most that.
Calls not served: the same bean's `exceptions.callQueueTooBig` (refused, queue full) +
`exceptions.callDropped` (dropped by the call queue's policy) + `exceptions.callTimedOut` (its
client's deadline passed while it waited), counters since the server started, in
`Sample.server_dropped_calls`: the demand a saturated server did not serve.

Process CPU (`hbase_process_cpu`): a third query, `java.lang:type=OperatingSystem`
`ProcessCpuLoad` (the JVM's CPU use over the last interval as a fraction of all the machine's
cores, 0..1; negative or NaN while unknown = missing), reported as a process-scoped HostSample
named by the server id: when several RegionServers share a host, the collector gives each its
own CPU instead of the machine's (io_wait and memory stay the machine's). It is asked alone
(`?get=bean::attribute`; HBase answers HTTP 400 for a bean or attribute it lacks: no CPU for
that server, its regions still count): the whole bean has every figure of the JVM's machine and
control group computed for it, which cost a 0.15-core RegionServer ~10 ms of CPU per question
(docs/evaluation.md, "What a sample costs a RegionServer").

The node id is `host,port` from `tag.serverName` (the start code dropped, so a restarted server
keeps its id); if absent, `tag.Hostname` with `hbase_rpc_port`. A server whose answer names
it neither way is missing from that poll: an id made up from the URL (`127.0.0.1` for a server
HBase calls `localhost`, the default port for a server on another) would be a node that does
not exist beside the one that does.
HBase prints NaN/Infinity (not strict JSON): Python's json reads them, and every number is then
checked — a non-finite value is missing, never used as a number.
"""
from __future__ import annotations

import logging
import math
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, runtime_checkable
from urllib.parse import urlencode, urlsplit

from common.redact import redact
from monitor.http_fetch import FetchError, shown_url
from monitor.http_fetch import get as http_get
from monitor.jmx_stream import BeanReader
from monitor.settings import HttpSettings, MonitorSettings
from monitor.source import HostSample, PartitionSample, Sample

log = logging.getLogger(__name__)

REGIONS_BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Regions"
SERVER_BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server"
OS_BEAN = "java.lang:type=OperatingSystem"
IPC_BEAN = "Hadoop:service=HBase,name=RegionServer,sub=IPC"
_REGION_ATTR = re.compile(
    r"^Namespace_(?P<ns>.+?)_table_(?P<table>.+?)_region_(?P<region>[0-9a-f]+)_metric_(?P<metric>[A-Za-z_]+)$")
READ_METRICS = ("getCount",)
SCAN_METRICS = ("scanCount",)
WRITE_METRICS = ("putCount", "deleteCount", "incrementCount", "appendCount")
SYSTEM_NAMESPACE = "hbase"
_MAX_PARALLEL = 8  # RegionServers polled at once

class _NotJson(Exception):
    """The answer's bytes are not a /jmx JSON document (raised from inside the read)."""


class JmxError(Exception):
    """A /jmx answer could not be fetched or understood (message: which URL and why)."""


@dataclass(frozen=True)
class RegionAdminMetrics:
    """Per-region facts from the HBase admin API (`Admin.getClusterMetrics()` →
    `ServerMetrics.getRegionMetrics()` → `RegionMetrics`)."""

    region: str  # encoded name
    server: str  # host,port
    size_mb: float | None = None  # getStoreFileSize in MB
    locality: float | None = None  # getDataLocality, 0..1


@runtime_checkable
class RegionMetricsProvider(Protocol):
    """What the HBase admin gateway (py4j) offers the monitor; optional."""

    def region_metrics(self) -> Sequence[RegionAdminMetrics]:
        """Every online region's size and locality. May raise; the source reports it.

        Any items with `region`, `size_mb` and `locality` attributes will do
        (actuator.hbase.HBaseDriver returns its RegionMetricsRow)."""


def _finite(x: Any) -> float:
    """A JSON value as a finite float, or NaN (missing) for anything else."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return math.nan
    x = float(x)
    return x if math.isfinite(x) else math.nan


def server_id_from(server_bean: dict[str, Any] | None, rpc_port: int) -> str | None:
    """`host,port` of the RegionServer whose Server bean this is, or None if it does not say."""
    if server_bean:
        name = server_bean.get("tag.serverName")
        if isinstance(name, str) and name.count(",") >= 1:
            host, port = name.split(",")[:2]
            if host and port.isdigit():
                return f"{host},{port}"
        host = server_bean.get("tag.Hostname")
        if isinstance(host, str) and host:
            return f"{host},{rpc_port}"
    return None


def parse_regions(regions_bean: dict[str, Any], server: str, server_locality: float | None,
                  include_system: bool = False) -> list[PartitionSample]:
    """PartitionSamples from a `sub=Regions` bean (attributes grouped by encoded region name)."""
    per_region: dict[str, dict[str, Any]] = {}
    tables: dict[str, str] = {}
    for key, value in regions_bean.items():
        m = _REGION_ATTR.match(key)
        if m is None:
            continue
        ns, region = m.group("ns"), m.group("region")
        if ns == SYSTEM_NAMESPACE and not include_system:
            continue
        tables[region] = m.group("table") if ns == "default" else f"{ns}:{m.group('table')}"
        per_region.setdefault(region, {})[m.group("metric")] = value
    out = []
    for region, metrics in per_region.items():
        def total(names: Sequence[str]) -> float:
            # All named counters must be present and finite, else the sum is missing.
            vals = [_finite(metrics.get(n)) for n in names]
            return math.nan if any(math.isnan(v) for v in vals) else sum(vals)

        size = _finite(metrics.get("storeFileSize"))
        out.append(PartitionSample(
            id=region, table=tables[region], server=server,
            reads=total(READ_METRICS), writes=total(WRITE_METRICS), scans=total(SCAN_METRICS),
            size_mb=None if math.isnan(size) or size < 0 else size / 2**20,
            locality=server_locality))
    return out


def parse_process_cpu(os_bean: dict[str, Any] | None) -> float | None:
    """`ProcessCpuLoad` of a `java.lang:type=OperatingSystem` bean as a 0..1 fraction, or None
    (absent, NaN, or the JVM's -1 for "not available yet")."""
    v = _finite((os_bean or {}).get("ProcessCpuLoad"))
    return None if math.isnan(v) or v < 0 else min(1.0, v)


# The IPC bean's call time statistics (monitor.hbase_call_time), ms queued plus processed.
CALL_TIME = {"mean": "TotalCallTime_mean", "p99": "TotalCallTime_99th_percentile"}


def parse_call_time(ipc_bean: dict[str, Any] | None, statistic: str = "mean") -> float | None:
    """The IPC bean's call time at `statistic` (mean or p99) in ms, or None (absent, NaN,
    negative)."""
    v = _finite((ipc_bean or {}).get(CALL_TIME[statistic]))
    return None if math.isnan(v) or v < 0 else v


# The IPC bean's call queues of client requests (names checked on HBase 2.6.4, in
# tests/monitor/data/jmx-rs1-ipc.json); priority, replication and bulk-load queues serve HBase
# itself and are left out.
CALL_QUEUES = ("numCallsInGeneralQueue", "numCallsInReadQueue", "numCallsInWriteQueue",
               "numCallsInScanQueue")

def _sum_of(bean: dict[str, Any] | None, names: tuple[str, ...]) -> float | None:
    """The sum of the attributes `names` a bean reports, or None (none reported, or one NaN
    or negative: a count that cannot be trusted is no count)."""
    bean = bean or {}
    present = [q for q in names if q in bean]
    if not present:
        return None
    values = [_finite(bean[q]) for q in present]
    if any(math.isnan(v) or v < 0 for v in values):
        return None
    return float(sum(values))


def parse_call_queue(ipc_bean: dict[str, Any] | None) -> float | None:
    """Calls waiting in the IPC bean's client call queues, or None (none of them reported, or
    one NaN or negative)."""
    return _sum_of(ipc_bean, CALL_QUEUES)


# Calls a server refused or dropped without an answer (counters of the IPC bean, HBase 2.6.4).
DROPPED_CALLS = ("exceptions.callQueueTooBig", "exceptions.callDropped", "exceptions.callTimedOut")

def parse_dropped_calls(ipc_bean: dict[str, Any] | None) -> float | None:
    """Calls refused or dropped unanswered since the server started, or None (none of the
    counters reported, or one NaN or negative)."""
    return _sum_of(ipc_bean, DROPPED_CALLS)


# The attributes read of each bean, as regexes of their names (the rest of an answer is read
# past, never kept; monitor/jmx_stream.py).
_REGION_METRICS = "|".join((*READ_METRICS, *SCAN_METRICS, *WRITE_METRICS, "storeFileSize"))
_KEEP: dict[str, bytes] = {
    REGIONS_BEAN: rb'Namespace_[^"\\]*_metric_(?:' + _REGION_METRICS.encode() + rb")",
    SERVER_BEAN: rb"tag\.serverName|tag\.Hostname|percentFilesLocal",
    OS_BEAN: rb"ProcessCpuLoad",
    IPC_BEAN: "|".join(re.escape(k) for k in (*CALL_TIME.values(), *CALL_QUEUES,
                                               *DROPPED_CALLS)).encode(),
}


def process_cpu_samples(cpu: dict[str, float | None], reasons: dict[str, str],
                        mode: str) -> list[HostSample]:
    """Process-scoped HostSamples for the servers whose own CPU is wanted: all (`always`) or
    those sharing a host part with another server (`shared_hosts`)."""
    if mode == "off":
        return []
    hosts: dict[str, int] = {}
    for server in cpu:
        h = server.split(",", 1)[0].lower()
        hosts[h] = hosts.get(h, 0) + 1
    return [HostSample(host=server, cpu=value, scope="process",
                       reason="" if value is not None else reasons.get(server, "process CPU missing"))
            for server, value in cpu.items()
            if mode == "always" or hosts[server.split(",", 1)[0].lower()] > 1]


class QuestionPacer:
    """Spaces the /jmx questions to each RegionServer (monitor.hbase_jmx_question_gap_ms): a
    question waits until `gap_s` after the last answer from that server, whichever source asked
    it, never past the poll's deadline. One pacer is shared by the sources that ask /jmx."""

    def __init__(self, gap_s: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep):
        self.gap_s, self.clock, self.sleep = gap_s, clock, sleep
        self._answered: dict[str, float] = {}  # url -> when its last answer ended
        self._lock = threading.Lock()

    def wait(self, url: str, deadline: float) -> None:
        if self.gap_s <= 0:
            return
        with self._lock:
            last = self._answered.get(url)
        if last is not None:
            now = self.clock()
            pause = min(last + self.gap_s, deadline) - now
            if pause > 0:
                self.sleep(pause)

    def answered(self, url: str) -> None:
        if self.gap_s > 0:
            with self._lock:
                self._answered[url] = self.clock()


def ask(url: str, query: str, deadline: float, http: HttpSettings,
        attribute: str | None = None, keep: bytes | None = None,
        pacer: QuestionPacer | None = None) -> dict[str, Any]:
    """The `?qry=` answer of one RegionServer's /jmx as {"beans": [...]}, with only the
    attributes metctl reads (`keep`, a regex of their names; default: _KEEP's for the bean),
    read as they arrive (memory does not grow with the answer), at most `http.max_mb`, complete
    by `deadline` (time.monotonic()). With an `attribute`, the servlet is asked for that one
    (`?get=bean::attribute`): the others are not computed, which on a small RegionServer is
    most of what a question costs. Raises JmxError naming the URL and why. Both /jmx sources
    ask through here (this module's and monitor/jvm_cpu.py's); with a `pacer`, after the gap
    it keeps since this server's last answer."""
    if pacer is not None:
        pacer.wait(url, deadline)
        try:
            return ask(url, query, deadline, http, attribute, keep)
        finally:
            pacer.answered(url)
    shown = shown_url(url)
    head = bytearray()
    reader = BeanReader(keep if keep is not None else _KEEP[query])
    asked = {"qry": query} if attribute is None else {"get": f"{query}::{attribute}"}

    def sink(chunk: bytes) -> None:
        if len(head) < 40:
            head.extend(chunk[:40 - len(head)])
        try:
            reader.feed(chunk)
        except ValueError as err:
            raise _NotJson(str(err)) from None

    try:
        status, _ = http_get(url, f"{urlsplit(url).path}/jmx?{urlencode(asked)}",
                             where=f"hbase {shown}: /jmx",
                             connect_timeout_s=http.connect_timeout_s,
                             read_timeout_s=http.read_timeout_s,
                             max_bytes=int(http.max_mb * 2**20),
                             timeout_setting="monitor.http.read_timeout_s: a server's "
                             "whole poll", size_setting="monitor.http.max_mb",
                             headers={"Accept": "application/json"}, deadline=deadline,
                             sink=sink)
        if status == 400 and attribute is not None:  # how HBase says "no such bean or attribute"
            raise JmxError(f"hbase {shown}: /jmx has no {query} {attribute} (HTTP 400)")
        if status != 200:
            raise JmxError(f"hbase {shown}: /jmx answered HTTP {status}")
        beans = reader.close()
    except FetchError as err:
        raise JmxError(str(err)) from err
    except (_NotJson, ValueError) as err:
        said = head.decode("utf-8", errors="replace").strip()
        raise JmxError(f"hbase {shown}: /jmx answer is not JSON ({err}; starts with "
                       f"{said!r})") from err
    return {"beans": beans} if reader.saw_beans else {}


def _bean(doc: Any, name: str, url: str) -> dict[str, Any] | None:
    if not isinstance(doc, dict) or not isinstance(doc.get("beans"), list):
        raise JmxError(f"hbase {shown_url(url)}: /jmx answer has no 'beans' list")
    for bean in doc["beans"]:
        if isinstance(bean, dict) and bean.get("name") == name:
            return bean
    return None


class HBaseJmxSource:
    """A MetricsSource over the /jmx of each configured RegionServer."""

    def __init__(self, settings: MonitorSettings, urls: Sequence[str] | None = None,
                 admin: RegionMetricsProvider | None = None,
                 clock: Callable[[], float] = time.time,
                 include_system_tables: bool = False,
                 discover: Callable[[], Sequence[str]] | None = None,
                 pacer: QuestionPacer | None = None):
        """`pacer`: shared with the other /jmx source (monitor/live.py); by default one of its
        own at monitor.hbase_jmx_question_gap_ms."""
        self.settings = settings
        self.pacer = pacer or QuestionPacer(settings.hbase_jmx_question_gap_ms / 1000.0)
        self.urls = tuple(dict.fromkeys(  # each server once, in the configured order
            u.rstrip("/") for u in (urls if urls is not None else settings.hbase_jmx_urls)))
        self.admin = admin
        self.clock = clock
        self.include_system_tables = include_system_tables
        # more /jmx URLs asked for at each poll (e.g. the HBase driver's live servers, so the
        # RegionServers metctl launches are polled too); may raise: reported, configured URLs kept
        self.discover = discover

    def _poll_urls(self, errors: list[str]) -> tuple[str, ...]:
        if self.discover is None:
            return self.urls
        try:
            found = [u.rstrip("/") for u in self.discover() if u]
        except Exception as err:  # noqa: BLE001 — the gateway may fail in many ways; /jmx still counts
            errors.append(f"hbase: server discovery failed ({type(err).__name__}: {err}); "
                          "polling the configured /jmx URLs only")
            return self.urls
        return tuple(dict.fromkeys((*self.urls, *found)))

    def _get(self, url: str, query: str, deadline: float, attribute: str | None = None
             ) -> dict[str, Any]:
        return ask(url, query, deadline, self.settings.http, attribute, pacer=self.pacer)

    def poll_server(self, url: str) -> tuple[str, list[PartitionSample]]:
        server, parts, _cpu, _ipc = self._poll_server(url)
        return server, parts

    def _process_cpu(self, url: str, deadline: float) -> tuple[float | None, str]:
        """The JVM's ProcessCpuLoad, or None and why; never raises (the regions still count)."""
        if self.settings.hbase_process_cpu == "off":
            return None, "process CPU off"
        try:
            cpu = parse_process_cpu(_bean(self._get(url, OS_BEAN, deadline, "ProcessCpuLoad"),
                                          OS_BEAN, url))
        except JmxError as err:
            return None, str(err)
        return cpu, "" if cpu is not None else \
            f"hbase {shown_url(url)}: no usable {OS_BEAN} ProcessCpuLoad"

    def _rpc_latency(self, url: str, deadline: float
                     ) -> tuple[float | None, float | None, float | None]:
        """The server's mean call time, calls waiting in its call queues and calls dropped
        since it started, each None when not reported; never raises (optional metrics)."""
        try:
            bean = _bean(self._get(url, IPC_BEAN, deadline), IPC_BEAN, url)
        except JmxError as err:
            log.debug("%s", err)
            return None, None, None
        return (parse_call_time(bean, self.settings.hbase_call_time), parse_call_queue(bean),
                parse_dropped_calls(bean))

    def _poll_server(self, url: str) -> tuple[str, list[PartitionSample], tuple[float | None, str],
                                              tuple[float | None, float | None, float | None]]:
        # One deadline for the server's whole poll (its queries, their answers, the reading):
        # a poll of 8 servers in parallel ends within about monitor.http.read_timeout_s.
        deadline = time.monotonic() + self.settings.http.read_timeout_s
        server, parts = self._poll_regions(url, deadline)
        return server, parts, self._process_cpu(url, deadline), self._rpc_latency(url, deadline)

    def _poll_regions(self, url: str, deadline: float) -> tuple[str, list[PartitionSample]]:
        shown = shown_url(url)
        server_doc = self._get(url, SERVER_BEAN, deadline)
        server_bean = _bean(server_doc, SERVER_BEAN, url)
        regions_bean = _bean(self._get(url, REGIONS_BEAN, deadline), REGIONS_BEAN, url)
        if regions_bean is None and server_bean is None:
            raise JmxError(f"hbase {shown}: no {REGIONS_BEAN} bean and no {SERVER_BEAN} bean "
                           "(not a RegionServer?)")
        server = server_id_from(server_bean, self.settings.hbase_rpc_port)
        if server is None:
            raise JmxError(f"hbase {shown}: the {SERVER_BEAN} bean is missing or names no server "
                           "(no tag.serverName, no tag.Hostname); this server is left out of "
                           "this poll")
        if regions_bean is None:
            # HBase registers the per-region bean only once the server opens its first region:
            # a RegionServer serving nothing (new, or just drained) is a node with no partitions.
            return server, []
        pct = _finite((server_bean or {}).get("percentFilesLocal"))
        locality = None if math.isnan(pct) else min(1.0, max(0.0, pct / 100.0))
        return server, parse_regions(regions_bean, server, locality, self.include_system_tables)

    def sample(self) -> Sample:
        errors: list[str] = []
        servers: list[str] = []
        partitions: list[PartitionSample] = []
        urls = self._poll_urls(errors)
        # In parallel, so one slow server costs one timeout, not one per server; results are
        # taken in the configured order so samples are deterministic.
        with ThreadPoolExecutor(max_workers=max(1, min(_MAX_PARALLEL, len(urls)))) as pool:
            futures = [(url, pool.submit(self._poll_server, url)) for url in urls]
        cpu: dict[str, float | None] = {}
        cpu_reasons: dict[str, str] = {}
        latency: dict[str, float] = {}
        queue: dict[str, float] = {}
        dropped: dict[str, float] = {}
        for url, future in futures:
            try:
                server, parts, (cpu_value, cpu_reason), (call_ms, waiting, lost) = future.result()
            except JmxError as err:
                log.warning("%s", err)
                errors.append(str(err))
                continue
            except Exception as err:  # noqa: BLE001 — an answer no rule above foresaw
                said = f"hbase {shown_url(url)}: unexpected /jmx answer ({type(err).__name__}: " \
                       f"{redact(str(err))[:300]})"
                log.warning("%s", said)
                errors.append(said)
                continue
            if server in servers and url not in self.urls:
                continue  # a discovered URL of a configured server (127.0.0.1 vs localhost)
            servers.append(server)
            partitions.extend(parts)
            cpu[server], cpu_reasons[server] = cpu_value, cpu_reason
            if call_ms is not None:
                latency[server] = call_ms
            if waiting is not None:
                queue[server] = waiting
            if lost is not None:
                dropped[server] = lost
            no_ops = sum(1 for p in parts if math.isnan(p.reads) or math.isnan(p.scans)
                         or math.isnan(p.writes))
            if no_ops:
                errors.append(f"hbase {shown_url(url)}: {no_ops} regions without usable get/scan/mutation "
                              "counters (NaN or absent; HBase 2.x per-region counters needed)")
        taken_at = self.clock()
        if self.admin is not None and partitions:
            partitions = self._with_admin_metrics(partitions, errors)
        if not urls:
            errors.append("hbase: no /jmx URL configured")
        hosts = process_cpu_samples(cpu, cpu_reasons, self.settings.hbase_process_cpu)
        return Sample(taken_at=taken_at, partitions=tuple(partitions), servers=tuple(servers),
                      hosts=tuple(hosts), errors=tuple(errors), server_latency_ms=latency,
                      server_queue_length=queue, server_dropped_calls=dropped)

    def _with_admin_metrics(self, partitions: list[PartitionSample],
                            errors: list[str]) -> list[PartitionSample]:
        try:
            facts = {r.region: r for r in self.admin.region_metrics()}
        except Exception as err:  # noqa: BLE001 — the gateway may fail in many ways; /jmx still counts
            errors.append(f"hbase admin: region metrics unavailable ({type(err).__name__}: {err}); "
                          "using /jmx size and server locality")
            return partitions
        out = []
        for p in partitions:
            fact = facts.get(p.id)
            if fact is None:
                out.append(p)
                continue
            size = fact.size_mb if fact.size_mb is not None and math.isfinite(fact.size_mb) else p.size_mb
            loc = fact.locality if fact.locality is not None and math.isfinite(fact.locality) else p.locality
            out.append(PartitionSample(id=p.id, table=p.table, server=p.server, reads=p.reads,
                                       writes=p.writes, scans=p.scans, size_mb=size, locality=loc))
        return out
