"""The metctl configuration: one model composed of the sections each package declares.

Every default lives in its section's model (with its unit and meaning); this module composes
them, loads YAML and turns validation failures into BadInput naming file, field and expectation.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from actuator.settings import DataStoreSettings, ExecutorSettings, InfrastructureSettings
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
