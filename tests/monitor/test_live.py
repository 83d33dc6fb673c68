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


def test_live_sources_with_a_driver_add_its_server_list_for_profiles():
    from tests.fakes.cluster import FakeCluster
    from monitor.datastore_source import DataStoreSource
    from monitor.hbase_jmx import HBaseJmxSource
    from monitor.live import live_sources

    world = FakeCluster()
    world.add_server("rs1,16020", profile="write")
    sources = live_sources(MonitorSettings(hbase_jmx_urls=("http://127.0.0.1:16030",)),
                           admin=world.datastore)
    assert [type(s) for s in sources] == [HBaseJmxSource, DataStoreSource]
    assert sources[0].admin is None  # the fake store has no region_metrics()
    assert sources[1].sample().server_profiles == {"rs1,16020": "write"}


def test_cassandra_sources_are_ganglia_the_nodes_views_and_the_server_list():
    from tests.fakes.cluster import FakeCluster
    from monitor.cassandra_views import CassandraViewsSource
    from monitor.datastore_source import DataStoreSource
    from monitor.ganglia import GangliaSource
    from monitor.live import cassandra_sources

    world = FakeCluster()
    world.add_server("127.1.2.3", profile="read")
    sources = cassandra_sources(MonitorSettings(ganglia_endpoints=("127.0.0.1:8649",)), session=None,
                                store=world.datastore, keyspaces=("ycsb",))
    assert [type(s) for s in sources] == [GangliaSource, CassandraViewsSource, DataStoreSource]
    views = sources[1]
    # only the configured keyspaces, and never Cassandra's own
    assert views._watched("ycsb") and not views._watched("other") and not views._watched("system")
    assert sources[2].sample().server_profiles == {"127.1.2.3": "read"}
    # no Ganglia configured: no node metrics source (the snapshot says they are missing)
    assert [type(s) for s in cassandra_sources(MonitorSettings(), None, world.datastore)] == \
        [CassandraViewsSource, DataStoreSource]
