"""The driver Protocols the executor talks to: one for infrastructure (where nodes come from),
one for the data store (where partitions live). Real drivers (EC2, OpenStack, local processes,
HBase) and the simulator implement them; the executor never knows which it has.

Drivers are thin and non-blocking where the underlying API allows: the executor starts an
operation and then observes its effect on later ticks (Ray autoscaler v2's reconciler style),
so one code path serves real time and simulated time alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol, runtime_checkable

# Lifecycle of a node as the infrastructure reports it.
INSTANCE_STATES = ("requested", "booting", "running", "stopping", "terminated", "failed")

# Tags (EC2) / metadata (OpenStack) / labels (local) metctl puts on every node it launches.
TAG_MANAGED = "metctl:managed"  # value "true"
TAG_CLUSTER = "metctl:cluster"
TAG_PROFILE = "metctl:profile"
# Launch token "<plan id>/<step>/<attempt>": lets a restarted executor find (adopt) a node whose
# launch call went out just before the controller died, instead of launching a second one.
TAG_LAUNCH = "metctl:launch"


@dataclass(frozen=True)
class ManagedNode:
    """A node as the infrastructure driver sees it."""

    instance_id: str  # the cloud's id (EC2 instance id, Nova server id, local PID label, sim id)
    state: str  # one of INSTANCE_STATES
    profile: str
    address: str | None = None  # host name or IP the data store will report for it
    launched_at: float | None = None  # seconds since the epoch (or simulated seconds)
    tags: Mapping[str, str] = field(default_factory=dict)
    # True for a node metctl did not launch but owns through infrastructure.adopt (actuator/adoption.py)
    adopted: bool = False


class DriverError(Exception):
    """An infrastructure or data-store operation failed. `retryable` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


class NotOwnedError(DriverError):
    """metctl was asked to touch a node it did not launch. Never retryable."""

    def __init__(self, message: str):
        super().__init__(message, retryable=False)


@runtime_checkable
class InfrastructureDriver(Protocol):
    def launch(self, profile: str, user_data: str, tags: Mapping[str, str]) -> str:
        """Ask for one node configured with `profile`; return its instance id at once."""

    def nodes(self) -> list[ManagedNode]:
        """Every node this driver's cluster owns — launched (tagged metctl:managed=true) or adopted
        (infrastructure.adopt) — terminated ones excluded."""

    def terminate(self, instance_id: str) -> None:
        """Terminate an owned node; raise NotOwnedError for anything metctl neither launched nor adopted."""


@dataclass(frozen=True)
class ServerInfo:
    """A data-store server (HBase RegionServer) as the data store reports it."""

    id: str  # stable id the data store uses, e.g. "rs1.example.org,16020" (no start code)
    host: str  # matches ManagedNode.address for nodes metctl launched
    profile: str = "default"
    state: str = "active"  # active | draining | stopped | starting (registered, not serving yet)
    # its HTTP info endpoint (http://host:port, HBase: the RegionServer's /jmx and /conf) when the
    # data store reports it; lets the monitor poll servers metctl launched
    info_url: str | None = None


@dataclass(frozen=True)
class PartitionLocation:
    id: str
    table: str
    server: str | None  # None while the partition is in transition / offline
    # Its data, MiB, when the store copies data on a move and reports it (the simulator's
    # transfers); a move then gets time for the copy. None for HBase: a region move copies
    # nothing (its files stay in HDFS).
    size_mb: float | None = None


@runtime_checkable
class DataStoreDriver(Protocol):
    def servers(self) -> list[ServerInfo]: ...

    def partitions(self) -> list[PartitionLocation]: ...

    def move_partition(self, partition_id: str, target_server: str) -> None:
        """Start (or perform) a move. Idempotent: moving to where it already is does nothing."""

    def restart_server(self, server_id: str, profile: str) -> None:
        """Restart the server with `profile`'s settings (its partitions must be moved off first)."""

    def compact(self, partition_id: str) -> None:
        """Start a major compaction of one partition (restores locality)."""

    def compaction_running(self, partition_id: str) -> bool: ...

    def split_partition(self, partition_id: str) -> None:
        """Start splitting a partition in two at the store's own split point (HBase: the middle
        key of its largest store file); both daughters stay on its server. The split is done
        when `partitions()` no longer lists the partition and lists more partitions of its
        table than before. Idempotent: a partition already split (no longer listed) is not an
        error. Raise DriverError(retryable=False) when the store cannot split it (Cassandra
        has no such operation; a region too small to split)."""

    def decommission(self, server_id: str) -> None:
        """Stop the server gracefully once it serves no partitions (HBase: graceful stop)."""

    def set_balancer(self, enabled: bool) -> bool:
        """Switch the store's own balancer; return whether it was on before."""
