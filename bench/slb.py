"""HBase's own StochasticLoadBalancer and metctl's plan on the same Zipf-loaded snapshot.

The pieces bench/bench_slb.py prints and tests/bench/test_slb.py checks:

* `zipf_snapshot` — a seeded ClusterSnapshot: Zipf partition loads, lognormal region sizes,
  regions dealt round-robin from a shuffled list (equal counts, random loads), node CPU in
  proportion to the load each node serves;
* `StochasticBalancer` — the real `org.apache.hadoop.hbase.master.balancer.StochasticLoadBalancer`
  of HBase 2.6 (hbase-server jar from Maven Central) in a py4j JVM, fed the snapshot's regions
  per server and per-region request counters through hbase-client's ClusterMetrics builders;
* `run_metctl` — metctl's public decision API exactly as `metctl plan` calls it (config loaded
  by `load_config`, configs/met-marks.yaml unless told, fresh decision memory), size pinned to
  the snapshot's (SLB cannot resize);
* `balance_figures` — moves, restarts, max/mean, the floor and the gap to it, from the
  placement each one leaves (every partition checked to be placed exactly once).
"""
from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from decision import DecisionMemory, decide
from decision.model import ClusterSnapshot, Node, NodeMetrics, Partition

TABLE = "usertable"
RS_PORT = 16020  # HBase's default RegionServer RPC port
TAKEN_AT = datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc)
# hbase.hregion.max.filesize default in HBase 2.x hbase-default.xml (10 GB): a region is split
# before it grows past this, so no region in the snapshot is larger.
REGION_MAX_MB = 10 * 1024
# Assumption (no published distribution of region sizes found): lognormal, median 2 GB,
# sigma 0.8, capped at the split size — most regions between 0.5 and 8 GB.
REGION_MEDIAN_MB = 2048.0
REGION_SIZE_SIGMA = 0.8
# (reads, writes, scans) shares of a read-, write-, mixed- or scan-heavy region: the four kinds
# MET's Stage C tells apart, drawn with equal odds (tests/fixtures/snapshots.py uses the same).
KIND_SHARES = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0], [0.5, 0.5, 0.0], [0.05, 0.05, 0.9]])


def node_id(i: int) -> str:
    return f"rs{i:05d}.example.org,{RS_PORT}"


def zipf_snapshot(nodes: int = 100, partitions: int = 5000, *, exponent: float = 0.8,
                  seed: int = 7, mean_cpu: float = 0.5, peak_rate: float = 1000.0,
                  placement: str = "round-robin") -> ClusterSnapshot:
    """A seeded snapshot: partition k (in a shuffled order) serves peak_rate / rank^exponent
    requests/s. `placement`: "round-robin" deals a shuffled region list over the nodes (equal
    counts, as HBase's balancer leaves a cluster: what is left to fix is load), "random" puts
    each region on a uniformly drawn node. Node cpu = mean_cpu x its load / the mean load."""
    for name, value, ok, expected in (
            ("nodes", nodes, nodes >= 1, "an integer >= 1"),
            ("partitions", partitions, partitions >= 1, "an integer >= 1"),
            ("exponent", exponent, exponent >= 0, "a number >= 0"),
            ("mean_cpu", mean_cpu, 0 < mean_cpu <= 1, "a fraction in (0, 1]"),
            ("peak_rate", peak_rate, peak_rate > 0, "a number > 0")):
        if not ok:
            raise ValueError(f"{name}: expected {expected}, got {value}")
    rng = np.random.default_rng(seed)
    loads = peak_rate / np.arange(1, partitions + 1, dtype=np.float64) ** exponent
    rng.shuffle(loads)
    rws = KIND_SHARES[rng.integers(0, len(KIND_SHARES), partitions)] * loads[:, None]
    sizes = np.minimum(rng.lognormal(np.log(REGION_MEDIAN_MB), REGION_SIZE_SIGMA, partitions),
                       REGION_MAX_MB).round()
    if placement == "round-robin":
        where = rng.permutation(partitions) % nodes
    elif placement == "random":
        where = rng.integers(0, nodes, partitions)
    else:
        raise ValueError(f"placement: expected round-robin or random, got {placement!r}")
    node_load = np.bincount(where, weights=loads, minlength=nodes)
    cpu = np.clip(mean_cpu * node_load / node_load.mean(), 0.0, 1.0)
    node_list = tuple(Node(node_id(i), "default", "active", NodeMetrics(float(cpu[i]), 0.02, 0.5))
                      for i in range(nodes))
    parts = tuple(Partition(f"r{k:07d}", TABLE, node_list[where[k]].id, float(r), float(w),
                            float(s), float(sizes[k]), 1.0)
                  for k, (r, w, s) in enumerate(rws.tolist()))
    return ClusterSnapshot(taken_at=TAKEN_AT, nodes=node_list, partitions=parts)


# --- figures ---------------------------------------------------------------------------------

@dataclass
class Figures:
    name: str
    moves: int
    restarts: int
    nodes: int
    max_mean: float  # most loaded node / mean node load after the plan
    floor: float  # max(largest partition, total / nodes) / mean: no placement does better
    over_floor_pct: float
    wall_s: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def placement_of(snapshot: ClusterSnapshot) -> dict[str, str]:
    return {p.id: p.node for p in snapshot.partitions}


def balance_figures(name: str, snapshot: ClusterSnapshot, after: Mapping[str, str],
                    node_ids: list[str], moves: int, restarts: int, wall_s: float,
                    **extra: Any) -> Figures:
    """Figures of the placement `after` (partition -> node). Refuses a placement that loses,
    invents or misplaces a partition, or whose move count does not match what changed."""
    ids = {p.id for p in snapshot.partitions}
    if set(after) != ids:
        raise AssertionError(f"{name}: placement covers {len(after)} partitions, snapshot has "
                             f"{len(ids)} ({len(set(after) ^ ids)} differ)")
    known = set(node_ids)
    stray = {n for n in after.values() if n not in known}
    if stray:
        raise AssertionError(f"{name}: partitions placed on unknown nodes {sorted(stray)[:3]}")
    changed = sum(after[p.id] != p.node for p in snapshot.partitions)
    if changed != moves:
        raise AssertionError(f"{name}: {moves} moves reported, {changed} partitions changed node")
    index = {n: i for i, n in enumerate(node_ids)}
    loads = np.fromiter((p.requests for p in snapshot.partitions), np.float64)
    where = np.fromiter((index[after[p.id]] for p in snapshot.partitions), np.int64)
    node_load = np.bincount(where, weights=loads, minlength=len(node_ids))
    mean = node_load.mean()
    max_mean = float(node_load.max() / mean) if mean > 0 else 1.0
    floor = float(max(loads.max(), loads.sum() / len(node_ids)) / mean) if mean > 0 else 1.0
    return Figures(name, moves, restarts, len(node_ids), max_mean, floor,
                   100.0 * (max_mean / floor - 1.0), wall_s, dict(extra))


# --- metctl ----------------------------------------------------------------------------------

# The placement that competes with SLB's: MET's LPT with reconciliation over the whole cluster.
# The default met, sized from demand, moves only what relieves a node over its capacity at the
# SLO, which is not a balancer's job (docs/policy.md, "Sizing from demand").
PLACEMENT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "met-marks.yaml"


def run_metctl(snapshot: ClusterSnapshot,
               config_file: str | os.PathLike[str] | None = PLACEMENT_CONFIG,
               *, pin_size: bool = True) -> tuple[Figures, Any]:
    """metctl's plan for the snapshot as `metctl plan --snapshot S --config F` makes it (the
    config's policy, fresh decision memory; None: the built-in config), with min_nodes =
    max_nodes = the snapshot's node count when `pin_size` (SLB places on the servers it has; so
    must metctl here)."""
    from controller.config import load_config

    policy = load_config(str(config_file) if config_file else None).policy
    nodes = [n.id for n in snapshot.nodes if n.state == "active"]
    if pin_size:
        policy = policy.model_copy(update={"min_nodes": len(nodes), "max_nodes": len(nodes)})
    wall, cpu = time.perf_counter(), time.process_time()
    plan = decide(snapshot, policy, DecisionMemory())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = {pid: a.node for a in plan.assignment for pid in a.partitions}
    counted = sum(len(a.partitions) for a in plan.assignment)
    if counted != len(after):
        raise AssertionError(f"metctl: {counted - len(after)} partitions assigned twice")
    final_nodes = [a.node for a in plan.assignment] if plan.assignment else nodes
    ops: dict[str, int] = {}
    for a in plan.actions:
        ops[a.op] = ops.get(a.op, 0) + 1
    if not plan.actions:  # no plan: everything stays where it is
        after = placement_of(snapshot)
    figures = balance_figures(
        "metctl", snapshot, after, final_nodes, plan.summary.moves,
        plan.summary.reconfigurations, wall, cpu_s=cpu, policy=plan.policy,
        target_nodes=plan.sizing.target, reason=plan.reason, actions=ops,
        plan_max_load_ratio=plan.summary.max_load_ratio)
    return figures, plan


# --- HBase's StochasticLoadBalancer ----------------------------------------------------------

class _MasterServices:
    """What StochasticLoadBalancer asks of the HMaster it normally runs in, answered from
    Python through py4j: its Configuration (stock hbase-default.xml), no master server name
    (no regions pinned to the master) and no table descriptors (no region replicas, no HDFS
    block locations). Any other MasterServices method raises, so an unexpected dependency
    shows up as an error instead of a silent default."""

    def __init__(self, conf: Any):
        self.conf = conf
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def getConfiguration(self) -> Any:  # noqa: N802 - Java interface method
        self._count("getConfiguration")
        return self.conf

    def getServerName(self) -> None:  # noqa: N802
        self._count("getServerName")
        return None

    def getTableDescriptors(self) -> None:  # noqa: N802
        self._count("getTableDescriptors")
        return None

    class Java:
        implements = ["org.apache.hadoop.hbase.master.MasterServices"]


@dataclass
class SlbRun:
    plans: list[tuple[str, str, str]]  # (partition, source node, destination node)
    wall_s: float  # balanceCluster alone
    setup_s: float  # building the RegionInfos and ClusterMetrics over py4j (not SLB's work)
    settings: dict[str, Any]
    log: list[str] = field(default_factory=list)  # SLB's own log lines during balanceCluster


class StochasticBalancer:
    """HBase 2.6's StochasticLoadBalancer in a py4j JVM (one per instance; `close()` stops it).

        with StochasticBalancer() as slb:
            run = slb.balance(snapshot)
    """

    SLB = "org.apache.hadoop.hbase.master.balancer.StochasticLoadBalancer"
    # settings reported with each run: key -> name of SLB's static default
    REPORTED = {
        "hbase.master.balancer.stochastic.maxRunningTime": "DEFAULT_MAX_RUNNING_TIME",
        "hbase.master.balancer.stochastic.maxSteps": "DEFAULT_MAX_STEPS",
        "hbase.master.balancer.stochastic.stepsPerRegion": "DEFAULT_STEPS_PER_REGION",
        "hbase.master.balancer.stochastic.runMaxSteps": "DEFAULT_RUN_MAX_STEPS",
        "hbase.master.balancer.stochastic.minCostNeedBalance": "DEFAULT_MIN_COST_NEED_BALANCE",
    }

    def __init__(self, lib_dir: str | os.PathLike[str] | None = None, *,
                 settings: Mapping[str, str] | None = None, heap: str = "1g"):
        from actuator.hbase_gateway import default_client_jars_dir

        self.lib_dir = Path(lib_dir) if lib_dir else default_client_jars_dir()
        self.settings = dict(settings or {})
        self.heap = heap
        self.gateway: Any = None
        self._proc: Any = None
        self._log: Any = None
        self.log_path: Path | None = None

    def open(self) -> "StochasticBalancer":
        from py4j.java_gateway import (
            CallbackServerParameters, GatewayParameters, JavaGateway, launch_gateway,
        )

        from actuator.hbase_gateway import DEFAULT_JAVA_OPTS, py4j_jar

        if not any(self.lib_dir.glob("hbase-server-*.jar")):
            raise FileNotFoundError(f"no hbase-server jar in {self.lib_dir}; run "
                                    "deploy/test-deps.d/hbase.sh (deploy/local_hbase/cluster.py fetch)")
        fd, name = tempfile.mkstemp(prefix="metctl-slb-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)
        self._log = open(self.log_path, "w")
        # The gateway's JDK 17 flags, but not its start-up tuning: a master runs the balancer
        # with the JVM's default JIT (C2) and collector, and so does this bench.
        opts = [o for o in DEFAULT_JAVA_OPTS
                if not o.startswith(("-Xmx", "-XX:TieredStopAtLevel", "-XX:+UseSerialGC"))]
        # SLB's own log lines (why it balances or declines, its cost before and after) go to
        # the log file through reload4j, the logging backend in HBase 2.6's runtime jars.
        props = self.log_path.with_suffix(".properties")
        props.write_text(
            "log4j.rootLogger=WARN, err\n"
            "log4j.logger.org.apache.hadoop.hbase.master.balancer=INFO\n"
            "log4j.appender.err=org.apache.log4j.ConsoleAppender\n"
            "log4j.appender.err.target=System.err\n"
            "log4j.appender.err.layout=org.apache.log4j.PatternLayout\n"
            "log4j.appender.err.layout.ConversionPattern=%p %c{1}: %m%n\n")
        opts.append(f"-Dlog4j.configuration={props.as_uri()}")
        port, token, self._proc = launch_gateway(
            port=0, jarpath=py4j_jar(), classpath=str(self.lib_dir / "*"),
            javaopts=[f"-Xmx{self.heap}", *opts], die_on_exit=True, enable_auth=True,
            return_proc=True, redirect_stderr=self._log, redirect_stdout=self._log)
        # The balancer calls back into Python for MasterServices. py4j's launched JVM cannot
        # authenticate to a Python callback server, so that one runs without a token; it
        # listens on 127.0.0.1 only and serves nothing but the read-only _MasterServices.
        self.gateway = JavaGateway(
            gateway_parameters=GatewayParameters(address="127.0.0.1", port=port, auth_token=token,
                                                 auto_convert=True, auto_close=True),
            callback_server_parameters=CallbackServerParameters(
                address="127.0.0.1", port=0, daemonize=True, daemonize_connections=True))
        server = self.gateway.java_gateway_server
        server.resetCallbackClient(server.getCallbackClient().getAddress(),
                                   self.gateway.get_callback_server().get_listening_port())
        return self

    def close(self) -> None:
        from actuator.hbase_gateway import stop_gateway_jvm

        stop_gateway_jvm(self.gateway, self._proc, self._log)
        self.gateway = self._proc = self._log = None
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path.with_suffix(".properties").unlink(missing_ok=True)

    def __enter__(self) -> "StochasticBalancer":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def _static(self, field_name: str) -> Any:
        jvm = self.gateway.jvm
        f = jvm.java.lang.Class.forName(self.SLB).getDeclaredField(field_name)
        f.setAccessible(True)
        return f.get(None)

    def balance(self, snapshot: ClusterSnapshot, *, window_s: float = 300.0) -> SlbRun:
        """SLB's region plans for the snapshot. Per-region read/write counters are reported
        twice, `window_s` apart (the master's default balancer period is 300 s), because SLB's
        request cost functions work on the rate between successive reports; store file sizes
        are the partitions' sizes. Only `balanceCluster` is timed."""
        if self.gateway is None:
            self.open()
        jvm = self.gateway.jvm
        hb = jvm.org.apache.hadoop.hbase
        t0 = time.perf_counter()
        conf = hb.HBaseConfiguration.create()
        for k, v in self.settings.items():
            conf.set(k, str(v))
        settings = {k: str(conf.get(k) or self._static(d)) for k, d in self.REPORTED.items()}
        table = hb.TableName.valueOf(TABLE)
        mb = hb.Size.Unit.MEGABYTE
        nodes = [n.id for n in snapshot.nodes if n.state == "active"]
        start = int(TAKEN_AT.timestamp() * 1000)
        server_of = {n: hb.ServerName.valueOf(n.split(",")[0], RS_PORT, start + i)
                     for i, n in enumerate(nodes)}
        node_of_server = {server_of[n].toString(): n for n in nodes}
        regions: dict[str, Any] = {}
        region_name: dict[str, bytes] = {}
        partition_of: dict[str, str] = {}
        parts = sorted(snapshot.partitions, key=lambda p: p.id)
        for k, p in enumerate(parts):
            b = hb.client.RegionInfoBuilder.newBuilder(table)
            if k:
                b.setStartKey(f"user{k:09d}".encode())
            if k + 1 < len(parts):
                b.setEndKey(f"user{k + 1:09d}".encode())
            info = b.setRegionId(start).build()
            regions[p.id] = info
            region_name[p.id] = info.getRegionName()
            partition_of[info.getEncodedName()] = p.id
        sizes = {p.id: hb.Size(float(p.size_mb), mb) for p in parts}

        def cluster_metrics(elapsed_s: float) -> Any:
            per_server: dict[str, list[Any]] = {n: [] for n in nodes}
            for p in parts:
                rb = hb.RegionMetricsBuilder.newBuilder(region_name[p.id]).setStoreFileSize(sizes[p.id])
                if elapsed_s:
                    # HBase counts scanned rows as read requests; gets and scans both read
                    rb.setReadRequestCount(int(round((p.reads + p.scans) * elapsed_s)))
                    rb.setWriteRequestCount(int(round(p.writes * elapsed_s)))
                per_server[p.node].append(rb.build())
            live = {server_of[n]: hb.ServerMetricsBuilder.newBuilder(server_of[n])
                    .setRegionMetrics(per_server[n]).build() for n in nodes}
            return hb.ClusterMetricsBuilder.newBuilder().setLiveServerMetrics(live).build()

        master = _MasterServices(conf)
        slb = jvm.org.apache.hadoop.hbase.master.balancer.StochasticLoadBalancer()
        slb.setMasterServices(master)
        slb.initialize()
        slb.updateClusterMetrics(cluster_metrics(0.0))
        slb.updateClusterMetrics(cluster_metrics(window_s))
        # A master warms its RegionLocationFinder (HDFS block locations per region) once at
        # start-up (postMasterStartupInitialize -> refreshAndWait); do the same here so the
        # timed balanceCluster does not include filling that cache.
        finder_field = jvm.java.lang.Class.forName(
            "org.apache.hadoop.hbase.master.balancer.BaseLoadBalancer").getDeclaredField("regionFinder")
        finder_field.setAccessible(True)
        finder = finder_field.get(slb)
        if finder is not None:
            finder.refreshAndWait(list(regions.values()))
        assignment = {server_of[n]: [regions[p.id] for p in parts if p.node == n] for n in nodes}
        load = {table: assignment}
        setup_s = time.perf_counter() - t0
        calls_before = dict(master.calls)
        self._log.flush()
        log_from = self.log_path.stat().st_size
        t1 = time.perf_counter()
        plans = slb.balanceCluster(load)
        wall_s = time.perf_counter() - t1
        with open(self.log_path, errors="replace") as f:
            f.seek(log_from)
            said = [line.rstrip() for line in f if "StochasticLoadBalancer" in line]
        out: list[tuple[str, str, str]] = []
        for plan in (plans or []):
            out.append((partition_of[plan.getRegionInfo().getEncodedName()],
                        node_of_server[plan.getSource().toString()],
                        node_of_server[plan.getDestination().toString()]))
        settings["master_calls"] = dict(master.calls)
        # callbacks into Python while balanceCluster ran (inside the timed part; ~0 expected)
        settings["master_calls_timed"] = {k: v - calls_before.get(k, 0)
                                          for k, v in master.calls.items() if v != calls_before.get(k, 0)}
        return SlbRun(out, wall_s, setup_s, settings, said)


def apply_slb(snapshot: ClusterSnapshot, run: SlbRun) -> tuple[dict[str, str], int]:
    """The placement after SLB's plans, each applied to where its region is (a plan whose source
    is not the region's current server, or a second plan for one region, is refused); and the
    number of plans that move a region to another server."""
    after = placement_of(snapshot)
    seen: set[str] = set()
    moves = 0
    for pid, src, dst in run.plans:
        if pid in seen:
            raise AssertionError(f"SLB planned region {pid} twice")
        seen.add(pid)
        if after[pid] != src:
            raise AssertionError(f"SLB moves {pid} from {src}, but it is on {after[pid]}")
        moves += src != dst
        after[pid] = dst
    return after, moves


SEARCH_LINE = re.compile(r"Computation took (\d+) ms to try (\d+) different iterations")
DECLINE_LINE = re.compile(r"skipping load balancing because weighted average imbalance=([0-9.eE-]+)")


def run_slb(snapshot: ClusterSnapshot, balancer: StochasticBalancer) -> Figures:
    """SLB's figures; `extra` adds its search time and steps (from its own log line) or the
    imbalance under which it declined to balance."""
    run = balancer.balance(snapshot)
    after, moves = apply_slb(snapshot, run)
    nodes = [n.id for n in snapshot.nodes if n.state == "active"]
    extra: dict[str, Any] = {}
    for line in run.log:
        if m := SEARCH_LINE.search(line):
            extra["search_ms"], extra["steps_tried"] = int(m[1]), int(m[2])
        if m := DECLINE_LINE.search(line):
            extra["declined_imbalance"] = float(m[1])
    return balance_figures("hbase-slb", snapshot, after, nodes, moves, 0, run.wall_s,
                           plans=len(run.plans), setup_s=run.setup_s, settings=run.settings,
                           slb_log=run.log, **extra)


__all__ = ["zipf_snapshot", "Figures", "balance_figures", "run_metctl", "StochasticBalancer",
           "SlbRun", "apply_slb", "run_slb", "placement_of", "node_id"]
