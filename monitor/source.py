"""The metrics-source Protocol and the raw sample it returns.

A source reports what it saw at one instant: system metrics per host and *cumulative*
per-partition request counters, exactly as HBase's /jmx exposes them. Turning counters into
rates and smoothing them is the monitor's job, so the simulator and the real sources go through
the same path.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class HostSample:
    host: str  # host name as the source knows it (Ganglia host name / data-store server id)
    cpu: float | None = None  # fractions 0..1; None = missing in this sample
    io_wait: float | None = None
    memory: float | None = None
    stale: bool = False
    reason: str = ""  # why missing or stale
    # "host": the machine's metrics (Ganglia, Prometheus). "process": one data-store server's own
    # process, `host` being its server id (the RegionServer JVM's CPU when several share a
    # machine); its non-None values replace the machine's for that server only.
    scope: Literal["host", "process"] = "host"


@dataclass(frozen=True)
class PartitionSample:
    id: str
    table: str
    server: str  # data-store server id serving it
    reads: float  # cumulative counters since the region opened on this server
    writes: float
    scans: float
    size_mb: float | None = None
    locality: float | None = None


@dataclass(frozen=True)
class Sample:
    taken_at: float  # seconds (epoch for real sources, simulated seconds for the simulator)
    hosts: tuple[HostSample, ...] = ()
    partitions: tuple[PartitionSample, ...] = ()
    # server id -> profile, when the source knows it (the simulator, the HBase driver)
    server_profiles: dict[str, str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()  # source-level problems: unreachable endpoint, bad XML, …
    # Data-store servers this source saw alive, including those serving no partition yet (a new
    # RegionServer). Optional: servers named in `partitions` count as seen anyway.
    servers: tuple[str, ...] = ()
    # Data-store server id -> mean time a request spent in it (RPC queue + processing), ms, as
    # the server reports it. Optional: a node without one has rpc_latency_ms None.
    server_latency_ms: dict[str, float] = field(default_factory=dict)
    # Data-store server id -> calls waiting in its RPC call queues, as the server reports it.
    # Optional: a node without one has rpc_queue_length None.
    server_queue_length: dict[str, float] = field(default_factory=dict)
    # Data-store server id -> calls it refused or dropped unanswered since it started (a
    # cumulative counter; the collector makes it a rate). Optional.
    server_dropped_calls: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class MetricsSource(Protocol):
    def sample(self) -> Sample:
        """Collect once. Never raises for a bad endpoint: reports it in `errors` instead."""
