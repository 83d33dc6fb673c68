"""The metctl configuration: one model composed of the sections each package declares.

Every default lives in its section's model (with its unit and meaning); this module composes
them, loads YAML and turns validation failures into BadInput naming file, field and expectation.

Reading documents and turning validation errors into one BadInput line live in common/
(documents.py, models.py), shared by every layer; they are re-exported here.

- `load_config(path | None)`      the metctl config (None: the embedded default)
"""
from __future__ import annotations

from pathlib import Path

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from actuator.settings import DataStoreSettings, ExecutorSettings, InfrastructureSettings
from common.documents import Document, load_document  # noqa: F401  (re-exported)
from common.models import field_error, parse_file, parse_model  # noqa: F401  (re-exported)
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

    @model_validator(mode="before")
    @classmethod
    def _store_places_cassandra_data(cls, data: Any) -> Any:
        """Cassandra spreads its data itself (token ranges): with datastore.driver cassandra the
        policy only sizes the cluster (policy.data_placement: store), unless the file says
        otherwise, which the after-check refuses."""
        if isinstance(data, dict) and isinstance(data.get("datastore"), dict) \
                and data["datastore"].get("driver") == "cassandra":
            policy = data.get("policy")
            if policy is None:
                data = {**data, "policy": {"data_placement": "store"}}
            elif isinstance(policy, dict) and "data_placement" not in policy:
                data = {**data, "policy": {**policy, "data_placement": "store"}}
        return data

    @model_validator(mode="after")
    def _cassandra_needs_store_placement(self) -> MetctlConfig:
        if self.datastore.driver == "cassandra" and self.policy.data_placement != "store":
            raise ValueError("policy.data_placement must be store with datastore.driver "
                             "cassandra: Cassandra places its own data, metctl cannot move it")
        return self

    @model_validator(mode="after")
    def _live_store_is_reachable(self) -> MetctlConfig:
        """What a real data store needs before anything starts (each a contradiction whatever
        the command: `validate`, `run`, `snapshot` refuse it alike; what only the daemon needs
        is checked by `metctl run`)."""
        store = self.datastore.driver
        if store == "hbase" and not self.monitor.hbase_jmx_urls:
            raise field_error("MetctlConfig", ("monitor", "hbase_jmx_urls"),
                              "at least one RegionServer /jmx URL (per-region counters come "
                              "from there)", [])
        if store == "cassandra" and self.monitor.hbase_jmx_urls:
            # HBase-only sources next to a Cassandra store are a mix-up, not something to ignore
            raise field_error("MetctlConfig", ("monitor", "hbase_jmx_urls"),
                              "empty with datastore.driver cassandra (its per-table counters "
                              "come from system_views over CQL)")
        if store == "cassandra" and self.monitor.hbase_jvm_system_metrics:
            raise field_error("MetctlConfig", ("monitor", "hbase_jvm_system_metrics"),
                              "false with datastore.driver cassandra (node metrics come from "
                              "Ganglia)", True)
        return self


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
