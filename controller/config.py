"""The metctl configuration: one model composed of the sections each package declares.

Every default lives in its section's model (with its unit and meaning); this module composes
them, loads YAML and turns validation failures into BadInput naming file, field and expectation.

Reading documents and turning validation errors into one BadInput line live in common/
(documents.py, models.py), shared by every layer; they are re-exported here.

- `load_config(path | None)`      the metctl config (None: the embedded default)
"""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from actuator.settings import DataStoreSettings, ExecutorSettings, InfrastructureSettings
from common.documents import Document, load_document  # noqa: F401  (re-exported)
from common.models import parse_file, parse_model  # noqa: F401  (re-exported)
from controller.control import ControlSettings
from controller.ha import HASettings
from controller.loop_settings import LoopSettings
from controller.telemetry import TelemetrySettings
from decision.policy import PolicyConfig
from monitor.settings import MonitorSettings
from simulator.settings import SimulatorSettings


class MetctlConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cluster: str = Field("demo", description="Cluster name; tags every node metctl launches.")
    policy: PolicyConfig = PolicyConfig()
    monitor: MonitorSettings = MonitorSettings()
    loop: LoopSettings = LoopSettings()
    infrastructure: InfrastructureSettings = InfrastructureSettings()
    datastore: DataStoreSettings = DataStoreSettings()
    executor: ExecutorSettings = ExecutorSettings()
    simulator: SimulatorSettings = SimulatorSettings()
    ha: HASettings = HASettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    control: ControlSettings = ControlSettings()


# ---------------------------------------------------------------- the metctl config


def default_config() -> MetctlConfig:
    """The embedded default: every section at its documented defaults (the simulator demo)."""
    return MetctlConfig()


def load_config(path: str | Path | None) -> MetctlConfig:
    """The config in `path` (YAML), or the embedded default when `path` is None.

    An empty file is the default config; unknown keys, wrong types and out-of-range values are
    BadInput naming the file, the field path and what was expected.
    """
    if path is None:
        return default_config()
    return parse_file(MetctlConfig, path)


__all__ = ["MetctlConfig", "Document", "load_document", "parse_model", "parse_file",
           "default_config", "load_config"]
