"""The simulated HBase-like cluster: regions on RegionServers on VMs, YCSB clients in a closed
loop or requests arriving open loop, and the elasticity actions with their delays and costs. Advances in steps of `tick_s`;
deterministic for a seed (numpy's PCG64 for the store's random choices; nothing else is random).

This module is the facade the adapters, the harness and the tests use; each step's parts live
in modules of their own:
 1. timed events fire (simulator.store.fire_events: a VM finishes booting, a RegionServer
    joins, a restart ends, a moved region opens, a split takes effect, a server that died has
    its regions reopened elsewhere), and the store's balancer runs if due (simulator.balancer);
 2. data transfers and compactions progress and load the nodes that do them
    (simulator.background);
 3. block-cache hit ratios are recomputed every `cache_update_s` (simulator.cache);
 4. per workload and station (each node's CPU and disk, each client machine) the service
    demands are built from the capacity model (simulator.demand); open-loop requests arrive
    (simulator.arrivals) and the network is solved (simulator.network, with the formulas of
    simulator.solver): closed classes by approximate MVA, open ones by M/M/c waits below
    saturation and a fluid backlog above it;
 5. per-region counters, sizes and locality advance (simulator.regions), host metrics are
    observed and the step is recorded (simulator.metrics).
"""
from __future__ import annotations

from dataclasses import fields

import numpy as np

from actuator.drivers import TAG_CLUSTER, TAG_MANAGED, TAG_PROFILE
from simulator import balancer, cache, capacity, demand, metrics, network, store
from simulator.arrivals import Arrivals
from simulator.background import Background, Transfer, compaction_done
from simulator.demand import WorkloadMix
from simulator.metrics import NodeView, Recording
from simulator.nodes import RS_PORT, Event, SimNode, new_node
from simulator.regions import Regions
from simulator.scenario import Scenario
from simulator.settings import SimulatorSettings

__all__ = ["SimCluster", "SimNode", "Event", "Transfer", "Recording", "NodeView", "RS_PORT"]


def _with_scenario_hardware(settings: SimulatorSettings, scenario: Scenario) -> SimulatorSettings:
    if not scenario.hardware:
        return settings
    try:
        hw = settings.hardware.model_copy(update=dict(scenario.hardware))
        hw = type(settings.hardware).model_validate(hw.model_dump())
    except Exception as err:  # noqa: BLE001 — reported as bad input by the caller
        raise ValueError(f"scenario hardware: {err}") from None
    return settings.model_copy(update={"hardware": hw})


class SimCluster:
    def __init__(self, scenario: Scenario, settings: SimulatorSettings | None = None,
                 *, seed: int | None = None, cluster: str = "demo"):
        self.scenario = scenario
        self.settings = settings = _with_scenario_hardware(settings or SimulatorSettings(), scenario)
        self.transfer_mode = scenario.data_transfer or settings.data_transfer
        self.cluster = cluster
        self.rng = np.random.Generator(np.random.PCG64(scenario.seed if seed is None else seed))
        self.t = 0.0
        self.events: list[Event] = []
        self.balancer_on = True  # HBase's own balancer is on until someone switches it off
        self._next_balance = settings.actions.balancer_period_s
        self._next_cache = 0.0
        self._counter = 0
        self._scripted_done: set[int] = set()
        self.nodes: list[SimNode] = []
        self.background = Background()
        self.splits: dict[int, int] = {}  # region being split -> its node (parent offline)
        self.split_parents: dict[str, tuple[str, str]] = {}  # split region id -> daughters' ids
        self.workloads = scenario.workloads
        self.mix = WorkloadMix.of(scenario.workloads)
        self.wl_names = list(self.mix.names)
        self.regions = Regions.build(scenario.workloads, settings.costs, scenario.initial_nodes, self.rng)
        for _ in range(scenario.initial_nodes):
            n = self.add_node(scenario.initial_profile, managed=True, boot=False)
            n.vm_state, n.rs_state, n.joined = "running", "active", 0.0
        self.arrivals = Arrivals(scenario.workloads, scenario.seed if seed is None else seed)
        cls = self.regions.cls
        threads, capped = balancer.expected_threads(self.mix.threads, self.mix.target, self.arrivals.open,
                                                    self.arrivals.mean_rates(0.0, scenario.duration_s))
        weight = self.regions.share * threads[cls] * capped[cls]
        for r, j in balancer.initial_placement(scenario.initial_placement, weight,
                                               scenario.initial_nodes, self.rng):
            store.open_region(self, r, j, locality=1.0)
        self.network = network.NetworkState()  # queues carried from step to step
        self.recorder = metrics.Recorder(tuple(self.wl_names), settings.tick_s,
                                         tuple(bool(o) for o in self.arrivals.open),
                                         tuple(w.timeout_ms for w in scenario.workloads))
        self.last_node_load: dict[str, tuple[float, float, float]] = {}
        self.last_x = np.zeros(len(self.workloads))

    # ------------------------------------------------------------------ state, as it was named
    @property
    def transfers(self) -> list[Transfer]:
        return self.background.transfers

    @property
    def compactions(self) -> dict[int, tuple[int, float]]:
        return self.background.compactions  # region -> (node, remaining MiB)

    @property
    def _bg(self) -> tuple[np.ndarray, np.ndarray]:
        return self.background.load

    p_read = property(lambda self: self.mix.p_read)
    p_update = property(lambda self: self.mix.p_update)
    p_insert = property(lambda self: self.mix.p_insert)
    p_scan = property(lambda self: self.mix.p_scan)
    p_rmw = property(lambda self: self.mix.p_rmw)
    threads = property(lambda self: self.mix.threads)
    target = property(lambda self: self.mix.target)
    client_hosts = property(lambda self: list(self.mix.client_hosts))
    wl_client = property(lambda self: self.mix.client)
    rec_t = property(lambda self: self.recorder.t)
    rec_ops = property(lambda self: self.recorder.ops)
    rec_latency_ms = property(lambda self: self.recorder.latency_ms)
    rec_latency_wl_ms = property(lambda self: self.recorder.latency_wl_ms)
    rec_vms = property(lambda self: self.recorder.vms)
    rec_servers = property(lambda self: self.recorder.servers)

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

    def invalidate_cache(self) -> None:
        """Placement changed: recompute the cache hit ratios at the next step."""
        self._next_cache = self.t

    def log(self, kind: str, detail: str) -> None:
        self.events.append(Event(self.t, kind, detail))

    def add_node(self, profile: str, *, managed: bool, boot: bool, tags: dict | None = None) -> SimNode:
        """A new VM, booting (boot=True) or already up; simulator.store.launch logs a launch."""
        self._counter += 1
        a = self.settings.actions
        node = new_node(len(self.nodes), self._counter, profile, managed=managed,
                        tags=dict(tags or {TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile}),
                        t=self.t, boot_s=a.vm_boot_s if boot else 0.0, join_s=a.rs_join_s if boot else 0.0,
                        window=max(1, int(round(self.settings.host_metric_window_s / self.settings.tick_s))))
        self.nodes.append(node)
        return node

    def place(self, r: int, node: int) -> None:
        """Open region r on node index `node` at once, local there (a scenario's manual layout)."""
        store.open_region(self, r, node, locality=1.0)

    # ------------------------------------------------------------------ store operations
    def move(self, r: int, target: int) -> None:
        """Start moving region r to node index `target` (already validated)."""
        store.move(self, r, target)

    def restart(self, node: SimNode, profile: str) -> None:
        store.restart(self, node, profile)

    def compact(self, r: int) -> None:
        store.compact(self, r)

    def split(self, r: int) -> None:
        """Start splitting region r in two on its server (simulator.store.split)."""
        store.split(self, r)

    def decommission(self, node: SimNode) -> None:
        store.decommission(self, node)

    def launch(self, profile: str, tags: dict[str, str]) -> SimNode:
        return store.launch(self, profile, tags)

    def terminate(self, node: SimNode) -> None:
        store.terminate(self, node)

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
                # joining while it is on is balanced at once.
                self.launch(sl.profile, {TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: sl.profile})
        joined_now = store.fire_events(self)
        if self.balancer_on and (joined_now or self.t >= self._next_balance):
            self._balance()
            self._next_balance = self.t + self.settings.actions.balancer_period_s
        bg_cpu, bg_disk = self.background.progress(
            dt, len(self.nodes), self.settings.actions, self.settings.hardware,
            finish_transfer=lambda tr: store.finish_transfer(self, tr), compacted=self._compacted,
            served_by=lambda r: int(self.regions.server[r]), read_shares=self._read_shares,
            prefetched=self._prefetched)
        if self.t >= self._next_cache:
            self._update_cache()
            self._next_cache = self.t + self.settings.cache_update_s
        res = self._solve(bg_cpu, bg_disk, dt)
        self._advance(res, dt)
        vms = sum(1 for n in self.nodes if n.vm_state in ("booting", "running", "stopping"))
        self.recorder.record(self.t, dt, res, vms, len(self.serving_nodes()))
        self.last_x = res.x
        self.t += dt

    def _balance(self) -> None:
        live = [n.index for n in self.serving_nodes()]
        moved = balancer.balance(lambda: self.regions.assigned, live, self.rng, self.move)
        if moved:
            self.log("balancer", f"moved {moved} regions")

    def _read_shares(self, r: int) -> np.ndarray:
        """Per node, the share of region r's file reads its disk serves: the local part on its
        server, the rest from the DataNodes holding replicas (as remote block reads)."""
        reg = self.regions
        node = int(reg.server[r])
        alive = np.array([n.vm_state == "running" for n in self.nodes], dtype=bool)
        loc = float(np.clip(reg.locality[r], 0.0, 1.0))
        share = (1.0 - loc) * demand.datanode_shares(np.array([node]), reg.home[r:r + 1], alive)[0]
        share[node] += loc
        return share

    def _prefetched(self, r: int, fraction: float) -> None:
        self.regions.prefetched[r] = fraction
        if fraction >= 1.0:
            self.invalidate_cache()  # its hit ratio jumps now, not at the next periodic update

    def _compacted(self, r: int, node: int) -> None:
        compaction_done(self.regions, r, node, len(self.serving_nodes()))
        self.log("compacted", self.regions.ids[r][:8])

    def _update_cache(self) -> None:
        cls = self.regions.cls
        cache.update(self.regions, self.nodes, self.settings.profiles, self.settings.hardware,
                     self.settings.costs, self.last_x[cls], (self.mix.p_read + self.mix.p_rmw)[cls],
                     self.mix.p_scan[cls], self.t)

    def _solve(self, bg_cpu: np.ndarray, bg_disk: np.ndarray, dt: float) -> network.StepResult:
        """What each workload got this step, and what each node did (simulator.network)."""
        h = self.settings.hardware
        serving = np.array([n.rs_state == "active" for n in self.nodes], dtype=bool)
        c = capacity.on_shared_machine(self.settings.costs, int(serving.sum()), h.shared_machine_cost_growth)
        active = np.array([w.active(self.t) for w in self.workloads], dtype=bool)
        _, memst, block = cache.profile_arrays(self.nodes, self.settings.profiles)
        rc = demand.region_costs(self.regions, self.mix, memst, block, self.t, c, h)
        alive = np.array([n.vm_state == "running" for n in self.nodes], dtype=bool)
        d = demand.station_demands(rc, self.regions, self.mix, alive, bg_cpu, bg_disk, c, h)
        step = network.StepInput(rc=rc, d=d, cls=self.regions.cls, active=active,
                                 open_loop=self.arrivals.open, arrivals=self.arrivals.step(self.t, dt),
                                 timeout_s=self.arrivals.timeout_s, serving=serving, block_kb=block,
                                 bg_cpu=bg_cpu, bg_disk=bg_disk, dt=dt,
                                 slo_ms=float(self.scenario.slo_latency_ms))
        return network.solve(self.network, step, self.mix, c, h)

    def _advance(self, res: network.StepResult, dt: float) -> None:
        """Count the step's requests on the regions; observe the nodes' host metrics."""
        c, h = self.settings.costs, self.settings.hardware
        reg = self.regions
        served = reg.server >= 0
        gets, scans, puts, inserts = demand.requests_per_region(res.x, dt, reg, self.mix)
        reg.record_served(gets, scans, puts, inserts * c.record_kb * c.storage_overhead / 1024.0,
                          puts * c.record_kb * c.storage_overhead / 1024.0)
        cache_share, memst, _ = cache.profile_arrays(self.nodes, self.settings.profiles)
        node = np.where(served, reg.server, 0)
        k = len(self.nodes)
        load = metrics.NodeLoad(
            util_cpu=res.util_cpu, util_disk=res.util_disk, bg_cpu=self.background.load[0],
            bg_disk=self.background.load[1], disk_queue=res.disk_queue, latency_ms=res.node_latency_ms, queue=res.node_queue, dropped=res.node_dropped,
            cache_share=cache_share, memstore_share=memst,
            cached_kb=np.bincount(node[served], weights=(reg.cached_kb * reg.warmth)[served], minlength=k),
            writes=np.bincount(node[served], weights=puts[served], minlength=k))
        self.last_node_load = metrics.observe_hosts(self.nodes, load, h)

    # ------------------------------------------------------------------ read API
    def recording(self) -> Recording:
        return self.recorder.recording()

    def throughput(self) -> float:
        """Operations per second in the last step."""
        return float(self.last_x.sum())

    def latency_ms(self) -> float:
        """Mean response time over all operations in the last step."""
        return self.recorder.latency_ms[-1] if self.recorder.latency_ms else 0.0

    def billed_vms(self) -> int:
        return self.recorder.vms[-1] if self.recorder.vms else self.scenario.initial_nodes

    def node_views(self) -> list[NodeView]:
        """Every VM not yet terminated: state, host metrics, regions and operations served."""
        reg, mix = self.regions, self.mix
        x = self.last_x[reg.cls] * (reg.share * (1 - mix.p_insert[reg.cls]) + reg.ins * mix.p_insert[reg.cls])
        return metrics.node_views(self.nodes, reg.server, x)

    def server_queue_length(self, node: SimNode) -> float | None:
        """Calls waiting in the node's RPC call queue (simulator.metrics.server_queue_length)."""
        return metrics.server_queue_length(node)

    def server_latency_ms(self, node: SimNode) -> float | None:
        """Mean time a request spent in this RegionServer over the metrics window
        (simulator.metrics.server_latency_ms)."""
        return metrics.server_latency_ms(node)

    def host_metrics(self, node: SimNode) -> tuple[float, float, float] | None:
        return metrics.host_metrics(node)


# The per-region arrays under the names the adapters, benches and tests have always used:
# reg_<field> for every array of simulator.regions.Regions, region_ids and region_tables.
def _region_field(name: str) -> property:
    return property(lambda self: getattr(self.regions, name),
                    lambda self, value: setattr(self.regions, name, value),
                    doc=f"Regions.{name} (one entry per region)")


for _f in fields(Regions):
    setattr(SimCluster, {"ids": "region_ids", "tables": "region_tables"}.get(_f.name, f"reg_{_f.name}"),
            _region_field(_f.name))
