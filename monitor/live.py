"""The live metric sources a MonitorSettings names: Ganglia (if `ganglia_endpoints`) or Prometheus
(if `prometheus_url`; the settings refuse both) for the machines' metrics, HBase /jmx (if
`hbase_jmx_urls`), plus — when the data-store driver is given — its own server list
(which servers are up and the profile each runs), for `metctl snapshot` and the daemon on a real
cluster. `cassandra_sources` is the same for a Cassandra cluster: Ganglia (if configured), the
nodes' own system_views over CQL, and the driver's server list."""
from __future__ import annotations

from typing import Any

from monitor.cassandra_views import CassandraViewsSource
from monitor.datastore_source import DataStoreSource
from monitor.ganglia import GangliaSource
from monitor.hbase_jmx import HBaseJmxSource, QuestionPacer, RegionMetricsProvider
from monitor.prometheus import PrometheusSource
from monitor.settings import MonitorSettings
from monitor.source import MetricsSource


def live_sources(settings: MonitorSettings,
                 admin: RegionMetricsProvider | Any | None = None) -> list[MetricsSource]:
    """Sources for the configured endpoints (possibly none). `admin` — e.g. the HBase driver —
    gives per-region locality and size from the admin API (if it has `region_metrics()`) and
    the servers' profiles and their /jmx URLs (if it has `servers()`: a DataStoreSource, and
    RegionServers metctl launched are polled besides the configured URLs)."""
    sources: list[MetricsSource] = []
    if settings.ganglia_endpoints:
        sources.append(GangliaSource(settings))
    if settings.prometheus_url:
        sources.append(PrometheusSource(settings))
    lists_servers = admin is not None and callable(getattr(admin, "servers", None))
    # one pacer for both /jmx sources: the gap is between any two questions to a server
    pacer = QuestionPacer(settings.hbase_jmx_question_gap_ms / 1000.0)
    if settings.hbase_jmx_urls:
        metrics = admin if callable(getattr(admin, "region_metrics", None)) else None
        # the driver's live servers' info URLs too: RegionServers metctl launches get polled
        discover = (lambda: [s.info_url for s in admin.servers() if getattr(s, "info_url", None)]) \
            if lists_servers else None
        # ProcessCpuLoad is the JVM's CPU since anyone last asked: with the JVM's own system
        # metrics on, they ask for it, and a second reader would get the milliseconds between
        jmx_settings = settings.model_copy(update={"hbase_process_cpu": "off"}) \
            if settings.hbase_jvm_system_metrics else settings
        sources.append(HBaseJmxSource(jmx_settings, admin=metrics, discover=discover, pacer=pacer))
    if settings.hbase_jvm_system_metrics:
        from monitor.jvm_cpu import JvmSystemSource

        sources.append(JvmSystemSource(settings.hbase_jmx_urls, discover=discover if settings.hbase_jmx_urls else None,
                                       http=settings.http, pacer=pacer))
    if lists_servers:
        sources.append(DataStoreSource(admin))
    return sources


def cassandra_sources(settings: MonitorSettings, session: Any, store: Any,
                      keyspaces: tuple[str, ...] = (), timeout_s: float = 5.0) -> list[MetricsSource]:
    """Sources for a Cassandra cluster: node metrics from Ganglia or Prometheus (whichever is
    configured; a node's host name is its address, see monitor.host_name_rule / host_name_map), per-table
    per-node counters from each node's system_views over the CQL `session`, and `store`'s
    (the Cassandra driver's) server list for which nodes are up and their profiles."""
    sources: list[MetricsSource] = []
    if settings.ganglia_endpoints:
        sources.append(GangliaSource(settings))
    if settings.prometheus_url:
        sources.append(PrometheusSource(settings))
    sources.append(CassandraViewsSource(session, timeout_s=timeout_s, keyspaces=keyspaces))
    sources.append(DataStoreSource(store))
    return sources
