"""monitor.live: the configured endpoints become sources."""
from monitor.settings import MonitorSettings
from monitor.source import MetricsSource


def test_live_sources_follow_the_settings():
    from monitor.ganglia import GangliaSource
    from monitor.hbase_jmx import HBaseJmxSource
    from monitor.live import live_sources

    assert live_sources(MonitorSettings()) == []
    both = live_sources(MonitorSettings(ganglia_endpoints=("127.0.0.1:8649",),
                                        hbase_jmx_urls=("http://127.0.0.1:16030",)))
    assert [type(s) for s in both] == [GangliaSource, HBaseJmxSource]
    assert all(isinstance(s, MetricsSource) for s in both)
