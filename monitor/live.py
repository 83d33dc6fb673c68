"""The live metric sources a MonitorSettings names: Ganglia (if `ganglia_endpoints`) and HBase
/jmx (if `hbase_jmx_urls`), for `metctl snapshot` and the daemon on a real cluster."""
from __future__ import annotations

from monitor.ganglia import GangliaSource
from monitor.hbase_jmx import HBaseJmxSource, RegionMetricsProvider
from monitor.settings import MonitorSettings
from monitor.source import MetricsSource


def live_sources(settings: MonitorSettings,
                 admin: RegionMetricsProvider | None = None) -> list[MetricsSource]:
    """Sources for the configured endpoints (possibly none). `admin` — e.g. the HBase driver —
    gives per-region locality and size from the admin API."""
    sources: list[MetricsSource] = []
    if settings.ganglia_endpoints:
        sources.append(GangliaSource(settings))
    if settings.hbase_jmx_urls:
        sources.append(HBaseJmxSource(settings, admin=admin))
    return sources
