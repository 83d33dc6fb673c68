"""What each workload asks of each station: from the regions (where they are, how warm, how
local) and the capacity model's cost per operation, the service demand per request of every
workload at every node's CPU and disk and at its client machine, the delays outside any queue,
and the requests a step's throughput puts on each region. Pure functions over arrays; the
queueing network they feed is solved in simulator.solver."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator import capacity
from simulator.regions import Regions
from simulator.scenario import Workload
from simulator.settings import CostSettings, HardwareSettings


@dataclass(frozen=True)
class WorkloadMix:
    """Per workload (index = workload): its operation mix, closed-loop threads, YCSB -target
    cap and client machine."""

    names: tuple[str, ...]
    p_read: np.ndarray
    p_update: np.ndarray
    p_insert: np.ndarray
    p_scan: np.ndarray
    p_rmw: np.ndarray
    threads: np.ndarray
    target: np.ndarray  # ops/s cap, inf without one
    client_hosts: tuple[str, ...]
    client: np.ndarray  # index into client_hosts

    @classmethod
    def of(cls, workloads: tuple[Workload, ...]) -> "WorkloadMix":
        mix = [w.op_mix() for w in workloads]
        hosts = sorted({w.client_host for w in workloads})
        return cls(names=tuple(w.name for w in workloads),
                   p_read=np.array([m.get("read", 0.0) for m in mix]),
                   p_update=np.array([m.get("update", 0.0) for m in mix]),
                   p_insert=np.array([m.get("insert", 0.0) for m in mix]),
                   p_scan=np.array([m.get("scan", 0.0) for m in mix]),
                   p_rmw=np.array([m.get("rmw", 0.0) for m in mix]),
                   threads=np.array([float(w.threads) for w in workloads]),
                   target=np.array([w.target_ops if w.target_ops else np.inf for w in workloads]),
                   client_hosts=tuple(hosts),
                   client=np.array([hosts.index(w.client_host) for w in workloads]))

    @property
    def p_write(self) -> np.ndarray:
        return self.p_update + self.p_rmw + self.p_insert


@dataclass(frozen=True)
class RegionCosts:
    """Per region, per request of its workload (ms), averaged over the workload's requests
    (a region that gets a share s of them carries s of the cost)."""

    cpu: np.ndarray  # its server's CPU
    disk: np.ndarray  # its server's disk (local block reads, put writes)
    remote_disk: np.ndarray  # a remote DataNode's disk (non-local block reads)
    remote: np.ndarray  # delay: waiting on the network for remote blocks
    weight: np.ndarray  # fraction of its workload's requests that reach it
    wait: np.ndarray  # delay while it is offline (until it opens)
    served: np.ndarray  # it is open on a server
    node: np.ndarray  # its server (0 where offline)


def region_costs(reg: Regions, mix: WorkloadMix, memst: np.ndarray, block: np.ndarray, t: float,
                 c: CostSettings, h: HardwareSettings) -> RegionCosts:
    """memst, block: per node, the memstore share and block size its profile gives."""
    k = len(memst)
    served = reg.server >= 0
    node = np.where(served, reg.server, 0)
    b = block[node]
    miss = 1.0 - np.clip(reg.mem_hit, 0.0, 1.0)  # block reads that go to a disk
    g_cpu = capacity.get_cpu_ms(b, c)
    s_cpu = capacity.scan_cpu_ms(b, c)
    s_blocks = capacity.scan_blocks(b, c)
    miss_ms = capacity.miss_disk_ms(b, h)
    # memstore flush size per region: the node's memstore over the regions written on it
    writes_w = mix.p_write[reg.cls] > 0
    n_written = np.bincount(node[served & writes_w], minlength=k).astype(float)
    flush = np.minimum(c.max_flush_mb, h.heap_mb * memst[node] / np.maximum(n_written[node], 1.0))
    p_disk = capacity.put_disk_ms(reg.size, flush, c, h)
    cls = reg.cls
    fr = (mix.p_read + mix.p_rmw)[cls]
    fs = mix.p_scan[cls]
    fu = (mix.p_update + mix.p_rmw)[cls]
    fi = mix.p_insert[cls]
    sh = reg.share
    si = reg.ins
    cpu_r = sh * (fr * g_cpu + fs * s_cpu + fu * c.put_cpu_ms) + si * fi * c.put_cpu_ms
    read_disk_r = sh * (fr + fs * s_blocks) * miss * miss_ms
    loc = np.clip(reg.locality, 0.0, 1.0)
    # a missed block that is local is read from this node's disk; one that is not is read
    # by the DataNode holding a replica (its disk, its io_wait), while the RegionServer's
    # handler waits on the network (not iowait).
    disk_r = read_disk_r * loc + sh * fu * p_disk + si * fi * p_disk
    remote_disk_r = read_disk_r * (1.0 - loc)
    bc_miss = 1.0 - np.clip(reg.hit * reg.warmth, 0.0, 1.0)  # leave the RegionServer
    remote_r = sh * (fr + fs * s_blocks) * bc_miss * (1.0 - reg.locality) * (
        c.remote_read_extra_ms + b / 1024.0 / h.network_mb_s * 1000.0)
    weight_r = sh * (1.0 - fi) + si * fi  # fraction of the class's requests hitting region r
    # offline regions: requests wait until they open (delay)
    wait_r = np.where(served, 0.0, np.maximum(reg.open_at - t, 0.0) * 1000.0)
    wait_r = np.where((~served) & (reg.open_target == -1), 1000.0, wait_r)
    return RegionCosts(cpu_r, disk_r, remote_disk_r, remote_r, weight_r, wait_r, served, node)


def datanode_shares(server: np.ndarray, home: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """For regions served by `server` (node indices), the share of their remote block reads
    each node's DataNode serves. Replication 2 (MET §6.4): one replica on the node that
    wrote the data (its home), the other on another node; the HDFS client reads either, so
    half goes to the home and half is spread over the other live DataNodes (which one holds
    the second replica is not tracked). A home that is gone or is the server itself leaves
    everything to the others. alive: per node, its VM runs."""
    k = len(alive)
    others = (alive[None, :] & (np.arange(k)[None, :] != server[:, None])).astype(float)
    rows = others.sum(axis=1)
    others = np.where(rows[:, None] > 0, others / np.maximum(rows[:, None], 1.0), 0.0)
    none_left = rows == 0
    others[none_left, server[none_left]] = 1.0  # no other DataNode: the only copy is here
    home_ok = (home >= 0) & (home != server) & alive[np.maximum(home, 0)] & ~none_left
    share = others * np.where(home_ok, 0.5, 1.0)[:, None]
    rows_i = np.where(home_ok)[0]
    share[rows_i, home[rows_i]] += 0.5
    return share


@dataclass(frozen=True)
class Demands:
    """Service demands per request (ms), rows = workloads."""

    cpu: np.ndarray  # (workloads, nodes) at each node's CPU, stretched by background work
    disk: np.ndarray  # (workloads, nodes) at each node's disk, stretched likewise
    client: np.ndarray  # (workloads, client machines)
    delay: np.ndarray  # (workloads,) outside any queue: network, RPC floor, WAL, remote, offline
    base_delay: np.ndarray  # (workloads,) the part every request pays: network, RPC floor, WAL


def station_demands(rc: RegionCosts, reg: Regions, mix: WorkloadMix, alive: np.ndarray,
                    bg_cpu: np.ndarray, bg_disk: np.ndarray, c: CostSettings,
                    h: HardwareSettings) -> Demands:
    """Sum the regions' costs per workload and station. Capacity taken by background work
    stretches the demand (fewer cycles left)."""
    nw = len(mix.names)
    k = len(alive)
    cls, served, node = reg.cls, rc.served, rc.node
    D_cpu = np.zeros((nw, max(k, 1)))
    D_disk = np.zeros((nw, max(k, 1)))
    if k:
        np.add.at(D_cpu, (cls[served], node[served]), rc.cpu[served])
        np.add.at(D_disk, (cls[served], node[served]), rc.disk[served])
        remote = served & (rc.remote_disk > 0)
        if remote.any():
            share = datanode_shares(node[remote], reg.home[remote], alive)
            np.add.at(D_disk, cls[remote], rc.remote_disk[remote, None] * share)
    # Delays per request: a LAN round trip and the server's floor per RPC (a
    # read-modify-write is two RPCs), and the WAL pipeline acknowledgement per put.
    rpcs = 1.0 + mix.p_rmw
    base = rpcs * (h.network_rtt_ms + c.rpc_floor_ms) + (mix.p_update + mix.p_rmw + mix.p_insert) * c.wal_sync_ms
    Z = base.copy()
    np.add.at(Z, cls[served], rc.remote[served])
    np.add.at(Z, cls[~served], (rc.weight * rc.wait)[~served])
    if k:
        D_cpu = D_cpu / (1.0 - bg_cpu[None, :k])
        D_disk = D_disk / (1.0 - bg_disk[None, :k])
    # Client machines: multi-core stations like the nodes' CPUs, demand per operation type.
    D_client = np.zeros((nw, len(mix.client_hosts)))
    D_client[np.arange(nw), mix.client] = (
        c.client_op_cpu_ms * rpcs + mix.p_scan * c.mean_scan_rows * c.client_row_cpu_ms)
    return Demands(D_cpu, D_disk, D_client, Z, base)


def requests_per_region(x: np.ndarray, dt: float, reg: Regions, mix: WorkloadMix
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Requests a step at throughput x (ops/s per workload) puts on each region: gets, scans,
    puts (a read-modify-write is a get and a put), and the records it inserts."""
    cls = reg.cls
    xr = x[cls] * dt
    sh = reg.share
    gets = xr * sh * (mix.p_read + mix.p_rmw)[cls]
    scans = xr * sh * mix.p_scan[cls]
    puts = xr * (sh * (mix.p_update + mix.p_rmw)[cls] + reg.ins * mix.p_insert[cls])
    inserts = xr * reg.ins * mix.p_insert[cls]
    return gets, scans, puts, inserts


def per_node(values: np.ndarray, rc: RegionCosts, cls: np.ndarray, workloads: int, k: int) -> np.ndarray:
    """(workloads, nodes): a per-region value summed over the served regions of each workload
    on each node."""
    out = np.zeros((workloads, k))
    np.add.at(out, (cls[rc.served], rc.node[rc.served]), values[rc.served])
    return out
