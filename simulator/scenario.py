"""Scenario files: the initial cluster, the YCSB workloads (MET §3.1) and the phases that switch
them on and off. A workload is a closed loop of client threads (YCSB), or open loop: requests
arrive at a scheduled rate (`rate:`) whether or not the cluster keeps up. Loaded from YAML and
validated with pydantic; a bad file is a BadInput naming the file, the field and what was
expected."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import (
    AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator,
)

from common.errors import BadInput
from common.models import parse_file, parse_model

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "configs" / "scenarios"

# YCSB operation mixes (MET §3.1; B and D modified by MET for a 1.9:1 read/write ratio).
YCSB_MIXES: dict[str, dict[str, float]] = {
    "A": {"read": 0.5, "update": 0.5},
    "B": {"update": 1.0},
    "C": {"read": 1.0},
    "D": {"read": 0.05, "insert": 0.95},
    "E": {"scan": 0.95, "insert": 0.05},
    "F": {"read": 0.5, "rmw": 0.5},
}
OPS = ("read", "update", "insert", "scan", "rmw")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
OpsPerS = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _increasing(points: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
    for i in range(1, len(points)):
        if points[i][0] <= points[i - 1][0]:
            raise ValueError(f"[t_s, ops_per_s] points with increasing times; point {i} is at "
                             f"{points[i][0]:g} s, after {points[i - 1][0]:g} s")
    return points


Points = Annotated[tuple[tuple[Seconds, OpsPerS], ...], Field(min_length=1), AfterValidator(_increasing)]


class _Noise(_Frozen):
    noise: float = Field(0.0, ge=0, le=1, allow_inf_nan=False, description="Relative standard deviation of a multiplicative noise on the rate (lognormal, mean 1), a new draw every noise_interval_s; 0: none.")
    noise_interval_s: float = Field(60.0, gt=0, allow_inf_nan=False, description="Seconds each noise draw lasts.")
    noise_seed: int | None = Field(None, description="Seed of the noise; default: the scenario's seed.")


class PointsRate(_Noise):
    """Piecewise linear through [t_s, ops_per_s] points; the first and last value hold outside."""
    shape: Literal["points"] = Field(..., description="points: piecewise linear (the bare list form, with noise keys allowed).")
    points: Points = Field(..., description="[t_s, ops_per_s] pairs, times increasing; the first and last rate hold before and after.")


class ConstantRate(_Noise):
    shape: Literal["constant"] = Field(..., description="constant: one rate throughout.")
    ops_per_s: OpsPerS = Field(..., description="Requests per second.")


class RampRate(_Noise):
    """from_ops_per_s until start_s, linear to to_ops_per_s at end_s, then held."""
    shape: Literal["ramp"] = Field(..., description="ramp: from one rate to another, linearly.")
    from_ops_per_s: OpsPerS = Field(..., description="Rate until start_s.")
    to_ops_per_s: OpsPerS = Field(..., description="Rate from end_s on.")
    start_s: Seconds = Field(0.0, description="When the ramp starts.")
    end_s: Seconds = Field(..., description="When it ends (after start_s).")

    @model_validator(mode="after")
    def _check(self) -> "RampRate":
        if self.end_s <= self.start_s:
            raise ValueError("end_s after start_s")
        return self


class StepsRate(_Noise):
    """Piecewise constant: each [t_s, ops_per_s] holds from t_s until the next (the first value
    also before it)."""
    shape: Literal["steps"] = Field(..., description="steps: piecewise constant.")
    steps: Points = Field(..., description="[t_s, ops_per_s] pairs, times increasing; each rate holds from its time to the next (the first also before it).")


class DailyRate(_Noise):
    """A sine: mean_ops_per_s · (1 + amplitude · sin(2π (t − phase_s) / period_s)); rises
    through the mean at phase_s and peaks a quarter period later."""
    shape: Literal["daily"] = Field(..., description="daily: mean x (1 + amplitude x sin(2 pi (t - phase_s) / period_s)).")
    mean_ops_per_s: OpsPerS = Field(..., description="Mean rate over a period.")
    amplitude: float = Field(0.5, ge=0, le=1, allow_inf_nan=False, description="Swing as a share of the mean (0.5: from 50 % to 150 % of it).")
    period_s: float = Field(86400.0, gt=0, allow_inf_nan=False, description="Length of one cycle (a day; compress it to show several in a run).")
    phase_s: float = Field(0.0, allow_inf_nan=False, description="When the rate rises through its mean; the peak comes a quarter period later.")


class SpikeRate(_Noise):
    """base_ops_per_s, rising linearly over ramp_s from at_s to peak_ops_per_s, held for
    duration_s, falling back over ramp_s."""
    shape: Literal["spike"] = Field(..., description="spike: a base rate with one flash crowd.")
    base_ops_per_s: OpsPerS = Field(..., description="Rate before and after the spike.")
    peak_ops_per_s: OpsPerS = Field(..., description="Rate at the top of the spike.")
    at_s: Seconds = Field(..., description="When the rate starts to rise.")
    duration_s: float = Field(..., gt=0, allow_inf_nan=False, description="How long the peak holds (between the ramps).")
    ramp_s: Seconds = Field(60.0, description="Seconds to rise to the peak, and to fall back.")


RATE_SHAPES = ("points", "constant", "ramp", "steps", "daily", "spike")


def _rate_tag(value: Any) -> str | None:
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return value.get("shape")
    return getattr(value, "shape", None)


RateSpec = Annotated[
    Union[Annotated[Points, Tag("list")], Annotated[PointsRate, Tag("points")],
          Annotated[ConstantRate, Tag("constant")], Annotated[RampRate, Tag("ramp")],
          Annotated[StepsRate, Tag("steps")], Annotated[DailyRate, Tag("daily")],
          Annotated[SpikeRate, Tag("spike")]],
    Discriminator(_rate_tag, custom_error_type="rate_shape",
                  custom_error_message="a list of [t_s, ops_per_s] points, or a mapping with shape: "
                  + ", ".join(RATE_SHAPES))]


class Workload(_Frozen):
    name: str = Field(..., description="Workload name, e.g. A … F.")
    ycsb: str | None = Field(None, description="A YCSB workload letter (A–F, MET §3.1 mixes); or give `mix`.")
    mix: dict[str, float] | None = Field(None, description="Operation proportions over read, update, insert, scan, rmw; sums to 1.")
    threads: int = Field(50, ge=1, description="Closed-loop client threads. MET §3.2: 50 (D: 5).")
    target_ops: float | None = Field(None, gt=0, description="YCSB -target: cap in operations/s (MET: D at 1500). None: no cap.")
    records: int = Field(1_000_000, ge=1, description="Records loaded. MET §3.1: 1,000,000 (D: 100,000).")
    regions: int = Field(4, ge=1, description="Regions of the workload's table. MET §3.1: 4 (D: 1).")
    hot_data_fraction: float = Field(0.4, gt=0, le=1, description="YCSB hotspotdatafraction. MET §3.1: 40 % of keys …")
    hot_ops_fraction: float = Field(0.5, ge=0, le=1, description="… get hotspotopnfraction = 50 % of requests.")
    client_host: str = Field("client-1", description="The client machine that runs it (client machines saturate, MET §6.4).")
    start_s: float = Field(0.0, ge=0, description="Seconds after the start when it switches on.")
    stop_s: float | None = Field(None, gt=0, description="Seconds after the start when it switches off. None: never.")
    rate: RateSpec | None = Field(None, description="Open loop: requests arrive at this rate (ops/s, Poisson) whether or not the cluster keeps up, instead of `threads` clients waiting for answers. A list of [t_s, ops_per_s] points (piecewise linear), or a mapping with shape: points | constant | ramp | steps | daily | spike and its keys, optional noise (docs/simulator.md, Open-loop workloads).")
    timeout_ms: float = Field(1000.0, gt=0, allow_inf_nan=False, description="Open loop: a request not answered this long after it arrived fails (counted, not served).")

    @model_validator(mode="after")
    def _check(self) -> "Workload":
        if self.rate is not None:
            given = sorted({"threads", "target_ops"} & self.model_fields_set)
            if given:
                raise ValueError(f"an open-loop workload (rate) has no {' or '.join(given)}: "
                                 "give rate or threads, not both")
        elif "timeout_ms" in self.model_fields_set:
            raise ValueError("timeout_ms is for open-loop workloads (give rate)")
        if self.ycsb is None and self.mix is None:
            raise ValueError("give `ycsb` (A–F) or `mix`")
        if self.ycsb is not None and self.ycsb.upper() not in YCSB_MIXES:
            raise ValueError("ycsb must be one of A, B, C, D, E, F")
        mix = self.op_mix()
        bad = set(mix) - set(OPS)
        if bad:
            raise ValueError(f"mix has unknown operations {sorted(bad)}; expected {list(OPS)}")
        if abs(sum(mix.values()) - 1.0) > 1e-6:
            raise ValueError("mix proportions must sum to 1")
        if self.stop_s is not None and self.stop_s <= self.start_s:
            raise ValueError("stop_s must be after start_s")
        return self

    def op_mix(self) -> dict[str, float]:
        return dict(self.mix) if self.mix is not None else dict(YCSB_MIXES[str(self.ycsb).upper()])

    def active(self, t: float) -> bool:
        return t >= self.start_s and (self.stop_s is None or t < self.stop_s)

    @property
    def open_loop(self) -> bool:
        return self.rate is not None


class ScriptedLaunch(_Frozen):
    """A node added by the scenario itself (a stand-in for an outside controller, e.g. the
    incremental-elasticity paper's response-time controller); the store's balancer gives it regions."""

    at_s: float = Field(..., ge=0, description="Seconds after the start when the node is launched.")
    profile: str = Field("default", description="Its profile.")


class Scenario(_Frozen):
    name: str = Field(..., description="Scenario name.")
    description: str = Field("", description="What it reproduces.")
    duration_s: float = Field(3600.0, gt=0, description="Simulated seconds.")
    seed: int = Field(1, description="Random seed (the store's balancer, initial placement, open-loop arrivals and their noise).")
    initial_nodes: int = Field(6, ge=1, description="RegionServers at the start. MET §6.4: 6.")
    initial_profile: str = Field("default", description="Profile of the initial nodes (homogeneous).")
    initial_placement: str = Field("balanced", description="balanced: hot regions spread evenly (MET §6.4: 'manually balanced'); random: HBase's random balancer.")
    slo_latency_ms: float = Field(50.0, gt=0, description="Response-time objective, ms (incr. paper: 50 ms).")
    slo_interval_s: float = Field(2.0, gt=0, description="Averaging window of the SLO score, s (incr. paper: 2 s).")
    slo_max_failed: float = Field(0.001, ge=0, le=1, allow_inf_nan=False, description="A tenant meets a window only if at most this share of the requests offered in it failed (default 0.1 %).")
    workloads: tuple[Workload, ...] = Field(..., min_length=1, description="The tenants, each a YCSB workload on a table of its own: closed loop (threads) or open loop (rate).")
    data_transfer: str | None = Field(None, description="Overrides simulator.data_transfer (none | incremental | parallel).")
    launches: tuple[ScriptedLaunch, ...] = Field((), description="Nodes the scenario adds by itself at given times (run them with --policy static).")
    hardware: dict[str, float] = Field(default_factory=dict, description="Overrides of simulator.hardware for this scenario's machines (e.g. ram_mb, heap_mb).")

    @model_validator(mode="after")
    def _check(self) -> "Scenario":
        names = [w.name for w in self.workloads]
        if len(set(names)) != len(names):
            raise ValueError("workload names must be unique")
        if self.initial_placement not in ("balanced", "random"):
            raise ValueError("initial_placement must be balanced or random")
        if self.data_transfer not in (None, "none", "incremental", "parallel"):
            raise ValueError("data_transfer must be none, incremental or parallel")
        from simulator.settings import HardwareSettings
        unknown = set(self.hardware) - set(HardwareSettings.model_fields)
        if unknown:
            raise ValueError(f"hardware: unknown keys {sorted(unknown)}; expected some of "
                             f"{sorted(HardwareSettings.model_fields)}")
        try:
            HardwareSettings.model_validate(self.hardware)
        except ValidationError as err:
            raise ValueError(f"hardware: {err.errors()[0]['loc'][0]}: {err.errors()[0]['msg']}") from None
        return self


def resolve_scenario_path(name_or_path: str | Path) -> Path:
    p = Path(name_or_path)
    if p.exists():
        return p
    candidate = SCENARIO_DIR / p.name
    if candidate.exists():
        return candidate
    if not candidate.suffix:
        candidate = candidate.with_suffix(".yaml")
        if candidate.exists():
            return candidate
    raise BadInput(str(name_or_path), "", "a scenario file (path, or a name in configs/scenarios/)")


def scenario_from_dict(data: Any, file: str = "<scenario>") -> Scenario:
    return parse_model(Scenario, data, file)


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Read and validate a scenario with the config loader (one BadInput line with the field
    path and its YAML line; duplicate keys and alias bombs refused)."""
    return parse_file(Scenario, resolve_scenario_path(name_or_path))
