"""Settings of the simulated cluster: the capacity model's constants and the cost of each
elasticity action, every one with its unit and where its value comes from.

Sources cited in the descriptions:
  MET      Cruz et al., "MET: workload aware elasticity for NoSQL", EuroSys 2013 (papers/001).
  tiramola Konstantinou et al., CIKM 2011 (papers/002).
  incr.    "Incremental elasticity for NoSQL data stores" (papers/000).
  Dory     Dory et al., "Measuring elasticity for cloud databases" (papers/003).
  REAL     /work/shared/REAL-COMPONENTS.md (HBase 2.6.4 measured on this project's machines).
  HBase    the HBase reference guide's stock defaults.
  YCSB     YCSB 0.17 CoreWorkload defaults and the shipped workloads/workload[a-f] files.
Values marked "assumption" have no published figure behind them; values marked "calibrated"
were set once so the static experiment of MET §3.4 comes out as the paper reports, before any
elasticity run, and were never changed to favour a policy.
"""
from __future__ import annotations

from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProfileSettings(_Frozen):
    """One node configuration profile as the capacity model sees it."""

    block_cache_share: float = Field(..., gt=0, lt=1, description="Fraction of the heap given to the block cache (hfile.block.cache.size).")
    memstore_share: float = Field(..., gt=0, lt=1, description="Fraction of the heap given to memstores (hbase.regionserver.global.memstore.size).")
    block_kb: float = Field(..., gt=0, description="HFile block size in KiB (column family BLOCKSIZE).")
    prefetch_on_open: bool = Field(False, description="A region opening on the node reads its files into the block cache (hbase.rs.prefetchblocksonopen; HBase's default: false).")


def simulated_profiles(profiles: Mapping[str, Any]) -> dict[str, ProfileSettings]:
    """Node profiles (profiles.NodeProfile, by name) as the capacity model sees them."""
    return {name: ProfileSettings(block_cache_share=p.block_cache_fraction,
                                  memstore_share=p.memstore_fraction, block_kb=float(p.block_size_kb),
                                  prefetch_on_open=p.prefetch_on_open)
            for name, p in profiles.items()}


def _default_profiles() -> dict[str, ProfileSettings]:
    # The shipped profiles (profiles/*.yaml: MET Table 1 for read/write/read_write/scan, HBase's
    # stock defaults for `default`) — the same files the real nodes are configured from.
    from profiles import shipped_profiles

    return simulated_profiles(shipped_profiles())


class HardwareSettings(_Frozen):
    """One simulated server (a RegionServer co-located with a DataNode)."""

    cores: int = Field(2, ge=1, description="CPU cores per node. MET §3.2: Intel i3 (2 cores).")
    ram_mb: float = Field(4096, gt=0, description="Memory per node in MiB. MET §3.2: 4 GB.")
    heap_mb: float = Field(3072, gt=0, description="RegionServer heap in MiB. MET §3.2 / §6.3: 3 GB heap.")
    os_mb: float = Field(400, ge=0, description="Memory used outside the JVM heap (OS, DataNode, JVM overhead), MiB. Assumption.")
    heap_base_share: float = Field(0.20, ge=0, lt=1, description="Heap used by a RegionServer apart from cache and memstore (indexes, RPC buffers). Assumption.")
    shared_machine_cost_growth: float = Field(0.0, ge=0, description="How a RegionServer's CPU per request grows with the RegionServers that serve beside it on one machine: every server cost times 1 + g · ln(servers). 0: each node is a machine of its own (MET §3.2's testbed). Measured on the local cluster of 0.15-core RegionServers on one 2-core machine (bench/scale_hbase.py, per-thread CPU, docs/scale-hbase-threads-report.json): 0.0975 ms of RegionServer CPU per YCSB A operation at 1 server, 0.149 ms at 4, so g = 0.38 there (bench/sim_vs_real.py --cost-growth-from); why is not measured, and the logarithmic form is an assumption, checked on two curves g was not read from: throughput within 9 % at every size from 1 to 6 servers (docs/evaluation.md, \"The simulator with the cost of sharing one machine\").")
    cpu_quota_period_ms: float = Field(0.0, ge=0, description="Period of a control-group CPU quota each node runs under (cpu.cfs_period_us): a node that has spent its quota of a period stops until the next one begins, and the requests it holds wait with it, so a request's wait comes in whole periods (the percentile, not the mean; simulator.solver.throttled_wait_survival). 0: no quota, a node is a machine (MET §3.2). The local cluster: 100, the kernel's default period (deploy/localproc/cgroups.py). Measured there (docs/evaluation.md, \"The p99 the simulator does not have\"): one 0.15-core RegionServer at saturation, p99 93-94 ms with a 100-ms period and 51 ms with a 10-ms one, at the same mean.")
    cpu_quota_run_share: float = Field(1.0, gt=0, le=1, description="Share of the quota's period a node runs for when it spends its whole quota: its quota over the cores it runs on while it runs (used only with cpu_quota_period_ms). The local cluster: a RegionServer's quota (0.15 core) on one core; that it runs on one core at a time, of the machine's two shared with the others, is an assumption.")
    cpu_wakeup_ms: float = Field(0.0, ge=0, description="CPU a node under a quota spends per wake-up, in ms of the node as simulated (a quota'd node's costs are the measured ones over its quota), on top of its costs per request: at a low rate each request wakes the server's threads on its own, at a high rate one wake-up serves what arrived within cpu_wakeup_window_ms, so wake-ups come at λ / (1 + λ·window) a second (λ its requests a second). Only the share of its quota a node asks (whether and how often the quota runs out, simulator.solver.quota_stopped_share) counts it; its throughput and mean are its costs'. 0: the node's CPU is in proportion to its requests. The local cluster: 0.773 ms of RegionServer CPU, over the 0.15-core quota 5.15: the fit 6 + 0.082 λ + 0.773 λ / (1 + 0.0056 λ) ms/s of a quota'd RegionServer's CPU against the YCSB A requests it serves, within 10 % at one and four RegionServers (docs/scale-hbase-load-cpu-report.json and docs/scale-hbase-load4-report.json, 2026-11-28; docs/local-hbase.md, \"The p99 below saturation\").")
    cpu_wakeup_window_ms: float = Field(0.0, ge=0, description="How long after a wake-up the requests that arrive are served by it, ms (used only with cpu_wakeup_ms). The local cluster: 5.6 ms, the same fit as cpu_wakeup_ms.")
    cpu_quota_dispersion: float = Field(0.0, ge=0, description="Variance over mean of the CPU a node asks in one quota period, counted in quotas (used only with cpu_quota_period_ms): a period's demand is taken gamma-distributed with the mean the node asks (its utilisation plus its wake-ups), its quota runs out in the periods whose demand is over one quota, and a request that arrives while it is stopped (the share of periods it ran out in times the stop, 1 − cpu_quota_run_share of the period, or shorter with cpu_quota_stop_per_excess) waits the stop's rest (simulator.solver.quota_stopped_share). 0: a period's demand is its mean (a node whose utilisation is at most 1 then never stops that way). The local cluster: 0.024, fitted (least squares) with cpu_quota_stop_per_excess to both cpu.stat shares of each RegionServer, the share of 100-ms periods its quota ran out in and the time it was stopped, 40 points at 10-95 % of the saturated rate, one and four RegionServers, each at the share the simulated node asks there (docs/scale-hbase-load-report.json, docs/scale-hbase-load4-report.json, docs/scale-hbase-load-cpu-report.json; 0.020 fitted to one RegionServer's points alone, 0.029 to four's; the periods' share predicted within 0.084 rms; docs/evaluation.md, \"The quota's stops by their length\"; fitted to the periods' share alone, 0.026: \"The quota's stops below saturation\"). About what Poisson arrivals of requests of one cost would give (a request's CPU over the quota, 0.025 at 340 requests a second).")
    cpu_quota_stop_per_excess: float = Field(0.0, ge=0, description="How long a period whose quota runs out stops, per quota its demand asks beyond the quota (used only with cpu_quota_period_ms and cpu_quota_dispersion or cpu_wakeup_ms): a period of demand D > 1 quotas stops for min(1 − cpu_quota_run_share, κ·(D − 1)) of the period, so one that asks a little more than its quota runs out late and stops briefly, and a request arriving while its node is stopped waits the rest of a stop drawn in proportion to its length (simulator.solver.quota_stop_rest). 0: every such period stops for its whole rest, 1 − cpu_quota_run_share of it. The local cluster: 2.63, fitted (least squares) with cpu_quota_dispersion (0.024) to both cpu.stat shares of each RegionServer, the periods its quota ran out in and the time it was stopped (throttled_time over the wall time, taken as the wall-clock time stopped), 40 points at 10-95 % of the saturated rate, one and four RegionServers, each at the share the simulated node asks there (docs/scale-hbase-load-report.json, docs/scale-hbase-load4-report.json, docs/scale-hbase-load-cpu-report.json): rms error 0.084 of the periods' share and 0.140 of the time stopped, against 0.202 with every stop its whole rest; one RegionServer's points alone give 5.04, four's 1.54 (docs/evaluation.md, \"The quota's stops by their length\"). Checked on the p99 there: where the quota runs out in some periods (30-50 % of the saturated rate) within -33 % to +44 %, against +48 % to +862 % with whole stops; from half that rate at one RegionServer -8 % to -11 % (before -6 % to -11 %).")
    disk_random_read_ms: float = Field(10.0, gt=0, description="One random block read (seek + rotation) on a 7200 RPM SATA disk, ms (~100 IOPS). MET §3.2 hardware (7200 RPM SATA). Rule: half a rotation at 7200 RPM is 4.2 ms (60 s / 7200 / 2), plus a seek; ~6 ms of seek is an assumption (the data spans a few GB of the disk, shorter than a full-stroke average). Cross-check: incr. measured 250 IOPS (4 ms) on a 15.5k RPM SAS disk, whose half rotation is 1.9 ms.")
    disk_seq_mb_s: float = Field(100.0, gt=0, description="Sequential disk bandwidth, MiB/s. incr.: 120 MB/s on its SAS disk; 7200 RPM SATA slightly less.")
    network_mb_s: float = Field(117.0, gt=0, description="Network link per node, MiB/s. MET §3.2: switched Gigabit Ethernet.")
    network_rtt_ms: float = Field(0.2, ge=0, description="Round trip between client and server on the LAN, ms. Gigabit LAN, assumption.")
    replication: int = Field(2, ge=1, description="HDFS replication factor. MET §3.2 and §6.4: 2.")


class CostSettings(_Frozen):
    """What one operation costs a node, by operation and profile."""

    get_cpu_ms: float = Field(0.20, gt=0, description="CPU ms of one cached get on a 64 KiB-block node. tiramola §3: 8 HBase nodes x 4 vCPU served 80 kreq/s of uniform reads at 50 % CPU -> 16 core-s / 80k = 0.2 ms. Checked: bench/calibrate_hbase.py measured 0.181 ms on HBase 2.6.4 (docs/simulator.md, Calibration).")
    rpc_cpu_ms: float = Field(0.10, gt=0, description="Part of get_cpu_ms that is the RPC itself (decode, handler, response), the same for every operation that reads. Assumption: half.")
    block_cpu_ms: float = Field(0.05, ge=0, description="CPU ms per block touched (block-cache lookup, checksum, index seek). Assumption: a quarter of a get; the rest of a get, get_cpu_ms - rpc - block, is the linear seek inside a 64 KiB block, which scales with the block size (MET §2: smaller blocks favour random reads).")
    put_cpu_ms: float = Field(0.48, gt=0, description="CPU ms of one put (update or insert). tiramola §3: uniform updates at 30 kreq/s used 45 % of 8 x 4 vCPU -> 0.48 ms. bench/calibrate_hbase.py measured 0.295 ms on HBase 2.6.4 (0.33 ms scaled by the get's ratio); kept at the published figure, see docs/simulator.md, Calibration.")
    scan_row_cpu_ms: float = Field(0.024, gt=0, description="CPU ms per row returned by a scan. Calibrated: a dedicated scan node (MET Table 1, 128 KiB blocks, 2 cores) is CPU-bound at MET §3.4's ~1,350 scans/s with YCSB's mean scan length. bench/calibrate_hbase.py measured 0.0042 ms on HBase 2.6.4: MET's HBase 0.94 scans were ~6x dearer per row, or its figure carries costs the model does not name; kept at MET's, see docs/simulator.md, Calibration.")
    record_kb: float = Field(1.0, gt=0, description="Record size, KiB. YCSB default: 10 fields x 100 bytes.")
    storage_overhead: float = Field(1.4, ge=1, description="Bytes stored per byte of record (keys, timestamps, HFile index). MET §3.1: ~5.1 M records of 1 KB occupy ~7 GB.")
    mean_scan_rows: float = Field(50.5, gt=0, description="Mean rows per scan. YCSB workload E: maxscanlength=100, uniform.")
    compaction_ratio: float = Field(3.0, gt=1, description="Store files merged per compaction round (hbase.hstore.compactionThreshold). HBase default 3.")
    max_flush_mb: float = Field(128.0, gt=0, description="Memstore flush size per region, MiB (hbase.hregion.memstore.flush.size). HBase default 128 MiB.")
    remote_read_extra_ms: float = Field(0.5, ge=0, description="Extra latency of reading a block from a remote DataNode (one more network hop and the DataNode's handler), ms. Assumption (Gigabit LAN: 0.2 ms round trip, network_rtt_ms, plus the DataNode's request handling). The disk time of that read is charged to the DataNode that holds the block, not to the serving RegionServer.")
    client_cores: int = Field(2, ge=1, description="CPU cores of one YCSB client machine. MET §3.2: every machine of the testbed is an Intel i3 (2 cores).")
    client_op_cpu_ms: float = Field(0.12, gt=0, description="Client CPU ms per operation (YCSB thread, measurement, HBase client RPC encode/decode), the same for get, put and scan. Derived with client_row_cpu_ms from MET §6.4: 22,000 ops/s is the maximum with all clients saturated on two 2-core machines, i.e. 4 core-s / 22,000 = 0.18 ms per operation over MET's mix (E's scans one sixth of the operations); the split between per-operation and per-row cost is an assumption (no published figure): two thirds per operation. Checked: bench/calibrate_hbase.py measured 0.115 ms per get on YCSB 0.17 with the project's binding.")
    client_row_cpu_ms: float = Field(0.0075, ge=0, description="Client CPU ms per row a scan returns (decoding the cells). Derived: (0.18 − client_op_cpu_ms) / (1/6 · 0.95 · mean_scan_rows), see client_op_cpu_ms.")
    rpc_floor_ms: float = Field(0.3, ge=0, description="Server-side latency of any request apart from CPU and disk queueing (handler hand-off, response write), ms. Measured: bench/calibrate_hbase.py's one-thread get on loopback took 0.607 ms, of which 0.231 ms server and 0.177 ms client CPU; the remaining ~0.2 ms is the floor (docs/simulator.md, Calibration); 0.3 kept (a LAN adds more hand-offs than loopback).")
    wal_sync_ms: float = Field(1.0, ge=0, description="Latency a put waits for the WAL append to be acknowledged by the DataNode pipeline (replication 2, hflush: two network hops and two DataNode handlers, no disk sync), ms. Assumption: the local cluster writes its WAL to a local file system without a DataNode pipeline, so bench/calibrate_hbase.py cannot measure it (docs/simulator.md, Calibration).")


class ActionSettings(_Frozen):
    """How long elasticity actions take and what they cost."""

    vm_boot_s: float = Field(300.0, ge=0, description="Seconds from launch until the VM runs. Chosen so boot + RegionServer join + the first decision window (180 s, MET §6.1) + cache warm-up is the ~10 min tiramola §3 reports for a new node to be fully operational and monitored.")
    rs_join_s: float = Field(13.0, ge=0, description="Seconds from VM running until the RegionServer is counted by the master. REAL: ~13 s.")
    terminate_s: float = Field(30.0, ge=0, description="Seconds for the cloud to terminate a VM. Assumption.")
    move_s: float = Field(1.1, ge=0, description="Seconds a region is unavailable while it moves (requests to its keys wait). Measured: bench/measure_move_hbase.py on HBase 2.6.4, two quota'd RegionServers (0.15 core), six regions of 5,000 1-KiB rows, one move at a time under gets: request to open on the target 1.02-2.09 s (median 1.08 s, 6 moves) at 300 gets/s and 1.03-2.20 s (median 1.18 s, 6 moves) at ~1,000 gets/s; the longest get of the moved rows (the client's retries included) 0.68-1.52 s. Half of the operations writes with 5 MB in each memstore: 2.02-2.31 s (median 2.10 s), longest get 0.90-1.81 s; under the compare bench's YCSB load the master timed policies' moves at a median of 1.35-2.01 s per run, longest 4.5-7.1 s (docs/simulator.md, Region moves). 1.1 s is the read-only figure (assumption: most moved regions are read-mostly).")
    restart_stop_s: float = Field(3.0, ge=0, description="Seconds for a graceful RegionServer stop. REAL: ~3 s.")
    restart_start_s: float = Field(3.0, ge=0, description="Seconds from start until a restarted RegionServer serves. REAL: ~3 s.")
    decommission_s: float = Field(3.0, ge=0, description="Seconds for a graceful stop of a decommissioned server. REAL: ~3 s.")
    failover_s: float = Field(73.0, ge=0, description="Seconds before the regions of a server that died are reopened elsewhere (ZooKeeper session timeout). REAL: ~73 s.")
    split_offline_s: float = Field(1.0, ge=0, description="Seconds a region being split is offline (requests to its keys wait): the parent closes, its memstore is flushed, the daughters open on the same server with reference files to its store files (HBase reference guide, \"RegionServer Splitting Implementation\", steps 4-9). Measured: bench/measure_split_hbase.py on HBase 2.6.4 (one RegionServer, a one-region table of 30,000 1-KiB rows): the longest get during a split (what a client waited, its retries included) was 0.51-0.99 s (median 0.63 s, 5 splits) with 5 MB in the memstore and 0.67-1.40 s (median 1.19 s, 3 splits) with 40 MB; the whole split procedure took 1.1-2.3 s. 1.0 s lies between, for a mix of read-only and written regions (assumption); on HDFS the reference files cost NameNode calls a local file system does not.")
    compaction_mb_s: float = Field(17.0, gt=0, description="Major compaction speed, MiB/s. MET §6.2: roughly 1 minute per GB.")
    compaction_cpu_ms_per_mb: float = Field(10.0, ge=0, description="CPU ms per MiB compacted. Assumption.")
    prefetch_cpu_ms_per_mb: float = Field(0.8, ge=0, description="CPU ms per MiB a RegionServer prefetches into its block cache on open (read, checksums, cache insert, the garbage it leaves). Measured: bench/measure_move_hbase.py --prefetch on HBase 2.6.4, a 0.15-core RegionServer, 27.75-MB regions from page-cached local files: median 0.79 ms per MB over 15 moves (0.54-1.2), of which 0.44 ms the prefetch threads and 0.35 ms garbage collection (docs/simulator.md, Prefetch on open on quota'd RegionServers). A disk's or DataNode's read adds its own time, not this node's CPU.")
    prefetch_disk_share: float = Field(0.5, gt=0, le=1, description="At most this share of a disk goes to a prefetch (sequential, in file order) while requests read from it too. Assumption: the disk's I/O scheduler shares it fairly between the prefetch's stream and the requests' reads.")
    sender_mb_s: float = Field(26.0, gt=0, description="Streaming rate one sender reaches, MiB/s. incr.: 210 Mbit/s with one sender at a time.")
    receiver_mb_s: float = Field(61.0, gt=0, description="Streaming rate a joining node receives from parallel senders, MiB/s. incr.: 490 Mbit/s unthrottled.")
    transfer_cpu_ms_per_mb: float = Field(30.0, ge=0, description="CPU ms per MiB streamed, at each end. Derived from incr.: 7 parallel senders at 490 Mbit/s cost the cluster ~13 % of its throughput (0.13 x 2 cores / 8.75 MB/s ~ 30 ms/MB); the receiver is CPU-bound at 61 MB/s (2 cores / 61 ~ 33 ms/MB).")
    balancer_period_s: float = Field(300.0, gt=0, description="Period of the store's own balancer when it is on (hbase.balancer.period). HBase default 5 min.")


class SimulatorSettings(_Frozen):
    """The simulated HBase-like cluster (`simulator:` section of the config)."""

    scenario: str = Field("met-elasticity.yaml", description="Scenario file: a path, or a name in configs/scenarios/.")
    data_transfer: Literal["none", "incremental", "parallel"] = Field(
        "none", description="What a move does with the region's data. none: HBase (data stays in "
        "HDFS; the new server reads remotely until a compaction restores locality). incremental: "
        "the target copies the data first, from one source at a time, and serves each region as "
        "soon as its copy arrives (incr. paper). parallel: copies to a target run together and the "
        "target serves them only when all have arrived (Cassandra bootstrap).")
    tick_s: float = Field(1.0, gt=0, description="Simulation resolution, seconds.")
    run_speed: float = Field(60.0, ge=0, description="Simulated seconds per real second when `metctl run` drives the simulated cluster (the live view stays watchable); 0 = as fast as possible. `metctl simulate` always runs as fast as possible.")
    cache_update_s: float = Field(5.0, gt=0, description="Seconds between recomputations of block-cache hit ratios (they change slowly).")
    host_metric_window_s: float = Field(15.0, gt=0, description="Host metrics are averaged over this many seconds, like gmond's cpu metrics.")
    calibration: str | None = Field(
        None, description="A calibration file of the hardware, costs and actions below (a "
        "path, relative to this config file's directory, or calibration:NAME of a shipped one): "
        "its values replace the shipped ones (configs/calibration/simulator.yaml, what null "
        "means; `make calibrate-hbase` writes one); a key written here under hardware, costs or "
        "actions wins over the file. Read when the config file is loaded.")
    hardware: HardwareSettings = HardwareSettings()
    costs: CostSettings = CostSettings()
    actions: ActionSettings = ActionSettings()
    profiles: dict[str, ProfileSettings] = Field(default_factory=_default_profiles, description="Node profiles by name; default: the shipped profiles/*.yaml (MET Table 1 and HBase defaults).")
