"""The configuration in layers: what the file says, and how it becomes the settings the daemon
runs with (controller.config.MetctlConfig).

- Level 0, what the cluster is: `cluster`, the datastore and infrastructure sections, the
  endpoints metctl reads and serves (`LEVEL_0`).
- Level 1, about ten keys an operator tunes, all under `policy:` (`PolicySettings`): a preset,
  the SLO, min/max nodes, the scale-out and scale-in behaviour, the prediction cycle.
- Level 2, `policy.advanced:`: any internal of the preset (a field of decision.policy.PolicyConfig
  that no level-1 key sets); and the rest of the sections, marked advanced in the reference.

One setting, one key: a level-1 key or `datastore.move_mb_s` feeds every internal field that
said the same thing (`FED`); those fields are no file keys. Keys that moved keep working for
one release (`DEPRECATED`): `migrate()` moves them and warns in one line naming the new key.
"""
from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from pydantic.fields import FieldInfo

from common.errors import DeprecatedKey
from decision.policies import policy_key
from decision.policy import PolicyConfig


# ---------------------------------------------------------------- presets


@dataclass(frozen=True)
class Preset:
    """A named policy: the decision core's policy and the internals it sets, and its defaults
    of the two behaviour windows. `warms_up`: the policy itself treats load after a plan as
    warm-up for `scale_out.cooldown_s` (met's guarded steps); for the others the control loop
    holds size changes that long. `scale_in_window`: the policy's own internal that
    `scale_in.stabilization_s` sets (target-tracking's HPA window); None: the loop holds
    scale-in that long."""

    description: str
    internals: Mapping[str, Any]
    cooldown_s: float
    warms_up: bool = False
    stabilization_s: float = 0.0
    scale_in_window: str | None = None


_MET_WARMUP_S = PolicyConfig.model_fields["warmup_s"].default

PRESETS: dict[str, Preset] = {
    "met": Preset("MET's health rules with the guarded steps (diagnose, proportional sizing, "
                  "verify after acting, scale in on headroom, move only what pays); the default; "
                  "docs/policy.md", {"name": "met"}, _MET_WARMUP_S, warms_up=True),
    "met-paper": Preset("MET as the paper writes it (Algorithm 1 sizing, full re-placement and "
                        "profiles at every decision)", {"name": "met", "paper_faithful": True}, 0.0),
    "conservative": Preset(
        "met keeping more headroom: plans for 60 % of the overload marks instead of 75 %, "
        "scales in only while one node fewer stays under 60 % of cpu_high and every node "
        "answers within 40 % of the SLO (assumption: a starting point, not measured)",
        {"name": "met", "target_utilisation": 0.6, "scale_in_headroom": 0.6,
         "scale_in_latency_fraction": 0.4}, _MET_WARMUP_S, warms_up=True),
    "aggressive": Preset(
        "met spending fewer nodes: plans for 85 % of the overload marks, scales in while one "
        "node fewer stays under 90 % of cpu_high, scales out up to doubling (HPA's limit) "
        "(assumption: a starting point, not measured)",
        {"name": "met", "target_utilisation": 0.85, "scale_in_headroom": 0.9,
         "scale_out_ceiling": "double"}, _MET_WARMUP_S, warms_up=True),
    "tiramola": Preset("tiramola: one node in or out on running-average CPU, no placement "
                       "(the baseline of the tiramola paper)", {"name": "tiramola"}, 0.0),
    "target-tracking": Preset(
        "mean CPU kept at advanced.target_cpu, the way Kubernetes' HPA and AWS target "
        "tracking scale (a baseline; scale-in stabilisation 300 s, HPA's default)",
        {"name": "target-tracking"}, 0.0,
        stabilization_s=PolicyConfig.model_fields["target_scale_in_window_s"].default,
        scale_in_window="target_scale_in_window_s"),
    "static": Preset("never acts (a baseline for comparisons)", {"name": "static"}, 0.0),
}

PresetName = Literal["met", "met-paper", "conservative", "aggressive", "tiramola",
                     "target-tracking", "static"]


def preset_of(policy: PolicyConfig) -> str:
    """The preset a runtime policy is closest to (for messages and `metctl validate`)."""
    return policy_key(policy)


# ---------------------------------------------------------------- level 1: `policy:`


def _like(model: type[BaseModel], name: str, **changes: Any) -> Any:
    """The field `name` of `model` (its default, constraints and description) for a key that
    says the same thing elsewhere: one description, one default. Typed Any: it stands where a
    default value goes."""
    info = copy.copy(model.model_fields[name])
    for key, value in changes.items():
        setattr(info, key, value)
    return info


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SloSettings(_Section):
    """The tenants' service-level objective."""

    latency_ms: float | Literal["off"] | None = Field(
        None, description="The latency objective, ms: a node's overload asks for capacity (or "
        "a move) only while the requests it serves take longer than this (HBase /jmx "
        "TotalCallTime_mean, or its p99 with monitor.hbase_call_time: p99) or calls wait for "
        "it (over 60 in its RPC call queue, or any dropped), and the cluster shrinks only "
        "while every node answers well "
        "within it (advanced.scale_in_latency_fraction). `'off'` (quoted: YAML reads a bare "
        "off as false): decide on CPU and io_wait alone, as MET does. null: no objective (`metctl simulate` then uses the scenario's "
        "slo_latency_ms).")

    @field_validator("latency_ms", mode="before")
    @classmethod
    def _off_is_quoted(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError('a latency in ms, "off" (quoted: YAML reads a bare off as false) '
                             "or null")
        return v

    @field_validator("latency_ms")
    @classmethod
    def _positive(cls, v: float | str | None) -> float | str | None:
        if isinstance(v, float) and not v > 0:
            raise ValueError('a latency above 0 ms, "off" or null')
        return v


class ScaleOutSettings(_Section):
    """How scale-out behaves."""

    cooldown_s: float | None = Field(
        None, ge=0, description="Seconds after a plan during which the load is warm-up (cold "
        "caches, moved partitions): no further scale-out on it. The default met judges it "
        "itself (overload then is `transient`); with the other presets the control loop holds "
        "size changes that long after a scale-out. null: the preset's (met, conservative, "
        f"aggressive: {_MET_WARMUP_S:g}; met-paper, tiramola, static: 0).")


class ScaleInSettings(_Section):
    """How scale-in behaves."""

    stabilization_s: float | None = Field(
        None, ge=0, description="A scale-in happens only when every decision for this many "
        "seconds wanted at least that few nodes (Kubernetes' HPA: 300 s). null: the preset's "
        "(target-tracking: 300; the others: 0, act on the first such decision, as MET §6.4 "
        "did).")


class PredictionSettings(_Section):
    """Predictive scale-out: the load's cycle (the default met; docs/policy.md)."""

    cycle_s: float | None = _like(PolicyConfig, "predict_cycle_s")
    detect: bool = _like(PolicyConfig, "detect_cycle")


# Internal fields a level-1 key (or another section's key) sets: never written under advanced.
LEVEL_1_INTERNALS = frozenset({"name", "paper_faithful", "min_nodes", "max_nodes", "warmup_s",
                               "latency_slo_ms", "latency_gate", "predict_cycle_s", "detect_cycle",
                               "move_mb_s", "target_scale_in_window_s"})
ADVANCED_FIELDS = tuple(n for n in PolicyConfig.model_fields if n not in LEVEL_1_INTERNALS)


def _optional(info: FieldInfo) -> tuple[Any, FieldInfo]:
    optional = copy.copy(info)
    optional.default, optional.default_factory = None, None
    annotation: Any = info.annotation
    return annotation | None, optional


if TYPE_CHECKING:
    PolicyAdvanced = BaseModel
else:
    # Every internal of the preset, optional (None: the preset's), with PolicyConfig's own
    # constraints: a bad value is refused where it is written (policy.advanced.<name>).
    PolicyAdvanced = create_model(
        "PolicyAdvanced", __config__=ConfigDict(extra="forbid", frozen=True),
        **{n: _optional(PolicyConfig.model_fields[n]) for n in ADVANCED_FIELDS})


class PolicySettings(_Section):
    """The `policy:` section as written: level 1, and `advanced:` for the preset's internals."""

    preset: PresetName = Field(
        "met", description="The policy: " + "; ".join(f"`{n}`: {p.description}"
                                                     for n, p in PRESETS.items()) + ".")
    slo: SloSettings = SloSettings()
    min_nodes: int = _like(PolicyConfig, "min_nodes")
    max_nodes: int = _like(PolicyConfig, "max_nodes")
    scale_out: ScaleOutSettings = ScaleOutSettings()
    scale_in: ScaleInSettings = ScaleInSettings()
    prediction: PredictionSettings = PredictionSettings()
    advanced: dict[str, Any] = Field(
        default_factory=dict, description="Overrides of the preset's internals (level 2): any "
        "key of the `policy.advanced` table below; unset keys take the preset's value.")

    @field_validator("advanced", mode="before")
    @classmethod
    def _internals(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value  # pydantic refuses it as "a mapping"
        checked = PolicyAdvanced.model_validate(value)
        return {k: getattr(checked, k) for k in value}

    def internals(self, datastore_places_data: bool) -> dict[str, Any]:
        """The runtime policy (decision.policy.PolicyConfig) this section describes, as data."""
        preset = PRESETS[self.preset]
        slo = self.slo.latency_ms
        out: dict[str, Any] = {
            **preset.internals,
            "min_nodes": self.min_nodes, "max_nodes": self.max_nodes,
            "latency_slo_ms": None if slo in (None, "off") else slo,
            "latency_gate": slo != "off",
            "predict_cycle_s": self.prediction.cycle_s,
            "detect_cycle": self.prediction.detect}
        if preset.warms_up:
            out["warmup_s"] = self.cooldown_s()
        if preset.scale_in_window is not None:
            out[preset.scale_in_window] = self.stabilization_s()
        if datastore_places_data:  # Cassandra places its own data: the policy only sizes
            out["data_placement"] = "store"
        out.update(self.advanced)
        return out

    def cooldown_s(self) -> float:
        given = self.scale_out.cooldown_s
        return PRESETS[self.preset].cooldown_s if given is None else given

    def stabilization_s(self) -> float:
        given = self.scale_in.stabilization_s
        return PRESETS[self.preset].stabilization_s if given is None else given

    def loop_internals(self) -> dict[str, Any]:
        """What the control loop holds on (controller.loop_settings.LoopSettings), as data: the
        windows the preset's policy does not keep itself."""
        preset = PRESETS[self.preset]
        return {"scale_in_stabilization_s": 0.0 if preset.scale_in_window is not None
                else self.stabilization_s(),
                "cooldown_after_scale_out_s": 0.0 if preset.warms_up else self.cooldown_s()}


# ---------------------------------------------------------------- level 0 and fed fields

# Keys that say what the cluster is (whole sections end in a dot).
LEVEL_0 = ("cluster", "state_dir", "datastore.", "infrastructure.", "monitor.ganglia_endpoints",
           "monitor.ganglia_clusters", "monitor.prometheus_url", "monitor.prometheus_selector",
           "monitor.hbase_jmx_urls", "control.api_address", "telemetry.prometheus_address",
           "ha.zookeeper_hosts")

# Internal fields set from one file key: (section path, field) -> the file key. They are not
# file keys themselves (the reference leaves them out; writing them is a deprecated form).
FED: dict[str, str] = {
    "loop.scale_in_stabilization_s": "policy.scale_in.stabilization_s",
    "loop.cooldown_after_scale_out_s": "policy.scale_out.cooldown_s",
    "executor.move_mb_s": "datastore.move_mb_s",
    "simulator.actions.sender_mb_s": "datastore.move_mb_s",
    **{key: "state_dir" for key in ("executor.journal_path", "control.token_file",
                                    "control.state_path", "infrastructure.local.state_dir")},
}


# The files metctl keeps, each in `state_dir` under its own name; the old keys that named each
# path still work (a warning) and then win over state_dir.
STATE_FILES: dict[str, str] = {
    "executor.journal_path": "journal.sqlite",
    "loop.memory_path": "memory.json",
    "control.token_file": "api-token",
    "control.state_path": "control.json",
    "infrastructure.local.state_dir": "local-nodes",
}


def state_paths(state_dir: str, written: dict[str, Any]) -> dict[str, Any]:
    """Each state file's path: in `state_dir`, unless the document names the file itself
    (`written`: the old keys it sets)."""
    paths = {key: written[key] if key in written else f"{state_dir.rstrip('/')}/{name}"
             for key, name in STATE_FILES.items()}
    if "control.state_path" not in written:
        # None: control.json beside the memory (or the journal), controller.control_store's rule,
        # which is state_dir/control.json when those are in state_dir too
        paths["control.state_path"] = None
    return paths


def state_files_written(data: Any) -> dict[str, Any]:
    """The state-file keys a document sets itself (old keys, honoured for one release)."""
    out = {}
    for key in STATE_FILES:
        found, value = _get(data, key) if isinstance(data, dict) else (False, None)
        if found:
            out[key] = value
    return out


def level_of(path: str) -> int:
    """0, 1 or 2 for a file key (`policy.slo.latency_ms`)."""
    if path.startswith("policy."):
        return 2 if path.startswith("policy.advanced") else 1
    return 0 if any(path == p or (p.endswith(".") and path.startswith(p)) for p in LEVEL_0) else 2


# ---------------------------------------------------------------- deprecated keys


@dataclass(frozen=True)
class Moved:
    """`old` (a dotted path) now lives at `new`; `value` turns the old value into the new one."""

    old: str
    new: str
    value: Callable[[Any], Any] = field(default=lambda v: v)
    why: str = ""


def _preset_from_name(name: Any) -> Any:
    return name  # met, tiramola and static are presets of the same name


DEPRECATED: tuple[Moved, ...] = (
    Moved("policy.name", "policy.preset", _preset_from_name),
    Moved("policy.warmup_s", "policy.scale_out.cooldown_s"),
    Moved("policy.latency_slo_ms", "policy.slo.latency_ms"),
    Moved("policy.predict_cycle_s", "policy.prediction.cycle_s"),
    Moved("loop.scale_in_stabilization_s", "policy.scale_in.stabilization_s"),
    Moved("policy.target_scale_in_window_s", "policy.scale_in.stabilization_s"),
    Moved("loop.cooldown_after_scale_out_s", "policy.scale_out.cooldown_s",
          why=" (one window after a scale-out: met's warm-up, the loop's cooldown for the "
              "other presets)"),
    Moved("policy.move_mb_s", "datastore.move_mb_s"),
    Moved("executor.move_mb_s", "datastore.move_mb_s"),
    Moved("simulator.actions.sender_mb_s", "datastore.move_mb_s"),
    *(Moved(f"policy.{n}", f"policy.advanced.{n}") for n in ADVANCED_FIELDS),
)


@dataclass(frozen=True)
class Merged:
    """Several keys that said one thing for different sources are one key `new` now. When the
    old keys a file sets differ, the largest holds (a timeout or a size limit: nothing that was
    answered in time or read whole before is cut off now), and the warning says so."""

    olds: tuple[str, ...]
    new: str


_SOURCES = ("ganglia", "prometheus")
MERGED: tuple[Merged, ...] = (
    Merged(tuple(f"monitor.{s}_connect_timeout_s" for s in _SOURCES),
           "monitor.http.connect_timeout_s"),
    Merged((*(f"monitor.{s}_read_timeout_s" for s in _SOURCES), "monitor.hbase_jmx_timeout_s"),
           "monitor.http.read_timeout_s"),
    Merged((*(f"monitor.{s}_max_mb" for s in _SOURCES), "monitor.hbase_jmx_max_mb"),
           "monitor.http.max_mb"),
)


def _pop(data: dict[str, Any], path: str) -> tuple[bool, Any]:
    *parents, last = path.split(".")
    node: Any = data
    for p in parents:
        node = node.get(p) if isinstance(node, dict) else None
    if isinstance(node, dict) and last in node:
        return True, node.pop(last)
    return False, None


def _get(data: dict[str, Any], path: str) -> tuple[bool, Any]:
    node: Any = data
    for p in path.split("."):
        if not isinstance(node, dict) or p not in node:
            return False, None
        node = node[p]
    return True, node


def _put(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node = data
    for p in parents:
        child = node.get(p)
        if not isinstance(child, dict):
            child = node[p] = {} if child is None else child
        if not isinstance(child, dict):
            return  # the section itself is not a mapping: validation says so
        node = child
    node[last] = value


class Conflict(ValueError):
    """An old key and its new key (or two old keys of one setting) say different things."""

    def __init__(self, field: str, expected: str):
        self.field, self.expected = field, expected
        super().__init__(f"{field}: {expected}")


def migrate(data: Any) -> tuple[Any, list[str]]:
    """The document with every deprecated key moved to its new place, and one warning line for
    each. An old key beside its new key (or two old keys of one setting) with different values
    is a Conflict naming both."""
    if not isinstance(data, dict):
        return data, []
    data = copy.deepcopy(data)
    notes: list[str] = []
    policy = data.get("policy")
    if isinstance(policy, dict) and "paper_faithful" in policy:
        faithful = policy.pop("paper_faithful")
        if faithful is True and policy.get("name", "met") == "met":
            policy["name"] = "met-paper"
        notes.append("policy.paper_faithful is deprecated: write policy.preset: "
                     f"{'met-paper' if faithful is True else 'met'}")
    for key, name in STATE_FILES.items():
        found, value = _get(data, key)
        if found and not (key == "loop.memory_path" and value is None):
            notes.append(f"{key} is deprecated: set state_dir (this file is <state_dir>/{name})")
    if isinstance(policy, dict) and "latency_gate" in policy:
        gate = policy.pop("latency_gate")
        notes.append("policy.latency_gate is deprecated: write policy.slo.latency_ms: off "
                     "(or a latency) instead")
        if gate is False:
            policy.pop("latency_slo_ms", None)
            if _get(data, "policy.slo.latency_ms")[1] not in (None, "off"):
                raise Conflict("policy.latency_gate", "true or unset with policy.slo.latency_ms "
                               "set (policy.slo.latency_ms: off is the new form)")
            _put(data, "policy.slo.latency_ms", "off")
    for row in DEPRECATED:
        found, value = _pop(data, row.old)
        if not found:
            continue
        new_value = row.value(value)
        shown = f": {new_value}" if isinstance(new_value, str | int | float) else ""
        notes.append(f"{row.old} is deprecated: write {row.new}{shown}{row.why}")
        present, current = _get(data, row.new)
        if present and current != new_value:
            raise Conflict(row.old, f"{row.new} ({current!r}) or this key, not both: they "
                           f"are one setting now (this one says {value!r})")
        _put(data, row.new, new_value)
    for merged in MERGED:
        notes.extend(_merge(data, merged))
    return data, notes


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _merge(data: dict[str, Any], merged: Merged) -> list[str]:
    """Move `merged`'s old keys that `data` sets to its new key; the warnings to give."""
    found = {}
    for old in merged.olds:
        present, value = _pop(data, old)
        if present:
            found[old] = value
    if not found:
        return []
    values = list(found.values())
    numbers = [v for v in values if _is_number(v)]
    # a value that is not a number goes on as it is: validation names it
    value = max(numbers) if len(numbers) == len(values) else \
        next(v for v in values if not _is_number(v))
    several = len(set(map(repr, values))) > 1
    notes = [f"{old} is deprecated: write {merged.new}: {value}"
             + (f" (the largest of {', '.join(found)})" if several else "") for old in found]
    present, current = _get(data, merged.new)
    if present and current != value:
        first = next(iter(found))
        raise Conflict(first, f"{merged.new} ({current!r}) or this key, not both: they are "
                       f"one setting now (this one says {found[first]!r})")
    _put(data, merged.new, value)
    return notes


def warn(file: str, notes: list[str]) -> None:
    for note in notes:
        warnings.warn(f"{file}: {note} (the old key works until the next release)",
                      DeprecatedKey, stacklevel=3)


__all__ = ["PRESETS", "PolicySettings", "PolicyAdvanced", "LEVEL_0", "FED", "DEPRECATED", "MERGED",
           "DeprecatedKey", "Conflict", "migrate", "warn", "level_of", "preset_of"]
