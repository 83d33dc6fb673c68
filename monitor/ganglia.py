"""Ganglia source: reads the XML dump of a gmond (`GANGLIA_XML > CLUSTER > HOST > METRIC`) or a
gmetad (`GANGLIA_XML > GRID > CLUSTER > HOST > METRIC`, several clusters, grids may nest) over
TCP and turns each host into a HostSample of fractions:

    cpu     = 1 − cpu_idle / 100
    io_wait = cpu_wio / 100
    memory  = (mem_total − mem_free − mem_cached − mem_buffers) / mem_total   (used less cache)

A host whose TN (seconds since it last reported) exceeds `ganglia_stale_tmax_factor` × TMAX is
stale — gmond's own "host down" rule — and so is a needed metric whose own TN exceeds the factor
× its TMAX. A stale host or a missing/unparsable metric gives a HostSample with the value None
and a reason; nothing is filled in.

Safety: the dump is read with connect and read deadlines and a size cap, and parsed with
defusedxml's SAX reader (streaming: no tree). gmond's dump carries an inline DTD with element and attribute declarations but no
entities, so DTDs are allowed (forbid_dtd=False) while entity declarations (billion laughs) and
external references are refused.
"""
from __future__ import annotations

import io
import logging
import math
import socket
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence
from xml.sax import SAXException
from xml.sax.handler import ContentHandler
from xml.sax.xmlreader import InputSource

from defusedxml import DefusedXmlException, expatreader

from common.net_reason import net_reason
from monitor.settings import MonitorSettings
from monitor.source import HostSample, Sample

log = logging.getLogger(__name__)

NEEDED_METRICS = ("cpu_idle", "cpu_wio", "mem_total", "mem_free", "mem_cached", "mem_buffers")


class GangliaError(Exception):
    """A dump could not be fetched or parsed (the message says which endpoint and why)."""


@dataclass(frozen=True)
class GangliaHost:
    """One HOST of a dump, as parsed (before the mapping to a HostSample)."""

    name: str
    cluster: str
    tn: float
    tmax: float
    metrics: dict[str, tuple[str, float, float]]  # name -> (VAL, TN, TMAX)


def fetch_dump(endpoint: str, connect_timeout_s: float, read_timeout_s: float,
               max_bytes: int) -> bytes:
    """The whole XML dump from HOST:PORT. gmond/gmetad write it and close the connection."""
    host, _, port = endpoint.rpartition(":")
    host = host.strip("[]")  # [::1]:8649
    try:
        conn = socket.create_connection((host, int(port)), timeout=connect_timeout_s)
    except OSError as err:
        raise GangliaError(f"ganglia {endpoint}: cannot connect: {net_reason(err)}") from err
    deadline = time.monotonic() + read_timeout_s
    chunks: list[bytes] = []
    size = 0
    try:
        with conn:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise GangliaError(f"ganglia {endpoint}: no complete dump within "
                                       f"{read_timeout_s:g} s (read {size} bytes)")
                conn.settimeout(remaining)
                try:
                    chunk = conn.recv(262144)
                except socket.timeout as err:
                    raise GangliaError(f"ganglia {endpoint}: no complete dump within "
                                       f"{read_timeout_s:g} s (read {size} bytes)") from err
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise GangliaError(f"ganglia {endpoint}: dump larger than the "
                                       f"{max_bytes / 2**20:g} MiB limit")
                chunks.append(chunk)
    except OSError as err:
        raise GangliaError(f"ganglia {endpoint}: read failed: {err}") from err
    if not chunks:
        raise GangliaError(f"ganglia {endpoint}: connection closed without data")
    return b"".join(chunks)


def _num(text: str | None) -> float:
    try:
        return float(text) if text is not None else math.nan
    except ValueError:
        return math.nan


class _DumpHandler(ContentHandler):
    """Collects HOST records while the SAX parser streams the dump (no tree is built: a gmetad
    dump of 1,000 hosts has ~100,000 elements, and only six metrics per host matter)."""

    def __init__(self, wanted: set[str]):
        super().__init__()
        self.wanted = wanted
        self.hosts: list[GangliaHost] = []
        self.root: str | None = None
        self.cluster: str | None = None  # name of the CLUSTER being read, None outside/skipped
        self.host: GangliaHost | None = None

    def startElement(self, name: str, attrs: Any) -> None:  # noqa: N802 — SAX API
        if self.root is None:
            self.root = name
        if name == "METRIC":
            if self.host is not None:
                metric = attrs.get("NAME")
                if metric in NEEDED_METRICS:
                    self.host.metrics[metric] = (attrs.get("VAL", ""), _num(attrs.get("TN")),
                                                 _num(attrs.get("TMAX")))
        elif name == "HOST":
            if self.cluster is not None:
                self.host = GangliaHost(name=attrs.get("NAME", ""), cluster=self.cluster,
                                        tn=_num(attrs.get("TN")), tmax=_num(attrs.get("TMAX")),
                                        metrics={})
        elif name == "CLUSTER":
            cname = attrs.get("NAME", "")
            self.cluster = cname if not self.wanted or cname in self.wanted else None

    def endElement(self, name: str) -> None:  # noqa: N802 — SAX API
        if name == "HOST":
            if self.host is not None:
                self.hosts.append(self.host)
            self.host = None
        elif name == "CLUSTER":
            self.cluster = None


def parse_dump(data: bytes, where: str = "ganglia",
               clusters: Sequence[str] = ()) -> list[GangliaHost]:
    """Every HOST of a gmond or gmetad dump (of the named clusters, or all). Raises GangliaError
    for XML that is malformed, truncated, or declares entities / external references."""
    handler = _DumpHandler(set(clusters))
    parser = expatreader.create_parser(forbid_dtd=False, forbid_entities=True,
                                       forbid_external=True)
    parser.setContentHandler(handler)
    source = InputSource()
    source.setByteStream(io.BytesIO(data))
    try:
        parser.parse(source)
    except DefusedXmlException as err:
        raise GangliaError(f"{where}: unsafe XML refused ({type(err).__name__})") from err
    except SAXException as err:
        raise GangliaError(f"{where}: malformed or truncated XML: {err}") from err
    if handler.root != "GANGLIA_XML":
        raise GangliaError(f"{where}: expected a GANGLIA_XML document, got <{handler.root}>")
    return handler.hosts


def to_host_sample(h: GangliaHost, tmax_factor: float) -> HostSample:
    """Fractions for one host, or None values with the reason they are not known."""
    if math.isfinite(h.tn) and math.isfinite(h.tmax) and h.tmax > 0 and h.tn > tmax_factor * h.tmax:
        return HostSample(host=h.name, stale=True,
                          reason=f"ganglia host stale (TN {h.tn:g} s > {tmax_factor:g} x "
                                 f"TMAX {h.tmax:g} s)")
    values: dict[str, float] = {}
    problems: list[str] = []
    for name in NEEDED_METRICS:
        if name not in h.metrics:
            problems.append(f"{name} missing")
            continue
        text, tn, tmax = h.metrics[name]
        if math.isfinite(tn) and math.isfinite(tmax) and tmax > 0 and tn > tmax_factor * tmax:
            problems.append(f"{name} stale (TN {tn:g} s > {tmax_factor:g} x TMAX {tmax:g} s)")
            continue
        value = _num(text)
        if not math.isfinite(value):
            problems.append(f"{name} not a number ({text!r})")
            continue
        values[name] = value

    cpu = io_wait = memory = None
    if "cpu_idle" in values:
        cpu = min(1.0, max(0.0, 1.0 - values["cpu_idle"] / 100.0))
    if "cpu_wio" in values:
        io_wait = min(1.0, max(0.0, values["cpu_wio"] / 100.0))
    mem_parts = ("mem_total", "mem_free", "mem_cached", "mem_buffers")
    if all(p in values for p in mem_parts):
        total = values["mem_total"]
        if total > 0:
            used = total - values["mem_free"] - values["mem_cached"] - values["mem_buffers"]
            memory = min(1.0, max(0.0, used / total))
        else:
            problems.append(f"mem_total is {total:g}")
    return HostSample(host=h.name, cpu=cpu, io_wait=io_wait, memory=memory,
                      reason="ganglia: " + "; ".join(problems) if problems else "")


class GangliaSource:
    """A MetricsSource over one or more gmond/gmetad endpoints (fail-over): tried in order,
    starting with the one that answered last, so a dead first endpoint does not cost a timeout
    on every poll."""

    def __init__(self, settings: MonitorSettings, endpoints: Sequence[str] | None = None,
                 clock: Callable[[], float] = time.time):
        self.settings = settings
        self.endpoints = tuple(endpoints if endpoints is not None else settings.ganglia_endpoints)
        self.clock = clock
        self._preferred = 0  # index of the endpoint that answered last: tried first next time

    def sample(self) -> Sample:
        s = self.settings
        errors: list[str] = []
        n = len(self.endpoints)
        for index in [(self._preferred + k) % n for k in range(n)]:
            endpoint = self.endpoints[index]
            try:
                data = fetch_dump(endpoint, s.http.connect_timeout_s, s.http.read_timeout_s,
                                  int(s.http.max_mb * 2**20))
                taken_at = self.clock()
                hosts = parse_dump(data, f"ganglia {endpoint}", s.ganglia_clusters)
            except GangliaError as err:
                log.warning("%s", err)
                errors.append(str(err))
                continue
            if not hosts:
                errors.append(f"ganglia {endpoint}: the dump lists no hosts"
                              + (f" in clusters {list(s.ganglia_clusters)}"
                                 if s.ganglia_clusters else ""))
            self._preferred = index
            samples: dict[str, HostSample] = {}
            for h in hosts:
                if h.name in samples:
                    # The same host in two clusters of a gmetad: keep the fresher report.
                    if samples[h.name].stale or samples[h.name].cpu is None:
                        samples[h.name] = to_host_sample(h, s.ganglia_stale_tmax_factor)
                    continue
                samples[h.name] = to_host_sample(h, s.ganglia_stale_tmax_factor)
            return Sample(taken_at=taken_at, hosts=tuple(samples.values()), errors=tuple(errors))
        if not self.endpoints:
            errors.append("ganglia: no endpoint configured")
        return Sample(taken_at=self.clock(), errors=tuple(errors) or ("ganglia: no answer",))
