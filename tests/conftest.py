"""Shared fixtures: every module in tests/fixtures/ is a pytest plugin (clusters, real
components on loopback), so fixtures are defined once and shared, never copied."""
from pathlib import Path

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
