"""Shared fixtures: every module in tests/fixtures/ is a pytest plugin (clusters, real
components on loopback), so fixtures are defined once and shared, never copied."""
from pathlib import Path

pytest_plugins = sorted(
    f"tests.fixtures.{p.stem}" for p in (Path(__file__).parent / "fixtures").glob("*.py")
    if p.stem != "__init__"
)
