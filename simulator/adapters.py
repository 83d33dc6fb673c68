"""The simulated cluster behind the interfaces the real components implement, so the control
loop cannot tell it from a live one:

* `SimMetricsSource` — a `monitor.source.MetricsSource`: per-region CUMULATIVE request counters
  (restarting at 0 when a region opens on a server, as HBase's /jmx does) and per-host cpu,
  io_wait and memory averaged over gmond's window; host name = data-store server id.
* `SimInfrastructure` — an `actuator.drivers.InfrastructureDriver`: launch returns at once, the
  VM boots for `vm_boot_s`, its RegionServer joins `rs_join_s` later; terminate refuses nodes
  metctl did not launch.
* `SimDataStore` — an `actuator.drivers.DataStoreDriver`: every operation only starts; its
  effect shows in `servers()` / `partitions()` after the simulated delay (a split: the parent
  is listed offline for `split_offline_s`, then its two daughters on its server).
* `SimClock` — `now()` is simulated time; `sleep(s)` advances the simulation by `s`.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from actuator.drivers import (
    TAG_CLUSTER, TAG_MANAGED, DriverError, ManagedNode, NotOwnedError, PartitionLocation, ServerInfo,
)
from monitor.source import HostSample, PartitionSample, Sample
from simulator.cluster import SimCluster


class SimClock:
    """Simulated time: `sleep` runs the cluster forward instead of waiting."""

    def __init__(self, cluster: SimCluster):
        self.cluster = cluster

    def now(self) -> float:
        return self.cluster.t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.cluster.run_until(self.cluster.t + seconds)


class SimMetricsSource:
    def __init__(self, cluster: SimCluster):
        self.cluster = cluster

    def sample(self) -> Sample:
        c = self.cluster
        hosts = []
        profiles: dict[str, str] = {}
        servers = []
        latency: dict[str, float] = {}
        queue: dict[str, float] = {}
        dropped: dict[str, float] = {}
        for n in c.nodes:
            if n.vm_state != "running" or n.rs_state in ("absent", "stopped"):
                continue
            m = c.host_metrics(n)
            if m is None:
                hosts.append(HostSample(host=n.server_id, stale=True, reason="no report yet"))
            else:
                hosts.append(HostSample(host=n.server_id, cpu=m[0], io_wait=m[1], memory=m[2]))
            if n.rs_state == "active":
                servers.append(n.server_id)
                profiles[n.server_id] = n.profile
                ms = c.server_latency_ms(n)
                if ms is not None:
                    latency[n.server_id] = ms
                waiting = c.server_queue_length(n)
                if waiting is not None:
                    queue[n.server_id] = waiting
                dropped[n.server_id] = n.dropped
        parts = []
        reg = c.regions
        for r in np.where(reg.server >= 0)[0]:
            node = c.nodes[int(reg.server[r])]
            parts.append(PartitionSample(
                id=reg.ids[r], table=reg.tables[r], server=node.server_id,
                reads=float(reg.reads[r]), writes=float(reg.writes[r]), scans=float(reg.scans[r]),
                size_mb=float(reg.size[r]), locality=float(reg.locality[r])))
        return Sample(taken_at=c.t, hosts=tuple(hosts), partitions=tuple(parts),
                      server_profiles=profiles, servers=tuple(servers), server_latency_ms=latency,
                      server_queue_length=queue, server_dropped_calls=dropped)


class SimInfrastructure:
    def __init__(self, cluster: SimCluster):
        self.cluster = cluster

    def _owned(self, n) -> bool:
        return n.tags.get(TAG_MANAGED) == "true" and n.tags.get(TAG_CLUSTER) == self.cluster.cluster

    def launch(self, profile: str, user_data: str, tags: Mapping[str, str]) -> str:
        if profile not in self.cluster.settings.profiles:
            raise DriverError(f"unknown profile {profile!r}", retryable=False)
        return self.cluster.launch(profile, dict(tags)).instance_id

    def nodes(self) -> list[ManagedNode]:
        out = []
        for n in self.cluster.nodes:
            if n.vm_state == "terminated" or not self._owned(n):
                continue
            out.append(ManagedNode(instance_id=n.instance_id, state=n.vm_state, profile=n.profile,
                                   address=n.host, launched_at=n.launched_at, tags=dict(n.tags)))
        return out

    def terminate(self, instance_id: str) -> None:
        n = self.cluster.node_by_instance(instance_id)
        if n is None or not self._owned(n):
            raise NotOwnedError(f"{instance_id} is not a node metctl launched in cluster {self.cluster.cluster}")
        self.cluster.terminate(n)


class SimDataStore:
    def __init__(self, cluster: SimCluster):
        self.cluster = cluster
        self._pending_balance = False

    def servers(self) -> list[ServerInfo]:
        state = {"active": "active", "restarting": "stopped", "stopping": "draining"}
        return [ServerInfo(id=n.server_id, host=n.host, profile=n.profile, state=state[n.rs_state])
                for n in self.cluster.nodes if n.rs_state in state and n.vm_state == "running"]

    def partitions(self) -> list[PartitionLocation]:
        c = self.cluster
        copied = c.transfer_mode != "none"  # moves stream the region's data (transfer modes)
        out = []
        reg = c.regions
        for r, rid in enumerate(reg.ids):
            k = int(reg.assigned[r])
            out.append(PartitionLocation(id=rid, table=reg.tables[r],
                                         server=c.nodes[k].server_id if k >= 0 else None,
                                         size_mb=float(reg.size[r]) if copied else None))
        return out

    def _region(self, partition_id: str) -> int:
        try:
            return self.cluster.regions.ids.index(partition_id)
        except ValueError:
            raise DriverError(f"no partition {partition_id}", retryable=False) from None

    def _server(self, server_id: str, *, active: bool = True):
        n = self.cluster.node_by_server(server_id)
        if n is None:
            raise DriverError(f"no server {server_id}", retryable=False)
        if active and n.rs_state != "active":
            raise DriverError(f"server {server_id} is {n.rs_state}", retryable=True)
        return n

    def move_partition(self, partition_id: str, target_server: str) -> None:
        r = self._region(partition_id)
        n = self._server(target_server)
        reg = self.cluster.regions
        if reg.server[r] < 0 and reg.open_target[r] != n.index and reg.open_target[r] != -1:
            raise DriverError(f"{partition_id} is in transition", retryable=True)
        self.cluster.move(r, n.index)

    def restart_server(self, server_id: str, profile: str) -> None:
        if profile not in self.cluster.settings.profiles:
            raise DriverError(f"unknown profile {profile!r}", retryable=False)
        self.cluster.restart(self._server(server_id), profile)

    def compact(self, partition_id: str) -> None:
        r = self._region(partition_id)
        if self.cluster.regions.server[r] < 0:
            raise DriverError(f"{partition_id} is in transition", retryable=True)
        self.cluster.compact(r)

    def compaction_running(self, partition_id: str) -> bool:
        return self._region(partition_id) in self.cluster.compactions

    def split_partition(self, partition_id: str) -> None:
        """Start a split (SimCluster.split): the parent is offline for `split_offline_s`, then
        `partitions()` lists its two daughters on its server instead of it."""
        c = self.cluster
        if partition_id in c.split_parents:
            return  # split already
        r = self._region(partition_id)
        if r in c.splits:
            return  # splitting
        reg = c.regions
        if reg.server[r] < 0 or c.background.moving(r):
            raise DriverError(f"{partition_id} is in transition", retryable=True)
        if reg.refs[r]:
            # HBase splits a region only once its reference files to its own parent are
            # compacted away (reference guide, "RegionServer Splitting Implementation").
            raise DriverError(f"{partition_id} still has reference files from its own split "
                              "(splittable once its compaction ends)", retryable=True)
        cs = c.settings.costs
        if reg.size[r] * 1024.0 / (cs.record_kb * cs.storage_overhead) < 2.0:
            raise DriverError(f"{partition_id} is too small to split (no split point)", retryable=False)
        c.split(r)

    def decommission(self, server_id: str) -> None:
        n = self._server(server_id, active=False)
        self.cluster.decommission(n)

    def set_balancer(self, enabled: bool) -> bool:
        c = self.cluster
        was = c.balancer_on
        c.balancer_on = enabled
        if enabled and not was:
            # tiramola's rebalancing module runs a global rebalance once a new node has joined
            # (tiramola §2); a node that joined while the balancer was off is balanced now.
            c.request_balance()
        return was
