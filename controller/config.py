"""The metctl configuration: one model composed of the sections each package declares, in two
forms: `ConfigFile`, the file as written (its `policy:` in levels, controller/layers.py), and
`MetctlConfig`, the settings the daemon runs with (the decision core's flat policy).

Every default lives in its section's model (with its unit and meaning); this module composes
them, loads YAML and turns validation failures into BadInput naming file, field and expectation.

Reading documents and turning validation errors into one BadInput line live in common/
(documents.py, models.py), shared by every layer; they are re-exported here.

- `load_config(path | None)`      the metctl config (None: the embedded default)
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from actuator.settings import DataStoreSettings, ExecutorSettings, InfrastructureSettings
from common.documents import Document, load_document  # noqa: F401  (re-exported)
from common.errors import BadInput
from common.models import field_error, parse_file, parse_model  # noqa: F401  (re-exported)
from controller import calibration
from controller.control import ControlSettings
from controller.ha import HASettings
from controller.layers import Conflict, PolicySettings, migrate, state_files_written, state_paths, warn
from controller.loop_settings import LoopSettings
from controller.state_base import state_base_of, with_state_paths
from controller.telemetry import TelemetrySettings
from decision.policy import PolicyConfig
from monitor.settings import MonitorSettings
from profiles import (
    NodeProfile, ProfileError, ProfileOverride, render_hbase_settings, shipped_profiles, with_overrides,
)
from simulator.settings import SimulatorSettings, simulated_profiles


class _Sections(BaseModel):
    """The sections the file and the running daemon share (everything but `policy:`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cluster: str = Field("demo", min_length=1, max_length=63, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                         description="Cluster name; tags every node metctl launches and names "
                         "its ZooKeeper paths (letters, digits, `_ . -`; at most 63).")
    state_dir: str = Field(
        "metctl-state", min_length=1, description="Directory of metctl's state: the journal "
        "(journal.sqlite), the decision memory (memory.json), the operators' controls "
        "(control.json) and the API token (api-token), the local driver's nodes (local-nodes/), "
        "the last decision and kept snapshots. A relative path is taken from this file's "
        "directory, never the one metctl runs in (unset: $METCTL_STATE_DIR/metctl-state if set; "
        "the built-in demo and shipped configs: $XDG_STATE_HOME/metctl-state, default "
        "~/.local/state/metctl-state; docs/operations.md). `loop.memory_path: null` keeps the "
        "decision memory in RAM (a simulated cluster starts fresh).")
    monitor: MonitorSettings = MonitorSettings()
    loop: LoopSettings = LoopSettings()
    infrastructure: InfrastructureSettings = InfrastructureSettings()
    datastore: DataStoreSettings = DataStoreSettings()
    executor: ExecutorSettings = ExecutorSettings()
    simulator: SimulatorSettings = SimulatorSettings()
    ha: HASettings = HASettings()
    telemetry: TelemetrySettings = TelemetrySettings()
    control: ControlSettings = ControlSettings()
    profiles: dict[str, ProfileOverride] = Field(
        default_factory=dict, description="Changes to the shipped node profiles (profiles/*.yaml: "
        "read, write, read_write, scan, default), by profile name, only the fields given: e.g. "
        "`default: {prefetch_on_open: false}`. Every node metctl launches or restarts into a "
        "profile is configured from the result, and the simulated cluster's nodes too (unless "
        "`simulator.profiles` is set itself). Checked as a profile file is: block cache + "
        "memstore at most 0.80 of the heap.")

    @model_validator(mode="before")
    @classmethod
    def _simulated_nodes_follow_the_profiles(cls, data: Any) -> Any:
        """The simulated nodes run the profiles as changed here, unless the file sets
        `simulator.profiles` itself (an invalid change is reported by the checks after)."""
        if not isinstance(data, dict) or not data.get("profiles"):
            return data
        sim = data.get("simulator")
        if sim is None:
            sim = {}
        if not isinstance(sim, dict) or "profiles" in sim:
            return data
        try:
            changes = {k: ProfileOverride.model_validate(v) for k, v in data["profiles"].items()}
            changed = with_overrides(shipped_profiles(), changes)
        except (ProfileError, ValueError, AttributeError):
            return data
        return {**data, "simulator": {**sim, "profiles": simulated_profiles(changed)}}

    @model_validator(mode="after")
    def _profiles_fit_the_heap(self) -> _Sections:
        try:
            self.node_profiles
        except ProfileError as err:
            raise field_error("config", ("profiles", *err.field.split(".", 1)), err.expected) from None
        return self

    @property
    def node_profiles(self) -> dict[str, NodeProfile]:
        """The profiles nodes are configured from: the shipped ones with `profiles:` applied."""
        return with_overrides(shipped_profiles(), self.profiles)

    def profile_fields(self) -> Callable[[str], dict[str, Any]]:
        """profile name -> its fields as a node document carries them (actuator.userdata),
        for every driver that configures a node (launch, local start)."""
        profiles = self.node_profiles
        # what differs from a profile field's default, as a profile file writes it
        return lambda name: profiles[name].model_dump(exclude_defaults=True)

    def hbase_settings(self) -> Callable[[str], dict[str, str]]:
        """profile name -> the hbase-site.xml properties a RegionServer restarts with."""
        profiles = self.node_profiles
        return lambda name: render_hbase_settings(profiles[name])

    @model_validator(mode="after")
    def _live_store_is_reachable(self) -> _Sections:
        """What a real data store needs before anything starts (each a contradiction whatever
        the command: `validate`, `run`, `snapshot` refuse it alike; what only the daemon needs
        is checked by `metctl run`)."""
        store = self.datastore.driver
        if store == "hbase" and not self.monitor.hbase_jmx_urls:
            raise field_error("config", ("monitor", "hbase_jmx_urls"),
                              "at least one RegionServer /jmx URL (per-region counters come "
                              "from there)", [])
        if store == "cassandra" and self.monitor.hbase_jmx_urls:
            # HBase-only sources next to a Cassandra store are a mix-up, not something to ignore
            raise field_error("config", ("monitor", "hbase_jmx_urls"),
                              "empty with datastore.driver cassandra (its per-table counters "
                              "come from system_views over CQL)")
        if store == "cassandra" and self.monitor.hbase_jvm_system_metrics:
            raise field_error("config", ("monitor", "hbase_jvm_system_metrics"),
                              "false with datastore.driver cassandra (node metrics come from "
                              "Ganglia)", True)
        return self


class ConfigFile(_Sections):
    """The config as written (controller.layers): `policy:` in levels, the keys that say one
    thing once. `resolve()` gives the settings the daemon runs with."""

    policy: PolicySettings = PolicySettings()

    def resolve(self, written: dict[str, Any] | None = None) -> dict[str, Any]:
        """The runtime config (MetctlConfig) as data: level-1 keys and `datastore.move_mb_s`
        fed into every internal field that said the same thing (controller.layers.FED)."""
        data = self.model_dump(exclude={"policy"})
        policy = self.policy.internals(self.datastore.driver == "cassandra")
        policy["move_mb_s"] = self.datastore.move_mb_s
        data["policy"] = policy
        data["loop"].update(self.policy.loop_internals())
        data["executor"]["move_mb_s"] = self.datastore.move_mb_s
        data["simulator"]["actions"]["sender_mb_s"] = self.datastore.move_mb_s
        for key, path in state_paths(self.state_dir, written or {}).items():
            *sections, name = key.split(".")
            node = data
            for section in sections:
                node = node[section]
            node[name] = path
        return data


class MetctlConfig(_Sections):
    """The settings the daemon runs with: `policy` is the decision core's (flat) parameters.
    Built from a file by `load_config`; tests and tools may build it directly."""

    policy: PolicyConfig = PolicyConfig()

    @model_validator(mode="after")
    def _cassandra_needs_store_placement(self) -> MetctlConfig:
        if self.datastore.driver == "cassandra" and self.policy.data_placement != "store":
            raise ValueError("policy.advanced.data_placement must be store with datastore.driver "
                             "cassandra: Cassandra places its own data, metctl cannot move it")
        return self


# ---------------------------------------------------------------- the metctl config


def default_config() -> MetctlConfig:
    """The embedded default: every section at its documented defaults (the simulator demo)."""
    return MetctlConfig()


def load_config(path: str | Path | None) -> MetctlConfig:
    """The config in `path` (YAML), or the embedded default when `path` is None.

    An empty file is the default config; unknown keys, wrong types and out-of-range values are
    BadInput naming the file, the field path and what was expected. A key that moved
    (controller.layers.DEPRECATED) still works, with one DeprecatedKey warning naming its new
    place.
    """
    if path is None:
        return default_config()
    doc = load_document(path)
    # relative state paths from the file's directory, not the one metctl runs in
    return with_state_paths(config_from(doc.data, doc.file, doc), state_base_of(doc.file, doc.data))


def config_from(data: Any, file: str, document: Document | None = None) -> MetctlConfig:
    """The runtime config of a parsed config document (see load_config)."""
    try:
        data, notes = migrate(data)
    except Conflict as err:
        raise BadInput(file, err.field, err.expected) from None
    data = calibration.apply(data, file, document)
    written = parse_model(ConfigFile, data, file, document)
    warn(file, notes)
    # The cross-field checks of the runtime settings (the policy's thresholds, Cassandra's
    # placement) name the runtime field; the file's own keys were checked above.
    return parse_model(MetctlConfig, written.resolve(state_files_written(data)), file)


__all__ = ["MetctlConfig", "ConfigFile", "config_from", "Document", "load_document", "parse_model", "parse_file",
           "default_config", "load_config"]
