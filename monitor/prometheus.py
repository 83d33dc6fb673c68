"""Prometheus source: node_exporter's CPU and memory of every host, read through a Prometheus
server's HTTP query API (`GET /api/v1/query`, one instant query per poll), as HostSamples of the
same fractions the Ganglia source gives:

    cpu     = 1 − idle / (all modes)    of rate(node_cpu_seconds_total[W]), summed over the CPUs
    io_wait = iowait / (all modes)      (same rates)
    memory  = 1 − MemAvailable / MemTotal   (node_memory_*_bytes: used less what can be reclaimed)

cpu counts iowait, steal and irq as busy, like Ganglia's 1 − cpu_idle (gmond's cpu_idle leaves
cpu_wio out). Dividing by the sum of every mode's rate rather than by the number of CPUs keeps
the fraction right when scrapes are late or a CPU goes offline: it is what /proc/stat gives.

The five parts (idle and iowait fractions, computed by Prometheus; MemAvailable, MemTotal; the
time of the latest memory sample) are asked in ONE query, each tagged with a `metctl_series`
label by label_replace and joined by `or` (their label sets differ, so `or` keeps all): one
request, one deadline, every part evaluated at the same instant, and five series per host
rather than one per CPU mode. Hosts are named by the `instance` label
less its `:port` (`rs1.example.org:9100` -> `rs1.example.org`, `[::1]:9100` -> `::1`); the
collector matches them to data-store servers by `host_name_rule` / `host_name_map`, as Ganglia
host names. Two instances on one host (two exporters): the complete one counts.

Freshness: Prometheus answers an instant query with a sample up to 5 minutes old when it stopped
scraping a target without marking it stale (after its own restart, for one); a host whose
latest memory sample is older than `prometheus_stale_after_s` is stale. A target that is down
has its series marked stale by Prometheus, so its memory is missing at once and the host has no
metrics. A host Prometheus does not know is simply not in the answer: the collector reports its
server "no system metrics". Nothing is ever filled in.

Safety: a total deadline per request (connect, then `http.read_timeout_s` for sending,
Prometheus evaluating and the complete answer — not per socket read: a watchdog shuts the socket
down when it passes), no redirects (http.client follows none; a 3xx is an error), a size cap,
and credentials in the URL sent as basic auth but never printed.
"""
from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlencode, urlsplit

from monitor.http_fetch import FetchError, shown_url
from monitor.http_fetch import get as http_get
from monitor.settings import MonitorSettings
from monitor.source import HostSample, Sample

log = logging.getLogger(__name__)

QUERY_PATH = "/api/v1/query"
TAG = "metctl_series"  # the label that says which part of the query a series answers
IDLE, IOWAIT = "idle", "iowait"  # fractions of all CPU time
MEM_AVAILABLE, MEM_TOTAL, SAMPLED_AT = "mem_available", "mem_total", "sampled_at"
TAGS = (IDLE, IOWAIT, MEM_AVAILABLE, MEM_TOTAL, SAMPLED_AT)
_MAX_SHOWN_SKIPS = 3


class PrometheusError(Exception):
    """A query could not be sent, answered or understood (the message says where and why)."""


@dataclass(frozen=True)
class Answer:
    evaluated_at: float | None  # the instant Prometheus evaluated the query at (None: empty)
    instances: dict[str, dict[str, float]]  # instance -> {tag (TAGS): value}, as answered
    problems: tuple[str, ...]  # series skipped, Prometheus warnings


def node_query(selector: str, window_s: float) -> str:
    """The one PromQL instant query for every node_exporter host (see the module doc)."""
    sel = "{" + selector + "}" if selector else ""
    window = f"{max(1, round(window_s * 1000))}ms"
    all_modes = f"sum by (instance) (rate(node_cpu_seconds_total{sel}[{window}]))"

    def tagged(expr: str, tag: str) -> str:
        return f'label_replace({expr}, "{TAG}", "{tag}", "", "")'

    def share(mode: str) -> str:
        one = "{" + ", ".join(m for m in (f'mode="{mode}"', selector) if m) + "}"
        return f"sum by (instance) (rate(node_cpu_seconds_total{one}[{window}])) / {all_modes}"

    return " or ".join((
        tagged(share("idle"), IDLE),
        tagged(share("iowait"), IOWAIT),
        tagged(f"max by (instance) (node_memory_MemAvailable_bytes{sel})", MEM_AVAILABLE),
        tagged(f"max by (instance) (node_memory_MemTotal_bytes{sel})", MEM_TOTAL),
        tagged(f"max by (instance) (timestamp(node_memory_MemAvailable_bytes{sel}))", SAMPLED_AT),
    ))


def host_of(instance: str) -> str:
    """The host part of an `instance` label (host:port, [v6]:port, or a bare name)."""
    if instance.startswith("["):
        end = instance.find("]")
        return instance[1:end] if end > 0 else instance
    host, sep, port = instance.rpartition(":")
    if sep and host and port.isdigit() and ":" not in host:
        return host
    return instance


def _prometheus_error(body: bytes) -> str:
    """Prometheus' own `errorType: error` from an error answer, or ''."""
    try:
        doc = json.loads(body)
        return f"{doc.get('errorType', '?')}: {str(doc.get('error', ''))[:300]}"
    except (ValueError, AttributeError, UnicodeDecodeError):
        return ""


def fetch_query(url: str, query: str, *, at: float | None = None, connect_timeout_s: float,
                read_timeout_s: float, max_bytes: int) -> bytes:
    """The body of a successful `GET <url>/api/v1/query`. Raises PrometheusError for anything
    else: no connection within connect_timeout_s, no complete answer read_timeout_s after it,
    an answer over max_bytes, a redirect, an HTTP error (with Prometheus' own error text)."""
    where = f"prometheus {shown_url(url)}"
    params = {"query": query, "timeout": f"{read_timeout_s:g}s"}  # Prometheus gives up too
    if at is not None:
        params["time"] = f"{at:.3f}"
    target = f"{urlsplit(url).path.rstrip('/')}{QUERY_PATH}?{urlencode(params)}"
    try:
        status, body = http_get(url, target, where=where, connect_timeout_s=connect_timeout_s,
                                read_timeout_s=read_timeout_s, max_bytes=max_bytes,
                                timeout_setting="monitor.http.read_timeout_s",
                                size_setting="monitor.http.max_mb",
                                headers={"Accept": "application/json"})
    except FetchError as err:
        raise PrometheusError(str(err)) from err
    if status != 200:
        said = _prometheus_error(body)
        raise PrometheusError(f"{where}: query answered HTTP {status}"
                              + (f" ({said})" if said else ""))
    return body


def parse_answer(body: bytes, where: str = "prometheus") -> Answer:
    """The figures of each instance in an answer to node_query. Raises PrometheusError for an
    answer that is not JSON, not a success, or not an instant vector; a series that is not
    understood is skipped and counted in `problems`."""
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError) as err:
        head = body[:40].decode("utf-8", errors="replace").strip()
        raise PrometheusError(f"{where}: answer is not JSON ({err}; starts with {head!r})") from err
    if not isinstance(doc, dict):
        raise PrometheusError(f"{where}: answer is not a JSON object")
    if doc.get("status") != "success":
        raise PrometheusError(f"{where}: query failed ({doc.get('errorType', '?')}: "
                              f"{str(doc.get('error', ''))[:300]})")
    data = doc.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("resultType") != "vector" or not isinstance(result, list):
        raise PrometheusError(f"{where}: expected an instant vector, got resultType "
                              f"{data.get('resultType') if isinstance(data, dict) else None!r}")
    problems = [f"{where}: warning: {str(w)[:200]}" for w in doc.get("warnings") or ()][:5]
    instances: dict[str, dict[str, float]] = {}
    evaluated_at: float | None = None
    skipped: list[str] = []
    for series in result:
        try:
            labels = series["metric"]
            stamp, text = series["value"]
            instance, tag = labels.get("instance", ""), labels[TAG]
            value = float(text)  # Prometheus writes "NaN", "+Inf": checked where used
            evaluated_at = float(stamp)
        except (KeyError, TypeError, ValueError, AttributeError):
            skipped.append(str(series)[:80])
            continue
        if not instance:
            skipped.append(f"a {tag} series without an instance label")
        elif tag not in TAGS:
            skipped.append(f"a series tagged {tag!r}")
        else:
            raw = instances.get(instance)
            if raw is None:
                raw = instances[instance] = {}
            raw[tag] = value
    if skipped:
        problems.append(f"{where}: {len(skipped)} series not understood, skipped (e.g. "
                        + "; ".join(skipped[:_MAX_SHOWN_SKIPS]) + ")")
    return Answer(evaluated_at, instances, tuple(problems))


def _fraction(value: float | None, what: str, problems: list[str]) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value) or not -0.01 <= value <= 1.01:  # a little over: rate() rounding
        problems.append(f"{what} is {value:g}, not a fraction (no CPU time passing?)")
        return None
    return min(1.0, max(0.0, value))


def to_host_sample(host: str, raw: dict[str, float], evaluated_at: float | None,
                   settings: MonitorSettings) -> HostSample:
    """Fractions for one host (`raw`: its values by tag), or None values with the reason they
    are not known."""
    sampled_at = raw.get(SAMPLED_AT)
    if sampled_at is not None and evaluated_at is not None and math.isfinite(sampled_at) \
            and evaluated_at - sampled_at > settings.prometheus_stale_after_s:
        return HostSample(host=host, stale=True, reason=(
            f"prometheus: latest node_exporter sample is {evaluated_at - sampled_at:.0f} s old "
            f"(> prometheus_stale_after_s {settings.prometheus_stale_after_s:g} s)"))
    problems: list[str] = []
    memory = None
    idle = _fraction(raw.get(IDLE), "the idle share of node_cpu_seconds_total", problems)
    io_wait = _fraction(raw.get(IOWAIT), "the iowait share of node_cpu_seconds_total", problems)
    cpu = None if idle is None else 1.0 - idle
    if IDLE not in raw:
        problems.append("no idle rate of node_cpu_seconds_total (fewer than two scrapes in the "
                        f"last {settings.prometheus_rate_window_s:g} s?)")
    if IOWAIT not in raw and IDLE in raw:
        problems.append("node_cpu_seconds_total has no iowait mode")
    avail, total_mem = raw.get(MEM_AVAILABLE), raw.get(MEM_TOTAL)
    if avail is None or total_mem is None:
        problems.append("node_memory_" + ("MemAvailable" if avail is None else "MemTotal")
                        + "_bytes missing")
    elif not (math.isfinite(avail) and math.isfinite(total_mem)) or total_mem <= 0:
        problems.append(f"node_memory_MemAvailable_bytes / MemTotal_bytes not usable "
                        f"({avail:g} / {total_mem:g})")
    else:
        memory = min(1.0, max(0.0, 1.0 - avail / total_mem))
    return HostSample(host=host, cpu=cpu, io_wait=io_wait, memory=memory,
                      reason="prometheus: " + "; ".join(problems) if problems else "")


def hosts_from_answer(body: bytes, settings: MonitorSettings,
                      where: str = "prometheus") -> tuple[list[HostSample], list[str]]:
    """Every host of an answer to node_query, one HostSample each, and the problems met."""
    answer = parse_answer(body, where)
    hosts: dict[str, HostSample] = {}
    for instance, raw in answer.instances.items():
        name = host_of(instance)
        sample = to_host_sample(name, raw, answer.evaluated_at, settings)
        if name not in hosts or (_complete(sample) and not _complete(hosts[name])):
            hosts[name] = sample
    problems = list(answer.problems)
    if not hosts:
        problems.append(f"{where}: no node_exporter host in the answer (no "
                        "node_cpu_seconds_total / node_memory_* series"
                        + (f" matching {{{settings.prometheus_selector}}}"
                           if settings.prometheus_selector else "") + ")")
    return list(hosts.values()), problems


def _complete(h: HostSample) -> bool:
    return not h.stale and None not in (h.cpu, h.io_wait, h.memory)


class PrometheusSource:
    """A MetricsSource over one Prometheus server that scrapes node_exporter on every host."""

    def __init__(self, settings: MonitorSettings, url: str | None = None,
                 clock: Callable[[], float] = time.time):
        self.settings = settings
        self.url = (url if url is not None else settings.prometheus_url).rstrip("/")
        self.clock = clock
        self.query = node_query(settings.prometheus_selector, settings.prometheus_rate_window_s)

    def read_hosts(self, at: float | None = None) -> tuple[list[HostSample], list[str]]:
        """Every host in the answer (evaluated at `at`, epoch seconds; None: Prometheus' now)
        and the problems met. Raises PrometheusError when there is no usable answer."""
        s = self.settings
        where = f"prometheus {shown_url(self.url)}"
        body = fetch_query(self.url, self.query, at=at,
                           connect_timeout_s=s.http.connect_timeout_s,
                           read_timeout_s=s.http.read_timeout_s,
                           max_bytes=int(s.http.max_mb * 2**20))
        return hosts_from_answer(body, s, where)

    def sample(self) -> Sample:
        if not self.url:
            return Sample(taken_at=self.clock(), errors=("prometheus: no URL configured",))
        try:
            hosts, problems = self.read_hosts()
        except PrometheusError as err:
            log.warning("%s", err)
            return Sample(taken_at=self.clock(), errors=(str(err),))
        except Exception as err:  # noqa: BLE001 — an answer no rule above foresaw
            msg = (f"prometheus {shown_url(self.url)}: unexpected answer "
                   f"({type(err).__name__}: {err})")
            log.warning("%s", msg)
            return Sample(taken_at=self.clock(), errors=(msg,))
        return Sample(taken_at=self.clock(), hosts=tuple(hosts), errors=tuple(problems))


__all__ = ["PrometheusError", "PrometheusSource", "fetch_query", "host_of", "hosts_from_answer",
           "node_query", "parse_answer", "shown_url", "to_host_sample"]
