"""The live metric sources a MonitorSettings names: Ganglia (if `ganglia_endpoints`) and HBase
/jmx (if `hbase_jmx_urls`), plus — when the data-store driver is given — its own server list
(which servers are up and the profile each runs), for `metctl snapshot` and the daemon on a real
cluster."""
from __future__ import annotations

from typing import Any

from monitor.datastore_source import DataStoreSource
from monitor.ganglia import GangliaSource
from monitor.hbase_jmx import HBaseJmxSource, RegionMetricsProvider
from monitor.settings import MonitorSettings
from monitor.source import MetricsSource


def live_sources(settings: MonitorSettings,
                 admin: RegionMetricsProvider | Any | None = None) -> list[MetricsSource]:
    """Sources for the configured endpoints (possibly none). `admin` — e.g. the HBase driver —
    gives per-region locality and size from the admin API (if it has `region_metrics()`) and
    the servers' profiles (if it has `servers()`, through a DataStoreSource)."""
    sources: list[MetricsSource] = []
    if settings.ganglia_endpoints:
        sources.append(GangliaSource(settings))
    if settings.hbase_jmx_urls:
        metrics = admin if callable(getattr(admin, "region_metrics", None)) else None
        sources.append(HBaseJmxSource(settings, admin=metrics))
    if admin is not None and callable(getattr(admin, "servers", None)):
        sources.append(DataStoreSource(admin))
    return sources
