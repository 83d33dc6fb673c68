"""The simulated HBase-like cluster: regions on RegionServers on VMs, YCSB clients in a closed
loop, and the elasticity actions with their delays and costs. Advances in steps of `tick_s`;
deterministic for a seed (numpy's PCG64 for the store's random choices; nothing else is random).

Each step:
 1. timed events fire (a VM finishes booting, a RegionServer joins, a restart ends, a moved
    region opens, a server that died has its regions reopened elsewhere);
 2. data transfers and compactions progress and load the nodes that do them;
 3. block-cache hit ratios are recomputed every `cache_update_s` (simulator.capacity);
 4. per workload (a class of closed-loop clients) and per station (each node's CPU and disk,
    each client machine) the service demands are built from the capacity model, and the
    closed network is solved with Schweitzer's approximate Mean Value Analysis: throughput
    X_c = min(target_c, N_c / (Z_c + Σ_s R_cs)), residence R_cs = D_cs (1 + Q_s − Q_cs / N_c).
    A node's CPU with m cores is a queue with demand D/m plus a delay D(m−1)/m (Seidmann).
    Requests that hit an offline region wait until it opens (a delay in Z_c).
 5. per-region counters, sizes, locality and cache warmth advance; the step is recorded.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from actuator.drivers import TAG_CLUSTER, TAG_MANAGED, TAG_PROFILE
from simulator import capacity
from simulator.scenario import Scenario
from simulator.settings import SimulatorSettings

RS_PORT = 16020


@dataclass
class SimNode:
    """One VM with (once it joined) a RegionServer."""

    index: int
    instance_id: str
    host: str
    profile: str
    managed: bool
    tags: dict[str, str]
    launched_at: float
    running_at: float  # VM running from this time
    join_at: float  # RegionServer counted by the master from this time
    vm_state: str = "booting"  # booting | running | stopping | terminated
    rs_state: str = "absent"  # absent | active | restarting | stopping | stopped
    rs_ready_at: float = math.inf  # when a restart ends
    pending_profile: str | None = None
    terminate_at: float = math.inf
    stop_at: float = math.inf
    joined: float = math.inf  # when the RegionServer first served
    cpu_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    io_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    mem_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    # mean time a request spends in this RegionServer (queues, service, remote reads), ms
    lat_hist: deque = field(default_factory=lambda: deque(maxlen=15))

    @property
    def server_id(self) -> str:
        return f"{self.host},{RS_PORT}"


@dataclass
class Transfer:
    region: int
    source: int
    target: int
    remaining_mb: float
    batch: bool  # parallel mode: served only when every copy to the target has arrived


@dataclass(frozen=True)
class Recording:
    """What a run recorded, one row per step (the report's input)."""

    t: np.ndarray  # s, step start
    ops: np.ndarray  # (steps, workloads) operations completed in the step
    latency_ms: np.ndarray  # mean response time over all operations in the step
    latency_wl_ms: np.ndarray  # (steps, workloads) each workload's mean response time
    vms: np.ndarray  # VMs billed (booting, running or stopping)
    servers: np.ndarray  # RegionServers serving
    tick_s: float
    workloads: tuple[str, ...]


@dataclass(frozen=True)
class NodeView:
    """One VM as the live view shows it."""

    host: str
    profile: str
    state: str  # the RegionServer's state once the VM runs, else the VM's
    cpu: float  # gmond-window means; NaN before the first report
    io_wait: float
    memory: float
    regions: int
    ops_per_s: float


@dataclass
class Event:
    """Something the simulation records (for the report and the live view)."""

    t: float
    kind: str
    detail: str


class SimCluster:
    def __init__(self, scenario: Scenario, settings: SimulatorSettings | None = None,
                 *, seed: int | None = None, cluster: str = "demo"):
        self.scenario = scenario
        settings = settings or SimulatorSettings()
        if scenario.hardware:
            try:
                hw = settings.hardware.model_copy(update=dict(scenario.hardware))
                hw = type(settings.hardware).model_validate(hw.model_dump())
            except Exception as err:  # noqa: BLE001 — reported as bad input by the caller
                raise ValueError(f"scenario hardware: {err}") from None
            settings = settings.model_copy(update={"hardware": hw})
        self.settings = settings
        self.transfer_mode = scenario.data_transfer or self.settings.data_transfer
        self.cluster = cluster
        self.rng = np.random.Generator(np.random.PCG64(scenario.seed if seed is None else seed))
        self.t = 0.0
        self.events: list[Event] = []
        self.balancer_on = True  # HBase's own balancer is on until someone switches it off
        self._next_balance = self.settings.actions.balancer_period_s
        self._next_cache = 0.0
        self._counter = 0
        self._scripted_done: set[int] = set()
        self.nodes: list[SimNode] = []
        self.transfers: list[Transfer] = []
        self.compactions: dict[int, tuple[int, float]] = {}  # region -> (node, remaining MiB)
        self.splits: dict[int, int] = {}  # region being split -> its node (parent offline)
        self.split_parents: dict[str, tuple[str, str]] = {}  # split region id -> daughters' ids
        self._build_workloads()
        self._build_regions()
        for _ in range(scenario.initial_nodes):
            n = self._new_node(scenario.initial_profile, managed=True, boot=False)
            n.vm_state, n.rs_state, n.joined = "running", "active", 0.0
        self._initial_placement()
        self._q: np.ndarray | None = None
        self._disk_queue = np.zeros(0)
        self._node_latency_ms = np.zeros(0)  # per node, NaN where no request arrived
        self._q_key: tuple | None = None
        # recorded series (one entry per step)
        self.rec_t: list[float] = []
        self.rec_ops: list[np.ndarray] = []  # ops per workload in the step
        self.rec_latency_ms: list[float] = []  # mean response time over all operations
        self.rec_latency_wl_ms: list[np.ndarray] = []
        self.rec_vms: list[int] = []  # VMs billed (booting, running or stopping)
        self.rec_servers: list[int] = []  # RegionServers serving
        self.last_node_load: dict[str, tuple[float, float, float]] = {}
        self.last_x = np.zeros(len(self.workloads))

    # ------------------------------------------------------------------ construction
    def _build_workloads(self) -> None:
        wl = self.scenario.workloads
        self.workloads = wl
        self.wl_names = [w.name for w in wl]
        mix = [w.op_mix() for w in wl]
        self.p_read = np.array([m.get("read", 0.0) for m in mix])
        self.p_update = np.array([m.get("update", 0.0) for m in mix])
        self.p_insert = np.array([m.get("insert", 0.0) for m in mix])
        self.p_scan = np.array([m.get("scan", 0.0) for m in mix])
        self.p_rmw = np.array([m.get("rmw", 0.0) for m in mix])
        self.threads = np.array([float(w.threads) for w in wl])
        self.target = np.array([w.target_ops if w.target_ops else np.inf for w in wl])
        hosts = sorted({w.client_host for w in wl})
        self.client_hosts = hosts
        self.wl_client = np.array([hosts.index(w.client_host) for w in wl])

    # Every per-region array (index = region) and list. A split appends a region, so each of
    # them must grow with it (_grow_regions); tests/simulator/test_cluster.py fails when an
    # array of one entry per region is missing here.
    REGION_ARRAYS = (
        "reg_cls", "reg_share", "reg_ins", "reg_hot_req", "reg_hot_size", "reg_lo", "reg_hi",
        "reg_size", "reg_read_mb", "reg_server", "reg_assigned", "reg_open_at", "reg_open_target",
        "reg_locality", "reg_home", "reg_warmth", "reg_hit", "reg_cached_kb", "reg_block_rate",
        "reg_reads", "reg_writes", "reg_scans", "reg_written_at_nodes", "reg_opened_at",
        "reg_mem_hit", "reg_refs", "reg_page_since")
    REGION_LISTS = ("region_ids", "region_tables")

    def _build_regions(self) -> None:
        c = self.settings.costs
        cls, share, ins, hot_req, hot_size, size, tables, lo, hi = [], [], [], [], [], [], [], [], []
        for ci, w in enumerate(self.workloads):
            s, hr, hs = capacity.hotspot_shares(w.regions, w.hot_data_fraction, w.hot_ops_fraction)
            table_mb = w.records * c.record_kb * c.storage_overhead / 1024.0
            for ri in range(w.regions):
                cls.append(ci)
                share.append(s[ri])
                # YCSB ordered inserts append at the end of the key space: the last region.
                ins.append(1.0 if ri == w.regions - 1 else 0.0)
                hot_req.append(hr[ri])
                hot_size.append(hs[ri])
                size.append(table_mb / w.regions)
                tables.append(f"usertable_{w.name.lower()}")
                # its key range, as fractions of the table's loaded key space (equal regions)
                lo.append(ri / w.regions)
                hi.append((ri + 1) / w.regions)
        n = len(cls)
        # Region ids: deterministic 32-hex names (like HBase encoded names), from the seed.
        self.region_ids = self._new_region_ids(n)
        self.region_tables = tables
        self.reg_cls = np.array(cls, dtype=int)
        self.reg_share = np.array(share)
        self.reg_ins = np.array(ins)
        self.reg_hot_req = np.array(hot_req)
        self.reg_hot_size = np.array(hot_size)
        self.reg_lo = np.array(lo)
        self.reg_hi = np.array(hi)
        self.reg_size = np.array(size)
        # YCSB draws read and scan keys from the records loaded at the start (its key chooser's
        # bounds are fixed at recordcount), so inserts grow a region but not what is read.
        self.reg_read_mb = np.array(size)
        self.reg_server = np.full(n, -1, dtype=int)  # node index serving it, -1 offline
        self.reg_assigned = np.full(n, -1, dtype=int)  # node index the store reports
        self.reg_open_at = np.zeros(n)  # offline until (when reg_server == -1 and a target is set)
        self.reg_open_target = np.full(n, -1, dtype=int)
        self.reg_locality = np.ones(n)
        self.reg_home = np.full(n, -1, dtype=int)  # node that wrote most of its data
        self.reg_warmth = np.ones(n)
        self.reg_hit = np.ones(n)  # steady-state hit ratio on its current node
        self.reg_cached_kb = np.zeros(n)
        self.reg_block_rate = np.zeros(n)
        self.reg_reads = np.zeros(n)
        self.reg_writes = np.zeros(n)
        self.reg_scans = np.zeros(n)
        # Nodes in the cluster when the data was written: its replicas are spread over them
        # (MET §6.4: the initial state has 100 % locality on the initial nodes).
        self.reg_written_at_nodes = np.full(n, self.scenario.initial_nodes)
        self.reg_opened_at = np.full(n, -np.inf)  # when it last opened on a cold block cache
        # since when its files' pages are cached by its node's page cache: reset with the block
        # cache when it opens on a server, kept by a split (the daughters read the same files)
        self.reg_page_since = np.full(n, -np.inf)
        self.reg_mem_hit = np.ones(n)  # reads served from block cache or page cache (no disk)
        # A split daughter reads its parent's files through reference files until a compaction
        # rewrites them, and HBase cannot split a region that still has references (HBase
        # reference guide, "RegionServer Splitting Implementation").
        self.reg_refs = np.zeros(n, dtype=bool)

    def _new_region_ids(self, n: int) -> list[str]:
        raw = self.rng.integers(0, 2**63, size=(n, 2))
        return [f"{a:016x}{b:016x}"[:32] for a, b in raw]

    def _grow_regions(self, r: int) -> int:
        """Append one region, a copy of region r in every per-region array and list; return
        its index. (Existing indices stay: transfers and compactions refer to them.)"""
        for name in self.REGION_ARRAYS:
            a = getattr(self, name)
            setattr(self, name, np.concatenate([a, a[r:r + 1]]))
        for name in self.REGION_LISTS:
            getattr(self, name).append(getattr(self, name)[r])
        return len(self.region_ids) - 1

    def _new_node(self, profile: str, *, managed: bool, boot: bool, tags: dict | None = None) -> SimNode:
        self._counter += 1
        i = len(self.nodes)
        a = self.settings.actions
        running = self.t + (a.vm_boot_s if boot else 0.0)
        node = SimNode(
            index=i, instance_id=f"sim-i-{self._counter:04d}", host=f"rs{self._counter}.sim",
            profile=profile, managed=managed,
            tags=dict(tags or {TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile}),
            launched_at=self.t, running_at=running, join_at=running + (a.rs_join_s if boot else 0.0))
        w = max(1, int(round(self.settings.host_metric_window_s / self.settings.tick_s)))
        node.cpu_hist, node.io_hist, node.mem_hist = deque(maxlen=w), deque(maxlen=w), deque(maxlen=w)
        node.lat_hist = deque(maxlen=w)
        self.nodes.append(node)
        return node

    def _initial_placement(self) -> None:
        k = self.scenario.initial_nodes
        n = len(self.reg_cls)
        if self.scenario.initial_placement == "random":
            order = self.rng.permutation(n)
            for j, r in enumerate(order):
                self._open(r, j % k, locality=1.0)
            return
        # "Manually balanced" (MET §6.4): LPT on expected requests (share x threads), with at
        # most ceil(n/k) regions a node, so hot regions spread out.
        weight = self.reg_share * self.threads[self.reg_cls] * np.minimum(1.0, self.target[self.reg_cls] / 1e4)
        cap = math.ceil(n / k)
        load = np.zeros(k)
        count = np.zeros(k, dtype=int)
        for r in np.argsort(-weight, kind="stable"):
            cand = np.where(count < cap)[0]
            j = cand[np.argmin(load[cand])]
            load[j] += weight[r]
            count[j] += 1
            self._open(r, int(j), locality=1.0)

    # ------------------------------------------------------------------ helpers
    def node_by_server(self, server_id: str) -> SimNode | None:
        for n in self.nodes:
            if n.server_id == server_id and n.vm_state != "terminated":
                return n
        return None

    def node_by_instance(self, instance_id: str) -> SimNode | None:
        for n in self.nodes:
            if n.instance_id == instance_id:
                return n
        return None

    def serving_nodes(self) -> list[SimNode]:
        return [n for n in self.nodes if n.rs_state == "active"]

    def request_balance(self) -> None:
        """Run the store's balancer at the next step (if it is on)."""
        self._next_balance = self.t

    def log(self, kind: str, detail: str) -> None:
        self.events.append(Event(self.t, kind, detail))

    def _open(self, r: int, node: int, *, locality: float) -> None:
        self.reg_server[r] = node
        self.reg_assigned[r] = node
        self.reg_open_target[r] = -1
        self.reg_locality[r] = locality
        if locality >= 1.0:
            self.reg_home[r] = node
        # HBase counters restart at 0 when a region opens on a server (REAL).
        self.reg_reads[r] = self.reg_writes[r] = self.reg_scans[r] = 0.0
        self._next_cache = self.t  # placement changed: recompute cache shares now
        if self.reg_refs[r] and self.compactions.get(r, (-1, 0.0))[0] != node:
            # A region opened with reference files (a split daughter, here or after a move) is
            # compacted at once: HRegionServer.postOpenDeployTasks requests a compaction of
            # every store that hasReferences(). The rewrite reads and writes its data.
            self.compactions[r] = (node, float(self.reg_size[r]))

    def _locality_on(self, r: int, node: int) -> float:
        if self.reg_home[r] == node:
            return 1.0
        target = self.nodes[node]
        if target.joined > 0 and target.joined >= self._region_written_at(r):
            return 0.0  # joined after the data was written: holds none of its blocks
        others = max(1, self.reg_written_at_nodes[r] - 1)
        return min(1.0, (self.settings.hardware.replication - 1) / others)

    def _region_written_at(self, r: int) -> float:
        return 0.0  # data loaded before the run; compaction rewrites it (home moves)

    def _close_for_move(self, r: int, target: int, delay: float) -> None:
        self.reg_server[r] = -1
        self.reg_assigned[r] = -1
        self.reg_open_target[r] = target
        self.reg_open_at[r] = self.t + delay

    # ------------------------------------------------------------------ store operations
    def move(self, r: int, target: int) -> None:
        """Start moving region r to node index `target` (already validated)."""
        a = self.settings.actions
        if self.reg_assigned[r] == target or self.reg_open_target[r] == target:
            return
        if any(tr.region == r for tr in self.transfers) or r in self.splits:
            return
        src = self.reg_server[r]
        if self.transfer_mode == "none" or src < 0:
            self._close_for_move(r, target, a.move_s)
            self.log("move", f"{self.region_ids[r][:8]} -> {self.nodes[target].host}")
            return
        batch = self.transfer_mode == "parallel"
        self.transfers.append(Transfer(r, int(src), target, float(self.reg_size[r]), batch))
        if batch:
            self.reg_assigned[r] = target  # ownership announced at once (pending ranges)
        else:
            self.reg_assigned[r] = -1  # in transition until its copy arrives
        self.log("transfer", f"{self.region_ids[r][:8]} {self.nodes[src].host} -> {self.nodes[target].host} ({self.reg_size[r]:.0f} MiB)")

    def restart(self, node: SimNode, profile: str) -> None:
        a = self.settings.actions
        node.rs_state = "restarting"
        node.pending_profile = profile
        node.rs_ready_at = self.t + a.restart_stop_s + a.restart_start_s
        for r in np.where(self.reg_server == node.index)[0]:
            self._close_for_move(int(r), node.index, a.restart_stop_s + a.restart_start_s)
        self.log("restart", f"{node.host} -> {profile}")

    def compact(self, r: int) -> None:
        if r in self.compactions or self.reg_server[r] < 0:
            return
        self.compactions[r] = (int(self.reg_server[r]), float(self.reg_size[r]))
        self.log("compact", f"{self.region_ids[r][:8]} on {self.nodes[self.reg_server[r]].host}")

    def split(self, r: int) -> None:
        """Start splitting region r in two on its server (validated by the caller: served, no
        reference files, not moving). HBase reference guide, "RegionServer Splitting
        Implementation": the parent goes offline, its memstore is flushed, the daughters get
        reference files to the parent's store files and open on the same server; requests wait
        meanwhile (`split_offline_s`). The split takes effect then (_finish_split)."""
        node = int(self.reg_server[r])
        if r in self.splits or node < 0 or any(tr.region == r for tr in self.transfers):
            return
        self.splits[r] = node
        self._close_for_move(r, node, self.settings.actions.split_offline_s)
        self.log("split", f"{self.region_ids[r][:8]} on {self.nodes[node].host}")

    def _finish_split(self, r: int, node: int) -> None:
        """Replace region r by its two daughters, both on `node`. The parent's index becomes
        the left daughter and the right one is appended (indices stay valid); both get new ids
        (HBase daughters get new encoded names)."""
        w = self.workloads[int(self.reg_cls[r])]
        parent = self.region_ids[r]
        lo, hi = float(self.reg_lo[r]), float(self.reg_hi[r])
        loaded, total = float(self.reg_read_mb[r]), float(self.reg_size[r])
        # Split point: the middle of the region's data (HBase: the middle key of its largest
        # store file). The loaded records are spread evenly over [lo, hi) and ordered inserts
        # are appended after hi, so the middle falls inside the range unless inserts are more
        # than half the region; then the left daughter keeps every loaded key.
        half = total / 2.0
        left_loaded = min(loaded, half)
        mid = lo + (hi - lo) * (left_loaded / loaded if loaded > 0 else 1.0)
        b = self._grow_regions(r)
        self.region_ids[r], self.region_ids[b] = self._new_region_ids(2)
        self.reg_lo[r], self.reg_hi[r], self.reg_lo[b], self.reg_hi[b] = lo, mid, mid, hi
        share, hot_req, hot_size = capacity.key_range_shares(
            np.array([lo, mid]), np.array([mid, hi]), w.hot_data_fraction, w.hot_ops_fraction)
        self.reg_share[[r, b]] = share
        self.reg_hot_req[[r, b]] = hot_req
        self.reg_hot_size[[r, b]] = hot_size
        # new keys are appended at the end of the key space: the right daughter's (it keeps
        # the parent's reg_ins), so splitting the insert region does not spread its writes
        self.reg_ins[r] = 0.0
        self.reg_size[r], self.reg_size[b] = half, total - half
        self.reg_read_mb[r], self.reg_read_mb[b] = left_loaded, loaded - left_loaded
        # Same server, same HDFS files (reference files point at the parent's): locality stays.
        # Block cache: the daughters start cold. HBase keys cached blocks by file name and
        # offset; reads through a reference file were cached under the reference's path, and
        # since HBASE-27474 the parent's blocks are evicted when it splits (both described in
        # HBASE-28596) — assumption: no block the parent had cached serves a daughter. The
        # page cache holds file pages, and the daughters read the parent's files on the same
        # machine: it stays as warm as it was (reg_page_since is the parent's, copied).
        loc = float(self.reg_locality[r])
        for d in (r, b):
            self.reg_refs[d] = True  # _open starts the compaction that rewrites them
            self.reg_opened_at[d] = self.t
            self._open(d, node, locality=loc)  # counters start at 0, as for any region opening
        self.split_parents[parent] = (self.region_ids[r], self.region_ids[b])
        self.log("split_done", f"{parent[:8]} -> {self.region_ids[r][:8]} + {self.region_ids[b][:8]} "
                 f"on {self.nodes[node].host} ({total:.0f} MiB)")

    def decommission(self, node: SimNode) -> None:
        if node.rs_state in ("stopping", "stopped", "absent"):
            return
        a = self.settings.actions
        node.rs_state = "stopping"
        node.stop_at = self.t + a.decommission_s
        others = [n.index for n in self.serving_nodes() if n.index != node.index]
        for r in np.where((self.reg_server == node.index) | (self.reg_open_target == node.index))[0]:
            if not others:
                break
            counts = [int(np.sum(self.reg_assigned == o)) for o in others]
            tgt = others[int(np.argmin(counts))]
            self._close_for_move(int(r), tgt, a.move_s)
        self.log("decommission", node.host)

    def launch(self, profile: str, tags: dict[str, str]) -> SimNode:
        node = self._new_node(profile, managed=tags.get(TAG_MANAGED) == "true", boot=True, tags=tags)
        self.log("launch", f"{node.instance_id} ({profile})")
        return node

    def terminate(self, node: SimNode) -> None:
        if node.vm_state in ("stopping", "terminated"):
            return
        node.vm_state = "stopping"
        node.terminate_at = self.t + self.settings.actions.terminate_s
        if node.rs_state in ("active", "restarting"):
            # Died with regions: they reopen elsewhere after the ZooKeeper session timeout.
            node.rs_state = "stopped"
            for r in np.where((self.reg_server == node.index) | (self.reg_open_target == node.index))[0]:
                self._close_for_move(int(r), -2, self.settings.actions.failover_s)
        node.rs_state = "stopped" if node.rs_state != "absent" else "absent"
        self.log("terminate", node.instance_id)

    # ------------------------------------------------------------------ stepping
    def run_until(self, t_end: float) -> None:
        dt = self.settings.tick_s
        while self.t + dt <= t_end + 1e-9:
            self.step(dt)

    def step(self, dt: float) -> None:
        for i, sl in enumerate(self.scenario.launches):
            if i not in self._scripted_done and self.t >= sl.at_s:
                self._scripted_done.add(i)
                # The balancer's switch is left as the policy's driver calls set it: a node
                # joining while it is on is balanced at once (see _fire_events).
                self.launch(sl.profile, {TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: sl.profile})
        self._fire_events()
        bg_cpu, bg_disk = self._background(dt)
        if self.t >= self._next_cache:
            self._update_cache()
            self._next_cache = self.t + self.settings.cache_update_s
        x, lat_wl, util_cpu, util_disk = self._solve(bg_cpu, bg_disk)
        self._advance(x, dt, util_cpu, util_disk)
        ops = x * dt
        self.rec_t.append(self.t)
        self.rec_ops.append(ops)
        total = float(x.sum())
        self.rec_latency_ms.append(float((x * lat_wl).sum() / total) if total > 0 else 0.0)
        self.rec_latency_wl_ms.append(lat_wl)
        self.rec_vms.append(sum(1 for n in self.nodes if n.vm_state in ("booting", "running", "stopping")))
        self.rec_servers.append(len(self.serving_nodes()))
        self.last_x = x
        self.t += dt

    def _fire_events(self) -> None:
        a = self.settings.actions
        joined_now = False
        for n in self.nodes:
            if n.vm_state == "booting" and self.t >= n.running_at:
                n.vm_state = "running"
                self.log("vm_running", n.instance_id)
            if n.vm_state == "running" and n.rs_state == "absent" and self.t >= n.join_at:
                n.rs_state, n.joined = "active", self.t
                joined_now = True
                self.log("joined", n.server_id)
            if n.rs_state == "restarting" and self.t >= n.rs_ready_at:
                n.rs_state = "active"
                n.profile = n.pending_profile or n.profile
                n.pending_profile = None
                self.log("restarted", f"{n.host} as {n.profile}")
            if n.rs_state == "stopping" and self.t >= n.stop_at:
                n.rs_state = "stopped"
            if n.vm_state == "stopping" and self.t >= n.terminate_at:
                n.vm_state = "terminated"
                self.log("terminated", n.instance_id)
        # Splits whose parent's offline time is over (_finish_split). A split whose parent was
        # sent elsewhere meanwhile (its server died or was decommissioned) is dropped: the
        # parent reopens whole, as a move.
        for r, node in list(self.splits.items()):
            if self.reg_server[r] >= 0 or self.reg_open_target[r] != node:
                del self.splits[r]
                self.log("split_abandoned", self.region_ids[r][:8])
            elif self.t >= self.reg_open_at[r] and self.nodes[node].rs_state == "active":
                del self.splits[r]
                self._finish_split(r, node)
        # Regions whose move or reopen is due.
        due = np.where((self.reg_server < 0) & (self.reg_open_at <= self.t) & (self.reg_open_target != -1))[0]
        for r in due:
            tgt = int(self.reg_open_target[r])
            if tgt >= 0 and self.nodes[tgt].rs_state == "active":
                loc = self._locality_on(int(r), tgt) if self.transfer_mode == "none" else self.reg_locality[r]
                self.reg_opened_at[r] = self.reg_page_since[r] = self.t
                self._open(int(r), tgt, locality=loc)
            elif tgt >= 0 and self.nodes[tgt].rs_state == "restarting":
                continue  # opens when the restart ends
            else:
                live = self.serving_nodes()
                if not live:
                    continue
                counts = [int(np.sum(self.reg_assigned == n.index)) for n in live]
                node = live[int(np.argmin(counts))].index
                self.reg_opened_at[r] = self.reg_page_since[r] = self.t
                self._open(int(r), node, locality=self._locality_on(int(r), node))
        if self.balancer_on and (joined_now or self.t >= self._next_balance):
            self._balance()
            self._next_balance = self.t + a.balancer_period_s

    def _balance(self) -> None:
        """HBase's stock balancer: even region counts, regions chosen at random (MET §2.1)."""
        live = [n.index for n in self.serving_nodes()]
        if len(live) < 2:
            return
        placed = np.where(self.reg_assigned >= 0)[0]
        counts = {k: int(np.sum(self.reg_assigned[placed] == k)) for k in live}
        floor = len(placed) // len(live)
        ceil = floor + (1 if len(placed) % len(live) else 0)
        moved = 0
        while True:
            over = [k for k in live if counts[k] > ceil] or [k for k in live if counts[k] > floor]
            under = [k for k in live if counts[k] < floor]
            if not under or not over:
                break
            src = over[int(self.rng.integers(len(over)))]
            regs = np.where(self.reg_assigned == src)[0]
            r = int(regs[int(self.rng.integers(len(regs)))])
            dst = under[int(self.rng.integers(len(under)))]
            self.move(r, dst)
            counts[src] -= 1
            counts[dst] += 1
            moved += 1
        if moved:
            self.log("balancer", f"moved {moved} regions")

    def _background(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """Progress transfers and compactions; return the utilisation they take per node."""
        a = self.settings.actions
        h = self.settings.hardware
        k = len(self.nodes)
        bg_cpu = np.zeros(k)
        bg_disk = np.zeros(k)
        # Transfers: incremental = one active copy per target (FIFO, one source at a time);
        # parallel = every copy to a target at once, sharing its link.
        active: dict[int, list[Transfer]] = {}
        for tr in self.transfers:
            if tr.remaining_mb <= 0:
                continue
            lst = active.setdefault(tr.target, [])
            if tr.batch or not lst:
                lst.append(tr)
        for target, trs in active.items():
            rate = min(a.sender_mb_s, a.receiver_mb_s / len(trs))
            for tr in trs:
                mb = min(tr.remaining_mb, rate * dt)
                tr.remaining_mb -= mb
                cpu = mb * a.transfer_cpu_ms_per_mb / 1000.0 / dt / h.cores
                bg_cpu[tr.source] += cpu
                bg_cpu[target] += cpu
                bg_disk[tr.source] += mb / h.disk_seq_mb_s / dt
                bg_disk[target] += mb / h.disk_seq_mb_s / dt
        keep: list[Transfer] = []
        for tr in self.transfers:
            if tr.remaining_mb > 1e-9:
                keep.append(tr)
            elif tr.batch and any(o.target == tr.target and o.batch and o.remaining_mb > 1e-9
                                  for o in self.transfers):
                keep.append(tr)  # parallel: served only once every copy to the target arrived
            else:
                self._finish_transfer(tr)
        self.transfers = keep
        # Compactions rewrite the region locally: sequential read + write on its node.
        for r in list(self.compactions):
            node, remaining = self.compactions[r]
            if self.reg_server[r] != node:
                del self.compactions[r]  # moved away: the compaction is abandoned
                continue
            mb = min(remaining, a.compaction_mb_s * dt)
            bg_disk[node] += 2 * mb / h.disk_seq_mb_s / dt
            bg_cpu[node] += mb * a.compaction_cpu_ms_per_mb / 1000.0 / dt / h.cores
            remaining -= mb
            if remaining <= 1e-9:
                del self.compactions[r]
                self.reg_refs[r] = False  # a daughter's reference files are rewritten
                self.reg_locality[r] = 1.0
                self.reg_home[r] = node
                self.reg_written_at_nodes[r] = len(self.serving_nodes())
                self.log("compacted", self.region_ids[r][:8])
            else:
                self.compactions[r] = (node, remaining)
        self._bg = (np.minimum(bg_cpu, 0.95), np.minimum(bg_disk, 0.95))
        return self._bg

    def _finish_transfer(self, tr: Transfer) -> None:
        r = tr.region
        if self.nodes[tr.target].rs_state != "active":
            self.reg_assigned[r] = self.reg_server[r]
            return
        self.reg_locality[r] = 1.0
        self.reg_home[r] = tr.target
        self._close_for_move(r, tr.target, self.settings.actions.move_s)
        self.log("move", f"{self.region_ids[r][:8]} -> {self.nodes[tr.target].host} (copied)")

    # ------------------------------------------------------------------ capacity
    def _datanode_shares(self, server: np.ndarray, home: np.ndarray) -> np.ndarray:
        """For regions served by `server` (node indices), the share of their remote block reads
        each node's DataNode serves. Replication 2 (MET §6.4): one replica on the node that
        wrote the data (its home), the other on another node; the HDFS client reads either, so
        half goes to the home and half is spread over the other live DataNodes (which one holds
        the second replica is not tracked). A home that is gone or is the server itself leaves
        everything to the others."""
        k = len(self.nodes)
        alive = np.array([n.vm_state == "running" for n in self.nodes], dtype=bool)
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

    def _node_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        prof = self.settings.profiles
        cache = np.array([prof[n.profile].block_cache_share for n in self.nodes])
        memst = np.array([prof[n.profile].memstore_share for n in self.nodes])
        block = np.array([prof[n.profile].block_kb for n in self.nodes])
        return cache, memst, block

    def _read_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """Block reads per second per region, split into hot and cold parts, at current load."""
        c = self.settings.costs
        x = self.last_x[self.reg_cls]
        _, _, block = self._node_arrays()
        node = np.maximum(self.reg_server, 0)
        b = block[node] if len(self.nodes) else np.full(len(node), 64.0)
        blocks_per_req = (self.p_read + self.p_rmw)[self.reg_cls] + self.p_scan[self.reg_cls] * capacity.scan_blocks(b, c)
        rate = x * self.reg_share * blocks_per_req
        return rate * self.reg_hot_req, rate * (1.0 - self.reg_hot_req)

    def _update_cache(self) -> None:
        if not self.nodes:
            return
        h = self.settings.hardware
        cache, _, block = self._node_arrays()
        served = self.reg_server >= 0
        idx = np.where(served)[0]
        if idx.size == 0:
            return
        node = self.reg_server[idx]
        b = block[node]
        hot_rate, cold_rate = self._read_rates()
        size_kb = self.reg_read_mb[idx] * 1024.0
        hot_blocks = size_kb * self.reg_hot_size[idx] / b
        cold_blocks = size_kb * (1.0 - self.reg_hot_size[idx]) / b
        seg_node = np.concatenate([node, node])
        seg_blocks = np.concatenate([hot_blocks, cold_blocks])
        # a region that is not read yet still gets a token rate so the cache model sees it
        seg_rate = np.concatenate([hot_rate[idx], cold_rate[idx]]) + 1e-9
        cache_blocks = h.heap_mb * cache * 1024.0 / np.maximum(block, 1e-9)
        hit = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, cache_blocks)
        age = self.t - self.reg_opened_at[idx]
        warm = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, cache_blocks,
                                       seg_age_s=np.concatenate([age, age]))
        m = idx.size
        hr = self.reg_hot_req[idx]
        steady = hr * hit[:m] + (1.0 - hr) * hit[m:]
        now = hr * warm[:m] + (1.0 - hr) * warm[m:]
        self.reg_hit[idx] = steady
        # warmth: the share of the steady-state hit ratio reached since the region opened
        self.reg_warmth[idx] = np.where(steady > 0, np.minimum(1.0, now / np.maximum(steady, 1e-12)), 1.0)
        self.reg_cached_kb[idx] = (hot_blocks * hit[:m] + cold_blocks * hit[m:]) * b
        # A block the block cache misses is read through the DataNode from its files, and
        # Linux keeps recently read file pages in the page cache (HDFS does not bypass it), so
        # it costs a disk read only when it is in neither. Both are LRU-like and see the same
        # reference stream, so memory hits are approximated as one LRU of both sizes (Che
        # again; an exclusive-hierarchy approximation); the page cache is the RAM left after
        # the heap and os_mb, and starts empty like the block cache.
        page_blocks = max(h.ram_mb - h.heap_mb - h.os_mb, 0.0) * 1024.0 / np.maximum(block, 1e-9)
        mem = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, cache_blocks + page_blocks,
                                      seg_age_s=np.concatenate([age, age]))
        page_age = self.t - self.reg_page_since[idx]
        if np.any(page_age > age):
            # A split daughter: cold block cache, but the page cache still holds its parent's
            # file pages. Memory serves at least what the page cache alone would hold since
            # then (the same LRU with the page cache's size and age); for every other region
            # both ages are equal and this bound is below the combined one.
            page = capacity.che_hit_ratios(seg_node, seg_blocks, seg_rate, page_blocks,
                                           seg_age_s=np.concatenate([page_age, page_age]))
            mem = np.maximum(mem, page)
        self.reg_mem_hit[idx] = hr * mem[:m] + (1.0 - hr) * mem[m:]

    def _solve(self, bg_cpu: np.ndarray, bg_disk: np.ndarray):
        c = self.settings.costs
        h = self.settings.hardware
        nw = len(self.workloads)
        k = len(self.nodes)
        active_wl = np.array([w.active(self.t) for w in self.workloads], dtype=bool)
        cache, memst, block = self._node_arrays()
        served = self.reg_server >= 0
        node = np.where(served, self.reg_server, 0)
        b = block[node]
        miss = 1.0 - np.clip(self.reg_mem_hit, 0.0, 1.0)  # block reads that go to a disk
        g_cpu = capacity.get_cpu_ms(b, c)
        s_cpu = capacity.scan_cpu_ms(b, c)
        s_blocks = capacity.scan_blocks(b, c)
        miss_ms = capacity.miss_disk_ms(b, h)
        # memstore flush size per region: the node's memstore over the regions written on it
        writes_w = (self.p_update + self.p_rmw + self.p_insert)[self.reg_cls] > 0
        n_written = np.bincount(node[served & writes_w], minlength=k).astype(float)
        flush = np.minimum(c.max_flush_mb, h.heap_mb * memst[node] / np.maximum(n_written[node], 1.0))
        p_disk = capacity.put_disk_ms(self.reg_size, flush, c, h)
        cls = self.reg_cls
        fr = (self.p_read + self.p_rmw)[cls]
        fs = self.p_scan[cls]
        fu = (self.p_update + self.p_rmw)[cls]
        fi = self.p_insert[cls]
        sh = self.reg_share
        si = self.reg_ins
        cpu_r = sh * (fr * g_cpu + fs * s_cpu + fu * c.put_cpu_ms) + si * fi * c.put_cpu_ms
        read_disk_r = sh * (fr + fs * s_blocks) * miss * miss_ms
        loc = np.clip(self.reg_locality, 0.0, 1.0)
        # a missed block that is local is read from this node's disk; one that is not is read
        # by the DataNode holding a replica (its disk, its io_wait), while the RegionServer's
        # handler waits on the network (not iowait).
        disk_r = read_disk_r * loc + sh * fu * p_disk + si * fi * p_disk
        remote_disk_r = read_disk_r * (1.0 - loc)
        bc_miss = 1.0 - np.clip(self.reg_hit * self.reg_warmth, 0.0, 1.0)  # leave the RegionServer
        remote_r = sh * (fr + fs * s_blocks) * bc_miss * (1.0 - self.reg_locality) * (
            c.remote_read_extra_ms + b / 1024.0 / h.network_mb_s * 1000.0)
        weight_r = sh * (1.0 - fi) + si * fi  # fraction of the class's requests hitting region r
        # offline regions: requests wait until they open (delay)
        wait_r = np.where(served, 0.0, np.maximum(self.reg_open_at - self.t, 0.0) * 1000.0)
        wait_r = np.where((~served) & (self.reg_open_target == -1), 1000.0, wait_r)
        # demand matrices, ms per request of class c
        D_cpu = np.zeros((nw, max(k, 1)))
        D_disk = np.zeros((nw, max(k, 1)))
        if k:
            np.add.at(D_cpu, (cls[served], node[served]), cpu_r[served])
            np.add.at(D_disk, (cls[served], node[served]), disk_r[served])
            remote = served & (remote_disk_r > 0)
            if remote.any():
                share = self._datanode_shares(node[remote], self.reg_home[remote])
                np.add.at(D_disk, cls[remote], remote_disk_r[remote, None] * share)
        # Delays per request: a LAN round trip and the server's floor per RPC (a
        # read-modify-write is two RPCs), and the WAL pipeline acknowledgement per put.
        rpcs = 1.0 + self.p_rmw
        Z = rpcs * (h.network_rtt_ms + c.rpc_floor_ms) + (self.p_update + self.p_rmw + self.p_insert) * c.wal_sync_ms
        np.add.at(Z, cls[served], remote_r[served])
        np.add.at(Z, cls[~served], (weight_r * wait_r)[~served])
        # capacity taken by background work stretches the demand (fewer cycles left)
        if k:
            D_cpu = D_cpu / (1.0 - bg_cpu[None, :k])
            D_disk = D_disk / (1.0 - bg_disk[None, :k])
        m = h.cores
        # Client machines: multi-core stations like the nodes' CPUs, demand per operation type.
        mc = c.client_cores
        D_client = np.zeros((nw, len(self.client_hosts)))
        D_client[np.arange(nw), self.wl_client] = (
            c.client_op_cpu_ms * rpcs + self.p_scan * c.mean_scan_rows * c.client_row_cpu_ms)
        # queue stations: cpu (D/m), disk, client cpu (D/mc); delay: the rest (Seidmann)
        Dq = np.concatenate([D_cpu / m, D_disk, D_client / mc], axis=1)
        Z = Z + (D_cpu * (m - 1) / m).sum(axis=1) + (D_client * (mc - 1) / mc).sum(axis=1)
        Dq[~active_wl] = 0.0
        N = np.where(active_wl, self.threads, 0.0)
        key = Dq.shape
        q = self._q if (self._q is not None and self._q_key == key) else np.zeros(key)
        x = np.zeros(nw)
        R = Dq.copy()
        for it in range(200):
            qtot = q.sum(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                own = np.where(N[:, None] > 0, q / np.maximum(N[:, None], 1e-12), 0.0)
            R = Dq * (1.0 + qtot[None, :] - own)
            resp = Z + R.sum(axis=1)  # ms
            x_new = np.where(active_wl, np.minimum(self.target, N / np.maximum(resp, 1e-9) * 1000.0), 0.0)
            q_new = x_new[:, None] * R / 1000.0
            # damped update: converges for heavily loaded stations
            q_next = 0.5 * q + 0.5 * q_new
            if np.max(np.abs(q_next - q)) < 1e-3 and it > 2:
                q = q_next
                x = x_new
                break
            q = q_next
            x = x_new
        self._q, self._q_key = q, key
        # requests outstanding at each node's disk (queued or in service), for io_wait
        self._disk_queue = q[:, k:2 * k].sum(axis=0) if k else np.zeros(0)
        resp = Z + R.sum(axis=1)
        lat = np.where(active_wl, resp, 0.0)
        self._node_latency_ms = self._server_time(x, R, D_cpu, remote_r, weight_r, served, cls, node, k, m)
        util_cpu = np.zeros(k)
        util_disk = np.zeros(k)
        if k:
            util_cpu = (x[:, None] * D_cpu * (1.0 - bg_cpu[None, :k])).sum(axis=0) / 1000.0 / m + bg_cpu[:k]
            util_disk = (x[:, None] * D_disk * (1.0 - bg_disk[None, :k])).sum(axis=0) / 1000.0 + bg_disk[:k]
        return x, lat, np.minimum(util_cpu, 1.0), np.minimum(util_disk, 1.0)

    def _server_time(self, x, R, D_cpu, remote_r, weight_r, served, cls, node, k, m) -> np.ndarray:
        """Mean time a request spends in each RegionServer (what HBase's /jmx TotalCallTime
        measures, plus the wait on a remote DataNode): its CPU and disk residence (the queueing
        part, R, and the multi-core part Seidmann moves into the delay), the remote-read delay
        and the RPC floor, over the requests that reach the node. NaN where none arrives."""
        if not k:
            return np.zeros(0)
        nw = len(self.workloads)
        visits = np.zeros((nw, k))
        np.add.at(visits, (cls[served], node[served]), weight_r[served])
        remote = np.zeros((nw, k))
        np.add.at(remote, (cls[served], node[served]), remote_r[served])
        inside = R[:, :k] + R[:, k:2 * k] + D_cpu[:, :k] * (m - 1) / m + remote
        arriving = (x[:, None] * visits).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(arriving > 0, (x[:, None] * inside).sum(axis=0) / arriving
                            + self.settings.costs.rpc_floor_ms, np.nan)

    def _advance(self, x: np.ndarray, dt: float, util_cpu: np.ndarray, util_disk: np.ndarray) -> None:
        c = self.settings.costs
        h = self.settings.hardware
        cls = self.reg_cls
        served = self.reg_server >= 0
        xr = x[cls] * dt
        sh = self.reg_share
        gets = xr * sh * (self.p_read + self.p_rmw)[cls]
        scans = xr * sh * self.p_scan[cls]
        puts = xr * (sh * (self.p_update + self.p_rmw)[cls] + self.reg_ins * self.p_insert[cls])
        self.reg_reads += np.where(served, gets, 0.0)
        self.reg_scans += np.where(served, scans, 0.0)
        self.reg_writes += np.where(served, puts, 0.0)
        inserted_mb = xr * self.reg_ins * self.p_insert[cls] * c.record_kb * c.storage_overhead / 1024.0
        written_mb = puts * c.record_kb * c.storage_overhead / 1024.0
        self.reg_size += np.where(served, inserted_mb, 0.0)
        # new store files are written locally: locality creeps back with writes
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(self.reg_size > 0, np.minimum(1.0, written_mb / self.reg_size), 0.0)
        self.reg_locality = np.where(served, self.reg_locality + (1.0 - self.reg_locality) * frac, self.reg_locality)
        # cache warm-up: recomputed with the caches (capacity.che_hit_ratios, seg_age_s)
        cache, memst, block = self._node_arrays()
        node = np.where(served, self.reg_server, 0)
        # host metrics
        k = len(self.nodes)
        cached_kb = np.bincount(node[served], weights=(self.reg_cached_kb * self.reg_warmth)[served], minlength=k)
        writes_node = np.bincount(node[served], weights=puts[served], minlength=k)
        self.last_node_load = {}
        for n in self.nodes:
            if n.vm_state == "terminated":
                continue
            i = n.index
            if n.rs_state in ("active",):
                cpu, disk = float(util_cpu[i]), float(util_disk[i])
                fill = min(1.0, cached_kb[i] / max(1.0, h.heap_mb * cache[i] * 1024.0))
                ms_fill = 0.5 if writes_node[i] > 0 else 0.05
                heap_used = h.heap_mb * (h.heap_base_share + cache[i] * fill + memst[i] * ms_fill)
            else:
                cpu, disk = float(self._bg[0][i]) if i < len(self._bg[0]) else 0.0, 0.0
                heap_used = 0.0 if n.rs_state in ("absent", "stopped") else h.heap_mb * h.heap_base_share
            mem = min(1.0, (h.os_mb + heap_used) / h.ram_mb)
            # Linux counts a CPU's idle time as iowait while a task that last ran on it waits
            # for I/O (kernel/sched/cputime.c: account_idle_time, nr_iowait_cpu > 0;
            # Documentation/filesystems/proc.rst "iowait"). So at most one CPU per blocked
            # task, and only idle CPUs: iowait = min(outstanding I/Os, idle cores) / cores,
            # outstanding = the disk's queue (MVA) plus the background stream while it runs.
            waiting = (float(self._disk_queue[i]) if i < len(self._disk_queue) else 0.0) \
                + (float(self._bg[1][i]) if i < len(self._bg[1]) else 0.0)
            io_wait = min(waiting, h.cores * (1.0 - cpu)) / h.cores if n.rs_state == "active" else 0.0
            n.cpu_hist.append(cpu)
            n.io_hist.append(io_wait)
            n.mem_hist.append(mem)
            if n.rs_state == "active":
                # NaN: no call reached it this step (HBase's histogram then holds none either)
                n.lat_hist.append(float(self._node_latency_ms[i])
                                  if i < len(self._node_latency_ms) else math.nan)
            self.last_node_load[n.server_id] = (cpu, io_wait, mem)

    # ------------------------------------------------------------------ read API
    def recording(self) -> Recording:
        n = len(self.rec_t)
        w = len(self.wl_names)
        return Recording(t=np.asarray(self.rec_t, dtype=float),
                         ops=np.asarray(self.rec_ops, dtype=float).reshape(n, w),
                         latency_ms=np.asarray(self.rec_latency_ms, dtype=float),
                         latency_wl_ms=np.asarray(self.rec_latency_wl_ms, dtype=float).reshape(n, w),
                         vms=np.asarray(self.rec_vms, dtype=float),
                         servers=np.asarray(self.rec_servers, dtype=float),
                         tick_s=self.settings.tick_s, workloads=tuple(self.wl_names))

    def throughput(self) -> float:
        """Operations per second in the last step."""
        return float(self.last_x.sum())

    def latency_ms(self) -> float:
        """Mean response time over all operations in the last step."""
        return self.rec_latency_ms[-1] if self.rec_latency_ms else 0.0

    def billed_vms(self) -> int:
        return self.rec_vms[-1] if self.rec_vms else self.scenario.initial_nodes

    def node_views(self) -> list[NodeView]:
        """Every VM not yet terminated: state, host metrics, regions and operations served."""
        x = self.last_x[self.reg_cls] * (self.reg_share * (1 - self.p_insert[self.reg_cls])
                                         + self.reg_ins * self.p_insert[self.reg_cls])
        served = self.reg_server >= 0
        ops_node = np.bincount(self.reg_server[served], weights=x[served], minlength=len(self.nodes))
        out = []
        for n in self.nodes:
            if n.vm_state == "terminated":
                continue
            m = self.host_metrics(n) or (float("nan"),) * 3
            out.append(NodeView(host=n.host, profile=n.profile,
                                state=n.rs_state if n.vm_state == "running" else n.vm_state,
                                cpu=m[0], io_wait=m[1], memory=m[2],
                                regions=int(np.sum(self.reg_server == n.index)),
                                ops_per_s=float(ops_node[n.index])))
        return out

    # ------------------------------------------------------------------ summaries
    def server_latency_ms(self, node: SimNode) -> float | None:
        """Mean time a request spent in this RegionServer over the metrics window, ms: over
        the steps in which calls reached it, 0.0 when none did (HBase 2.6.4's call-time
        histogram is emptied at every metrics snapshot: HistogramImpl.snapshot() calls
        FastLongHistogram.snapshotAndReset(), so an idle server's TotalCallTime_mean reads 0,
        never the latency of calls long gone); None before it ever served."""
        if not node.lat_hist:
            return None
        served = [v for v in node.lat_hist if math.isfinite(v)]
        return float(np.mean(served)) if served else 0.0

    def host_metrics(self, node: SimNode) -> tuple[float, float, float] | None:
        if not node.cpu_hist:
            return None
        return (float(np.mean(node.cpu_hist)), float(np.mean(node.io_hist)), float(np.mean(node.mem_hist)))
