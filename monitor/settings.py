"""Settings of the monitor: metric sources (Ganglia or Prometheus, HBase /jmx), sampling,
smoothing, and the rule that says when a snapshot is complete enough to decide on."""
from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator


def _check_host_port(value: str) -> str:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT (port 1..65535), got {value!r}")
    return value


# One PromQL label matcher: name, operator, double-quoted string (backslash escapes allowed).
_MATCHER = r'\s*[A-Za-z_][A-Za-z0-9_]*\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*'
_MATCHERS = re.compile(rf"(?:{_MATCHER})(?:,(?:{_MATCHER}))*,?\s*")


def _url_without_credentials(value: str) -> str:
    """`value` with any user:password@ left out: a config error must not print a password."""
    return re.sub(r"(?<=://)[^/@]*@", "", value)


class HttpSettings(BaseModel):
    """How long the monitor waits for a metric source, and how much of one answer it reads.

    One set for gmond/gmetad's XML port, Prometheus' query API and each RegionServer's /jmx
    (three sets before, `ganglia_*`, `prometheus_*`, `hbase_jmx_*`: controller/layers.py MERGED)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    connect_timeout_s: float = Field(
        2.0, gt=0, description="Seconds to wait for the TCP (and TLS) connection to a source.")
    read_timeout_s: float = Field(
        5.0, gt=0, description="Seconds for a whole answer once connected, however the source "
        "dribbles it: Ganglia's XML dump; a Prometheus query (sending it, Prometheus evaluating "
        "it, the complete answer); a RegionServer's whole /jmx poll (every query it needs, "
        "connecting included). A source that answers slowly or never is abandoned after this.")
    max_mb: float = Field(
        64.0, ge=0.001, le=1024, description="Largest answer read from a source, in MiB "
        "(0.001 to 1024); a bigger one is refused. 1,000 hosts x 30 metrics is about 8 MiB of "
        "Ganglia XML, 0.6 MiB of Prometheus answer.")


class MonitorSettings(BaseModel):
    """Where the monitor reads metrics and how it turns them into a ClusterSnapshot."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # --- Ganglia -------------------------------------------------------------------------
    ganglia_endpoints: tuple[str, ...] = Field(
        (), description="gmond or gmetad XML ports as HOST:PORT, tried in order (fail-over: the "
        "first that answers with a valid dump is used). Empty: no Ganglia (see prometheus_url).")
    ganglia_clusters: tuple[str, ...] = Field(
        (), description="Only hosts of these Ganglia cluster names (gmetad serves several). "
        "Empty: every cluster in the dump.")
    ganglia_stale_tmax_factor: float = Field(
        4.0, gt=0, description="A host is stale when its TN (seconds since it last reported) "
        "exceeds this many times its TMAX — gmond's own 'host down' rule.")

    # --- Prometheus (node_exporter), instead of Ganglia ---------------------------------------
    prometheus_url: str = Field(
        "", description="Prometheus server base URL, e.g. http://prometheus:9090 (the monitor "
        "asks its /api/v1/query for node_exporter's CPU and memory metrics); user:password@ in "
        "it is sent as basic auth and never printed. Set this instead of ganglia_endpoints "
        "(not both). Empty: not used.")
    prometheus_selector: str = Field(
        "", description="Label matchers added to every node_exporter series the monitor asks "
        "for, e.g. 'job=\"node\"' (when one Prometheus scrapes several clusters). Empty: every "
        "node_exporter target.")
    prometheus_rate_window_s: float = Field(
        60.0, ge=1, description="Seconds of node_cpu_seconds_total that rate() averages the CPU "
        "busy and iowait fractions over; at least two scrapes must fall in it (Prometheus "
        "advises 4 x the scrape interval).")
    prometheus_stale_after_s: float = Field(
        60.0, gt=0, description="A host whose latest node_exporter sample (of its memory "
        "metrics) is older than this many seconds is stale: Prometheus keeps answering with a "
        "sample up to 5 minutes old when it stopped scraping without marking it stale.")

    # --- HBase /jmx ------------------------------------------------------------------------
    hbase_jmx_urls: tuple[str, ...] = Field(
        (), description="Each RegionServer's info-server base URL, e.g. http://rs1:16030 "
        "(the monitor appends /jmx?qry=…). Empty: no per-partition source.")
    hbase_process_cpu: Literal["shared_hosts", "always", "off"] = Field(
        "shared_hosts", description="A RegionServer's CPU from its own JVM "
        "(java.lang:type=OperatingSystem ProcessCpuLoad through its /jmx, a fraction of the "
        "machine's cores) instead of the machine's: shared_hosts = only for servers that share "
        "a host with another server (the machine's CPU would be every one's at once); always = "
        "for every server; off = the machine's CPU (Ganglia/Prometheus) for all.")
    hbase_call_time: Literal["mean", "p99"] = Field(
        "mean", description="Which of a RegionServer's call times (its IPC bean's TotalCallTime "
        "histogram: queued plus processed, over HBase's last metrics period) is its "
        "rpc_latency_ms, the figure policy.latency_slo_ms is held against: mean = "
        "TotalCallTime_mean; p99 = TotalCallTime_99th_percentile, for an objective stated as a "
        "99th percentile. On CPU-quota'd RegionServers the mean stayed at 0-6 ms while the "
        "clients' p99 was 258 ms and the p99 followed the stalls (30-98 ms; docs/evaluation.md, "
        "\"A second run of the default now\").")
    hbase_rpc_port: int = Field(
        16020, gt=0, lt=65536, description="RegionServer RPC port used in a node id "
        "(host,port) when the /jmx Server bean gives tag.Hostname but no tag.serverName.")

    # --- naming ----------------------------------------------------------------------------
    host_name_rule: Literal["host_part", "short_name", "identity"] = Field(
        "host_part", description="How a data-store server id (HBase 'host,port[,startcode]') "
        "maps to a Ganglia host name or a Prometheus instance's host (its instance label less "
        "the :port): host_part = the part before the first comma; "
        "short_name = host part up to the first dot (both sides compared that way); "
        "identity = the whole id. Names are compared case-insensitively.")
    host_name_map: dict[str, str] = Field(
        default_factory=dict, description="Explicit server id -> Ganglia / Prometheus host "
        "name overrides, applied before host_name_rule.")

    hbase_jvm_system_metrics: bool = Field(
        False, description="Take each RegionServer's cpu, memory and io_wait from its own JVM "
        "(/jmx ProcessCpuLoad, heap use, the process's block-I/O delay) instead of Ganglia: for "
        "RegionServers sharing one machine. Host names are server ids (host_name_rule identity).")

    hbase_jmx_question_gap_ms: float = Field(
        0.0, ge=0, le=1000, description="Ask one RegionServer's /jmx at most one question per "
        "this many ms (0 to 1000; both /jmx sources together): each question costs the server "
        "a few ms of CPU (docs/evaluation.md, \"What a sample costs a RegionServer\"), which a "
        "node with a CPU quota (a container's limit, a control group's cpu.max) pays within one "
        "scheduling period. 100 (the kernel's default period) spreads a sample's questions so "
        "the calls that arrive meanwhile are not throttled together: the local quota'd cluster "
        "uses it. 0 (default): ask at once. The gaps count within monitor.http.read_timeout_s.")

    # --- how long to wait for a source, how much to read -----------------------------------
    http: HttpSettings = Field(
        default_factory=HttpSettings, description="Timeouts and the size limit of every "
        "metric source's answer (Ganglia, Prometheus, HBase /jmx).")

    # --- smoothing and completeness ---------------------------------------------------------
    smoothing_alpha: float = Field(
        0.5, gt=0, lt=1, description="Brown's smoothing constant alpha (0..1, exclusive): "
        "the weight of the newest observation; higher follows changes faster.")
    smoothing_output: Literal["level", "forecast"] = Field(
        "level", description="Which value of Brown's double smoothing feeds decisions: the "
        "trend-corrected level a_t (current load, default) or the one-step forecast a_t + b_t.")
    min_fresh_fraction: float = Field(
        1.0, ge=0, le=1, description="Fraction of nodes that must have fresh metrics for a "
        "snapshot to be complete enough to decide on (1.0: every node).")
    min_rated_partition_fraction: float = Field(
        1.0, ge=0, le=1, description="Fraction of the partitions seen in the latest sample "
        "that must have a request rate (needs two samples on the same server).")
    max_sample_age_s: float = Field(
        120.0, gt=0, description="A snapshot taken more than this many seconds after the last "
        "poll has no fresh node metrics.")
    forget_server_after_s: float = Field(
        300.0, ge=0, description="A data-store server that stops appearing is reported missing "
        "for this many seconds, then forgotten (it was removed, or its regions moved on).")

    @field_validator("ganglia_endpoints")
    @classmethod
    def _endpoints(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_host_port(v) for v in value)

    @field_validator("prometheus_url")
    @classmethod
    def _prometheus_url(cls, value: str, info: ValidationInfo) -> str:
        if not value:
            return value
        shown = _url_without_credentials(value)
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 — raises ValueError for a port that is not 0..65535
        except ValueError:
            raise ValueError(f"expected an http(s):// URL with a valid port, got {shown!r}") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http(s)://HOST[:PORT][/PATH] URL, got {shown!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"expected a base URL without ?query or #fragment, got {shown!r}")
        if info.data.get("ganglia_endpoints"):
            raise ValueError("set ganglia_endpoints or prometheus_url, not both: each is a "
                             "source of the same node metrics")
        return value.rstrip("/")

    @field_validator("prometheus_selector")
    @classmethod
    def _selector(cls, value: str) -> str:
        if value.strip() and not _MATCHERS.fullmatch(value):
            raise ValueError('expected PromQL label matchers such as job="node", '
                             f'instance=~"rs.*:9100", got {value!r}')
        return value.strip().rstrip(",")

    @field_validator("hbase_jmx_urls")
    @classmethod
    def _urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for v in value:
            if not v.startswith(("http://", "https://")):
                raise ValueError(f"expected an http(s):// URL, got {v!r}")
        return tuple(v.rstrip("/") for v in value)
