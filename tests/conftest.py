"""Shared fixtures: every module in tests/fixtures/ is a pytest plugin (clusters, real
components on loopback), so fixtures are defined once and shared, never copied."""
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Tests never assert on wall time: hypothesis' per-example deadline is one such assertion, and
# on a loaded 2-core CI machine it fails for reasons that say nothing about the code.
settings.register_profile(
    "metctl", deadline=None, suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("metctl")

# poll and zookeeper first: other fixture modules import them (a plugin imported before pytest
# registers it cannot get its asserts rewritten)
FIRST = ("tests.fixtures.poll", "tests.fixtures.zookeeper")
pytest_plugins = sorted(
    (f"tests.fixtures.{p.stem}" for p in (Path(__file__).parent / "fixtures").glob("*.py")
     if p.stem != "__init__"), key=lambda m: (m not in FIRST, m)
)

# Tests that start a JVM (HBase, Cassandra, ZooKeeper, Maven, a py4j gateway) live under
# tests/integration/ and are marked integration there, so `pytest tests -m "not integration"`
# is the fast loop (docs/testing.md). The fixtures below start one: a test outside
# tests/integration/ that asks for one is refused at collection, before anything starts.
INTEGRATION = Path(__file__).parent / "integration"
JVM_FIXTURES = frozenset({"hbase_cluster", "cassandra_cluster", "zookeeper_server"})


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the marker must be there by then
def pytest_collection_modifyitems(config, items):
    misplaced = []
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.integration)
        elif JVM_FIXTURES & set(item.fixturenames):
            misplaced.append(item.nodeid)
    if misplaced:
        raise pytest.UsageError("tests that start a JVM belong under tests/integration/: "
                                + ", ".join(misplaced))
