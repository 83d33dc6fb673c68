"""The simulated cluster: deterministic, actions take time and cost capacity, incremental
transfer serves moved partitions earlier than parallel transfer."""
from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import pytest

from simulator.cluster import SimCluster
from simulator.regions import Regions
from simulator.scenario import scenario_from_dict
from simulator.settings import HardwareSettings, SimulatorSettings


def _series(cl):
    return np.array(cl.rec_ops), np.array(cl.rec_latency_ms)


def test_same_seed_same_run(sim_cluster):
    runs = []
    for _ in range(2):
        cl = sim_cluster(initial_placement="random")
        cl.run_until(120)
        cl.move(0, 1)
        cl.run_until(240)
        runs.append((_series(cl), list(cl.region_ids), cl.reg_server.copy()))
    (a_ops, a_lat), a_ids, a_srv = runs[0]
    (b_ops, b_lat), b_ids, b_srv = runs[1]
    assert np.array_equal(a_ops, b_ops) and np.array_equal(a_lat, b_lat)
    assert a_ids == b_ids and np.array_equal(a_srv, b_srv)


def test_another_seed_places_randomly_elsewhere(sim_cluster, small_scenario):
    a = sim_cluster(small_scenario(initial_placement="random", seed=1))
    b = sim_cluster(small_scenario(initial_placement="random", seed=2))
    assert a.region_ids != b.region_ids


def test_one_hour_with_six_workloads_and_about_30_regions_runs(sim_cluster, small_scenario):
    wl = [{"name": n, "ycsb": n, "regions": 5, "records": 500_000} for n in "ABCDEF"]
    cl = sim_cluster(small_scenario(workloads=wl, duration_s=3600, initial_nodes=6))
    cl.run_until(3600)
    assert len(cl.rec_t) == 3600 and len(cl.region_ids) == 30
    assert np.all(np.isfinite(np.array(cl.rec_ops))) and np.array(cl.rec_ops).sum() > 0


def test_launch_boots_then_joins(sim_cluster):
    cl = sim_cluster()
    a = cl.settings.actions
    node = cl.launch("read", {"metctl:managed": "true", "metctl:cluster": "demo"})
    cl.run_until(a.vm_boot_s - 1)
    assert node.vm_state == "booting" and node.rs_state == "absent"
    cl.run_until(a.vm_boot_s + 1)
    assert node.vm_state == "running" and node.rs_state == "absent"
    cl.run_until(a.vm_boot_s + a.rs_join_s + 1)
    assert node.rs_state == "active"


def test_move_makes_the_region_unavailable_briefly(sim_cluster):
    cl = sim_cluster(settings=_prefetching(on=False))  # without prefetch: warming miss by miss
    cl.run_until(60)
    r = int(np.where(cl.reg_server == 0)[0][0])
    cl.move(r, 1)
    assert cl.reg_server[r] == -1 and cl.reg_assigned[r] == -1
    cl.run_until(cl.t + 1)
    assert cl.reg_server[r] == -1
    cl.run_until(cl.t + cl.settings.actions.move_s + 1)
    assert cl.reg_server[r] == 1 and cl.reg_reads[r] < 1e5  # counters restarted on the new server
    assert cl.reg_warmth[r] < 1.0  # its new server's cache is cold


def test_restart_takes_seconds_and_changes_profile(sim_cluster):
    cl = sim_cluster()
    cl.run_until(30)
    node = cl.nodes[0]
    cl.restart(node, "read")
    a = cl.settings.actions
    cl.run_until(cl.t + a.restart_stop_s + a.restart_start_s - 2)
    assert node.rs_state == "restarting" and node.profile == "default"
    cl.run_until(cl.t + 3)
    assert node.rs_state == "active" and node.profile == "read"
    assert np.all(cl.reg_server[cl.reg_assigned == 0] == 0)  # its regions came back


def test_compaction_takes_size_over_speed_and_restores_locality(sim_cluster):
    cl = sim_cluster()
    cl.run_until(10)
    r = 0
    cl.reg_locality[r] = 0.2
    cl.compact(r)
    expected = cl.reg_size[r] / cl.settings.actions.compaction_mb_s
    cl.run_until(cl.t + expected * 0.8)
    assert r in cl.compactions
    cl.run_until(cl.t + expected * 0.3 + 2)
    assert r not in cl.compactions and cl.reg_locality[r] == 1.0


def test_actions_cost_capacity(sim_cluster):
    base = sim_cluster()
    base.run_until(200)
    busy = sim_cluster()
    busy.run_until(100)
    for r in range(len(busy.region_ids)):
        busy.compact(r)
    busy.run_until(200)
    # compacting everything at once (each region takes ~5 s) takes CPU and disk: fewer
    # operations while it runs
    assert np.array(busy.rec_ops)[100:105].sum() < 0.99 * np.array(base.rec_ops)[100:105].sum()


def test_cpu_and_io_follow_the_work(sim_cluster):
    cl = sim_cluster()
    cl.run_until(60)
    before = [cl.host_metrics(n)[0] for n in cl.nodes]
    assert all(0 < c <= 1 for c in before)
    for r in np.where(cl.reg_server == 0)[0]:
        cl.move(int(r), 1)  # node 0 gives all its work to node 1
    cl.run_until(cl.t + 60)
    after = [cl.host_metrics(n) for n in cl.nodes]
    assert after[0][0] < 0.02 and after[0][1] < 0.02  # no work, no cpu, no io wait
    assert after[0][2] < before[0] or after[0][2] < 1  # memory stays a fraction
    idle = sim_cluster(workloads=[{"name": "C", "ycsb": "C", "threads": 1, "target_ops": 10}])
    idle.run_until(60)
    assert max(idle.host_metrics(n)[0] for n in idle.nodes) < 0.05


def _transfer_run(sim_cluster, mode):
    settings = SimulatorSettings(data_transfer=mode)
    cl = sim_cluster(settings=settings)
    cl.balancer_on = False  # only our moves
    new = cl.launch("default", {"metctl:managed": "true", "metctl:cluster": "demo"})
    cl.run_until(cl.settings.actions.vm_boot_s + cl.settings.actions.rs_join_s + 2)
    assert new.rs_state == "active"
    start = cl.t
    moved = [int(np.where(cl.reg_server == k)[0][0]) for k in range(3)]  # one from each source
    for r in moved:
        cl.move(r, new.index)
    first_served, all_served = None, None
    while cl.t < start + 600 and all_served is None:
        cl.run_until(cl.t + 1)
        on_new = [cl.reg_server[r] == new.index for r in moved]
        if any(on_new) and first_served is None:
            first_served = cl.t - start
        if all(on_new):
            all_served = cl.t - start
    return first_served, all_served


def test_incremental_serves_moved_partitions_earlier_parallel_finishes_sooner(sim_cluster):
    inc_first, inc_all = _transfer_run(sim_cluster, "incremental")
    par_first, par_all = _transfer_run(sim_cluster, "parallel")
    # incremental elasticity: capacity arrives step by step (the first partition is served long
    # before the last); parallel: nothing is served until every copy arrived, but the receiver's
    # link is shared by all senders, so the whole transfer ends sooner (incr. paper, Fig. 3).
    assert inc_first < inc_all
    assert par_first == par_all
    assert inc_first < par_first
    assert par_all < inc_all


@pytest.mark.parametrize("mode", ["incremental", "parallel"])
def test_transfer_loads_sender_and_receiver(sim_cluster, mode):
    cl = sim_cluster(settings=SimulatorSettings(data_transfer=mode))
    cl.run_until(20)
    r = int(np.where(cl.reg_server == 0)[0][0])
    cl.move(r, 1)
    cl.step(1.0)
    bg_cpu, bg_disk = cl._bg
    assert bg_cpu[0] > 0 and bg_cpu[1] > 0 and bg_disk[0] > 0 and bg_cpu[2] == 0


def test_scripted_launch_joins_and_the_balancer_gives_it_regions(sim_cluster, small_scenario):
    cl = sim_cluster(small_scenario(launches=[{"at_s": 10, "profile": "read"}]))
    a = cl.settings.actions
    cl.run_until(10 + a.vm_boot_s + a.rs_join_s + 30)
    new = cl.nodes[-1]
    assert len(cl.nodes) == 4 and new.rs_state == "active" and new.profile == "read"
    assert np.sum(cl.reg_server == new.index) >= 1


def test_region_counters_add_up_to_the_operations_served(sim_cluster, small_scenario):
    wl = [{"name": n, "ycsb": n, "threads": 10, "records": 100_000, "regions": 3} for n in "ABCDEF"]
    cl = sim_cluster(small_scenario(workloads=wl))
    cl.run_until(120)  # no moves: counters count from the start
    ops = np.array(cl.rec_ops).sum(axis=0)  # per workload
    # every operation is one request, except read-modify-write: a read and a write
    expected = float((ops * (1.0 + cl.p_rmw)).sum())
    counted = float(cl.reg_reads.sum() + cl.reg_writes.sum() + cl.reg_scans.sum())
    assert abs(counted - expected) <= 1e-6 * expected
    scans = float((ops * cl.p_scan).sum())
    assert abs(float(cl.reg_scans.sum()) - scans) <= 1e-6 * max(scans, 1.0)


def test_a_move_between_original_nodes_loses_locality(sim_cluster):
    cl = sim_cluster()  # 3 nodes, replication 2: the other replica is on one of the 2 others
    cl.run_until(10)
    r = int(np.where(cl.reg_server == 0)[0][0])
    cl.move(r, 1)
    cl.run_until(cl.t + cl.settings.actions.move_s + 2)
    assert cl.reg_server[r] == 1 and cl.reg_locality[r] < 0.55


def test_remote_reads_load_the_datanode_not_the_server(sim_cluster):
    def disk_after_move(locality: float):
        cl = sim_cluster(workloads=[{"name": "C", "ycsb": "C", "threads": 20, "records": 3_000_000, "regions": 3}])
        cl.run_until(10)
        r = int(np.where(cl.reg_server == 0)[0][0])
        cl.move(r, 1)
        cl.run_until(cl.t + cl.settings.actions.move_s + 2)
        cl.reg_locality[r] = locality
        cl.run_until(cl.t + 20)
        return [cl.host_metrics(n)[1] for n in cl.nodes], cl
    local, _ = disk_after_move(1.0)
    remote, cl = disk_after_move(0.0)
    # the home (node 0) now does the seeks for the moved region; the server (node 1) fewer
    assert remote[0] > local[0] and remote[1] < local[1]


def test_a_scripted_launch_leaves_the_balancer_switch_alone(sim_cluster, small_scenario):
    cl = sim_cluster(small_scenario(launches=[{"at_s": 5}]))
    cl.balancer_on = False
    cl.run_until(20)
    assert len(cl.nodes) == 4 and cl.balancer_on is False


def test_server_latency_grows_with_queueing_and_stays_under_what_clients_see(sim_cluster):
    """Each RegionServer reports the mean time a request spends in it (what HBase's /jmx
    TotalCallTime_mean measures): near the RPC floor when idle, far above it when its CPU
    queue fills, never more than the clients' own response time, None with no requests."""
    light = sim_cluster(workloads=[{"name": "C", "ycsb": "C", "threads": 1, "target_ops": 50}])
    light.run_until(60)
    floor = light.settings.costs.rpc_floor_ms
    idle = [light.server_latency_ms(n) for n in light.nodes]
    assert all(ms is not None and floor <= ms < floor + 1.0 for ms in idle), idle
    # one client machine caps a workload (simulator.costs.client_*): six of them, 100 threads each
    busy = sim_cluster(workloads=[{"name": f"C{i}", "ycsb": "C", "threads": 100, "records": 200_000,
                                   "regions": 3, "client_host": f"client-{i}"} for i in range(6)])
    busy.run_until(60)
    loaded = [busy.server_latency_ms(n) for n in busy.nodes]
    assert min(loaded) > 5 * max(idle), (loaded, idle)
    assert max(loaded) <= busy.latency_ms(), (loaded, busy.latency_ms())
    new = busy.launch("default", {"metctl:managed": "true", "metctl:cluster": "demo"})
    assert busy.server_latency_ms(new) is None  # no request has reached it


def test_a_server_whose_calls_stopped_reports_no_old_latency(sim_cluster):
    """HBase 2.6.4 empties its call-time histogram at every metrics snapshot, so a server no
    call reaches reads 0, not the latency its calls had before (stale, it kept idle nodes
    "slow" and held off scale-in for the rest of a run)."""
    cl = sim_cluster(workloads=[{"name": f"C{i}", "ycsb": "C", "threads": 100, "records": 200_000,
                                 "regions": 3, "client_host": f"client-{i}", "stop_s": 60}
                                for i in range(6)])
    cl.run_until(55)
    assert min(cl.server_latency_ms(n) for n in cl.nodes) > 5 * cl.settings.costs.rpc_floor_ms
    cl.run_until(400)
    assert [cl.server_latency_ms(n) for n in cl.nodes] == [0.0] * len(cl.nodes)


# ---------------------------------------------------------------- region splits

def _split_now(cl, r):
    """Split region r and run until it took effect; return the daughters' indices."""
    n = len(cl.region_ids)
    cl.split(r)
    cl.run_until(cl.t + math.ceil(cl.settings.actions.split_offline_s) + 1)  # opens at a step's start
    assert len(cl.region_ids) == n + 1
    return r, n


def _hot_keys(hot_data, hot_ops, m=400_000):
    """YCSB's hotspot generator's keys (fractions of the key space), sampled."""
    rng = np.random.default_rng(3)
    hot = rng.random(m) < hot_ops
    return np.where(hot, rng.random(m) * hot_data, hot_data + rng.random(m) * (1 - hot_data))


def test_a_split_gives_each_daughter_the_requests_of_its_half_of_the_keys(sim_cluster):
    # 4 regions of MET's hotspot (40 % of the keys get 50 % of the requests): region 1 is
    # [0.25, 0.5) and holds the hot range's end, so its left half is hotter
    cl = sim_cluster(workloads=[{"name": "C", "ycsb": "C", "threads": 20, "records": 200_000, "regions": 4}])
    cl.balancer_on = False
    cl.run_until(30)
    parent_share, parent_id = float(cl.reg_share[1]), cl.region_ids[1]
    left, right = _split_now(cl, 1)
    assert parent_id not in cl.region_ids and cl.split_parents[parent_id] == (cl.region_ids[left], cl.region_ids[right])
    assert (cl.reg_lo[left], cl.reg_hi[left], cl.reg_lo[right], cl.reg_hi[right]) == (0.25, 0.375, 0.375, 0.5)
    assert abs(cl.reg_share[left] + cl.reg_share[right] - parent_share) < 1e-12
    assert cl.reg_share[left] > cl.reg_share[right]
    keys = _hot_keys(0.4, 0.5)  # oracle: where YCSB's keys land
    for d in (left, right):
        observed = np.mean((keys >= cl.reg_lo[d]) & (keys < cl.reg_hi[d]))
        assert abs(cl.reg_share[d] - observed) < 0.005
    # ... and the operations counted on each daughter follow
    cl.run_until(cl.t + 30)
    reads = cl.reg_reads[[left, right]]
    assert abs(reads[0] / reads.sum() - cl.reg_share[left] / parent_share) < 1e-6


def test_splitting_the_insert_region_leaves_every_insert_on_one_daughter(sim_cluster):
    # D (MET §3.1): 95 % inserts, appended at the end of the key space, on one region
    cl = sim_cluster(workloads=[{"name": "D", "ycsb": "D", "threads": 5, "records": 100_000, "regions": 1,
                                 "target_ops": 1500}])
    cl.run_until(30)
    left, right = _split_now(cl, 0)
    assert (cl.reg_ins[left], cl.reg_ins[right]) == (0.0, 1.0)
    cl.run_until(cl.t + 30)
    assert cl.reg_writes[left] == 0 and cl.reg_writes[right] > 0
    assert cl.reg_reads[left] > 0  # the loaded keys' reads still reach the left half
    # the daughters hold half of the data each: the inserts made since the start are on the right
    assert cl.reg_size[right] > cl.reg_size[left]


def test_shares_stay_whole_per_table_through_splits(sim_cluster):
    cl = sim_cluster()
    cl.balancer_on = False
    cl.run_until(20)
    for r in (0, 2, 6, 7):
        cl.split(r)
    cl.run_until(cl.t + 60)  # offline, then the daughters' compactions end
    for r in (0, len(cl.region_ids) - 1):
        _split_now(cl, r)  # a daughter splits again once its reference files are gone
    for ci, w in enumerate(cl.workloads):
        mine = np.where(cl.reg_cls == ci)[0]
        assert abs(cl.reg_share[mine].sum() - 1.0) < 1e-9, w.name
        assert cl.reg_ins[mine].sum() == 1.0
        order = mine[np.argsort(cl.reg_lo[mine])]
        assert cl.reg_lo[order[0]] == 0 and cl.reg_hi[order[-1]] == 1
        assert np.all(cl.reg_hi[order[:-1]] == cl.reg_lo[order[1:]])  # the ranges tile the keys
    assert len(cl.region_ids) == 8 + 6 and len(set(cl.region_ids)) == 14


def test_every_per_region_array_grows_with_a_split(sim_cluster):
    """A split appends a region; an array with one entry per region kept outside
    simulator.regions.Regions (which grows all its fields) would be one short (and misindexed)
    afterwards."""
    cl = sim_cluster()  # 8 regions; 3 workloads, 3 nodes, 2 client machines: no length clash
    cl.run_until(10)
    n = len(cl.region_ids)
    assert n not in (len(cl.workloads), len(cl.nodes), len(cl.client_hosts))

    def per_region(obj):
        return {k for k, v in vars(obj).items()
                if (isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == n)
                or (isinstance(v, list) and len(v) == n and all(isinstance(x, str) for x in v))}
    assert not per_region(cl) and not per_region(cl.background), (
        "keep every per-region array in simulator.regions.Regions")
    assert per_region(cl.regions) == {f.name for f in fields(Regions)}
    _split_now(cl, 0)
    for f in fields(Regions):
        assert len(getattr(cl.regions, f.name)) == n + 1, f.name
    assert len(cl.reg_size) == len(cl.region_ids) == n + 1  # the names the adapters use


def test_a_split_takes_its_region_offline_briefly_then_compacts_its_daughters(sim_cluster):
    cl = sim_cluster()
    cl.balancer_on = False
    cl.run_until(60)
    a = cl.settings.actions
    r = int(np.where(cl.reg_server == 1)[0][0])
    size, home, loc = float(cl.reg_size[r]), int(cl.reg_home[r]), float(cl.reg_locality[r])
    cl.split(r)
    assert cl.reg_server[r] == -1 and cl.reg_assigned[r] == -1 and len(cl.region_ids) == 8
    cl.run_until(cl.t + math.ceil(a.split_offline_s) + 1)
    left, right = r, 8
    assert cl.reg_server[left] == cl.reg_server[right] == 1  # both stay on the parent's server
    assert cl.reg_home[right] == home and cl.reg_locality[right] == loc  # same files, same node
    assert cl.reg_size[left] == cl.reg_size[right] == size / 2
    assert cl.reg_refs[left] and cl.reg_refs[right]
    assert {left, right} <= set(cl.compactions) and cl.compactions[right][1] <= size / 2
    assert cl.reg_warmth[right] < 1.0  # block cache: cold, like any region that opens
    assert cl.reg_mem_hit[right] > 0.99  # page cache: still holds the parent's files
    cl.run_until(cl.t + size / 2 / a.compaction_mb_s + 2)
    assert not cl.compactions and not cl.reg_refs.any()
    assert [e.kind for e in cl.events if e.kind.startswith("split")] == ["split", "split_done"]


def test_a_split_abandoned_when_its_server_dies_reopens_the_parent_whole(sim_cluster):
    cl = sim_cluster()
    cl.balancer_on = False
    cl.run_until(10)
    r = int(np.where(cl.reg_server == 0)[0][0])
    pid = cl.region_ids[r]
    cl.split(r)
    cl.terminate(cl.nodes[0])
    cl.run_until(cl.t + cl.settings.actions.failover_s + 2)
    assert cl.region_ids[r] == pid and len(cl.region_ids) == 8 and cl.reg_server[r] in (1, 2)
    assert "split_abandoned" in [e.kind for e in cl.events]


def test_a_daughter_moved_before_its_compaction_is_compacted_where_it_opens(sim_cluster):
    cl = sim_cluster()
    cl.balancer_on = False
    cl.run_until(10)
    r = int(np.where(cl.reg_server == 0)[0][0])
    left, right = _split_now(cl, r)
    cl.move(right, 2)
    cl.run_until(cl.t + math.ceil(cl.settings.actions.move_s) + 1)
    assert cl.reg_server[right] == 2 and cl.reg_refs[right] and cl.compactions[right][0] == 2
    cl.run_until(cl.t + 60)
    assert not cl.reg_refs.any() and cl.reg_locality[right] == 1.0 and cl.reg_home[right] == 2


def _prefetching(settings: SimulatorSettings | None = None, on: bool = True) -> SimulatorSettings:
    """Settings whose every profile prefetches on open (hbase.rs.prefetchblocksonopen; the
    shipped profiles do), or none does (`on` false: HBase's own default)."""
    s = settings or SimulatorSettings()
    profiles = {k: p.model_copy(update={"prefetch_on_open": on}) for k, p in s.profiles.items()}
    return s.model_copy(update={"profiles": profiles})


def _moved_region(cl) -> int:
    cl.run_until(60)
    r = int(np.where(cl.reg_server == 0)[0][0])
    cl.move(r, 1)
    cl.run_until(cl.t + cl.settings.actions.move_s + 2)
    assert cl.reg_server[r] == 1
    return r


def test_prefetch_on_open_warms_a_moved_region_in_seconds(sim_cluster, small_scenario):
    # regions of ~900 MiB, so that reading one takes several seconds
    workloads = small_scenario().workloads
    big = small_scenario(workloads=[{"name": w.name, "ycsb": w.ycsb, "threads": w.threads,
                                     "records": 2_000_000, "regions": w.regions,
                                     "client_host": w.client_host} for w in workloads])
    cold = sim_cluster(big, settings=_prefetching(on=False))
    r = _moved_region(cold)
    cl = sim_cluster(big, settings=_prefetching())
    assert _moved_region(cl) == r
    a, h = cl.settings.actions, cl.settings.hardware
    # the files are read at most at the prefetch's share of each disk that holds them
    assert 0.0 < cl.reg_prefetched[r] < 0.5 and cl.background.prefetches
    assert 0.1 < cl.background.load[1][1] <= a.prefetch_disk_share + 1e-9  # the target's disk
    reading_s = cl.reg_size[r] / (a.prefetch_disk_share * h.disk_seq_mb_s)
    for c in (cold, cl):
        c.run_until(c.t + reading_s + c.settings.cache_update_s + 1)
    assert cl.reg_prefetched[r] == 1.0 and not cl.background.prefetches
    assert cl.reg_warmth[r] > 0.99 and cl.reg_mem_hit[r] > cold.reg_mem_hit[r] + 0.05
    assert cold.reg_warmth[r] < 0.9  # without: warming miss by miss
    assert cold.reg_prefetched[r] == 0.0


def test_a_prefetch_larger_than_the_cache_share_pushes_other_regions_out(sim_cluster):
    # A heap of 300 MiB leaves a block cache of ~120 MiB: the node's data does not fit.
    small = SimulatorSettings().model_copy(update={"hardware": SimulatorSettings().hardware.model_copy(
        update={"heap_mb": 300.0})})
    plain = sim_cluster(settings=_prefetching(small, on=False))
    cl = sim_cluster(settings=_prefetching(small))
    r = _moved_region(plain)
    assert _moved_region(cl) == r
    for c in (plain, cl):
        c.run_until(c.t + 1)  # the ~90 MiB were read in the step it opened
    others = np.where((cl.reg_server == 1) & (np.arange(len(cl.region_ids)) != r))[0]
    assert others.size
    # what the prefetch read is cached for now, beyond the region's steady share, so the
    # node's other regions hit less than they would have
    assert cl.reg_prefetched[r] == 1.0 and cl.reg_warmth[r] > plain.reg_warmth[r] + 0.5
    assert np.all(cl.reg_warmth[others] <= plain.reg_warmth[others] + 1e-9)
    assert np.any(cl.reg_warmth[others] < plain.reg_warmth[others] - 0.1)
    # until the surplus is unread for the node's characteristic time (seconds, in so small a cache)
    cl.run_until(cl.t + 2 * cl.settings.cache_update_s)
    assert np.all(cl.reg_warmth[others] > 0.99)


def _saturated_reads(nodes: int, settings: SimulatorSettings) -> float:
    """Operations/s a static cluster serves to eight clients that never wait (CPU-bound reads)."""
    sc = scenario_from_dict({"name": "shared", "duration_s": 60, "seed": 2, "initial_nodes": nodes,
                             "initial_placement": "balanced",
                             "workloads": [{"name": f"reads{i}", "ycsb": "C", "records": 100_000, "regions": 12,
                                            "threads": 60, "hot_data_fraction": 1.0, "hot_ops_fraction": 1.0,
                                            "client_host": f"client-{i}"} for i in range(8)]}, "<s>")
    cl = SimCluster(sc, settings)
    cl.run_until(60)
    rec = cl.recording()
    return float(rec.ops[30:].sum() / (len(rec.t[30:]) * rec.tick_s))


def test_servers_sharing_one_machine_each_serve_less_the_more_of_them_serve():
    shared = SimulatorSettings(hardware=HardwareSettings(shared_machine_cost_growth=0.38))
    # one server alone on the machine: nothing to share
    assert _saturated_reads(1, shared) == pytest.approx(_saturated_reads(1, SimulatorSettings()), rel=1e-9)
    # four: each request costs 1 + 0.38 ln 4 = 1.53 times the CPU, so four serve 2.6x one, not 4x
    alone, beside = _saturated_reads(4, SimulatorSettings()), _saturated_reads(4, shared)
    assert alone / beside == pytest.approx(1 + 0.38 * math.log(4), rel=0.02)


def _one_node_reads(threads: int, settings: SimulatorSettings) -> tuple[float, float]:
    """Mean and p99 (ms) of YCSB C's reads from `threads` clients at one node, once settled."""
    sc = scenario_from_dict({"name": "quota", "duration_s": 60, "seed": 2, "initial_nodes": 1,
                             "workloads": [{"name": "reads", "ycsb": "C", "records": 50_000, "regions": 4,
                                            "threads": threads, "hot_data_fraction": 1.0,
                                            "hot_ops_fraction": 1.0}]}, "<s>")
    cl = SimCluster(sc, settings)
    cl.run_until(60)
    rec = cl.recording()
    return float(rec.latency_wl_ms[30:, 0].mean()), float(np.nanmedian(rec.p99_wl_ms[30:, 0]))


def test_a_node_under_a_cpu_quota_keeps_its_mean_and_waits_whole_periods_in_its_tail():
    """A saturated node under a control-group quota (100-ms period, running 15 % of it) stops
    when its quota is spent, and the requests it holds wait for the next period: its p99 is
    about one stop (85 ms) where the same node without a quota says a fraction of it. Its
    throughput and mean latency are the same. Lightly loaded it rarely stops."""
    plain = SimulatorSettings()
    quota = SimulatorSettings(hardware=HardwareSettings(cpu_quota_period_ms=100.0, cpu_quota_run_share=0.15))
    mean_plain, p99_plain = _one_node_reads(200, plain)
    mean_quota, p99_quota = _one_node_reads(200, quota)
    assert mean_quota == pytest.approx(mean_plain, rel=1e-9)
    assert p99_plain < 85.0 < p99_quota
    _, p99_light = _one_node_reads(1, quota)
    assert p99_light < 85.0


# the local cluster's quota'd RegionServer as bench/calibrate_hbase.py writes it: one core at the
# 0.15-core slice's capacity (costs over the quota), its 100-ms period, wake-ups and dispersion
LOCAL_QUOTA = HardwareSettings(cores=1, cpu_quota_period_ms=100.0, cpu_quota_run_share=0.15,
                               cpu_wakeup_ms=round(0.773 / 0.15, 4), cpu_wakeup_window_ms=5.6,
                               cpu_quota_dispersion=0.026)


def _one_node_at(target: float, hardware: HardwareSettings) -> tuple[float, float]:
    """Ops/s and p99 (ms) of YCSB A at one node of quota'd costs, 20 clients held to `target`."""
    from simulator.settings import CostSettings

    costs = CostSettings(get_cpu_ms=0.92, rpc_cpu_ms=0.46, block_cpu_ms=0.23, put_cpu_ms=1.35)
    sc = scenario_from_dict({"name": "quota", "duration_s": 60, "seed": 2, "initial_nodes": 1,
                             "workloads": [{"name": "a", "ycsb": "A", "records": 20_000, "regions": 4,
                                            "threads": 20, "target_ops": target, "hot_data_fraction": 1.0,
                                            "hot_ops_fraction": 1.0}]}, "<s>")
    cl = SimCluster(sc, SimulatorSettings(hardware=hardware, costs=costs))
    cl.run_until(60)
    rec = cl.recording()
    return float(rec.ops[30:, 0].sum() / 30), float(np.nanmedian(rec.p99_wl_ms[30:, 0]))


def test_a_quota_d_node_stops_from_half_its_rate_and_its_p99_is_then_a_stop():
    """A quota'd node whose CPU at light load follows the local cluster's wake-ups spends its
    whole quota long before it serves all it can: at 50-70 % of its saturated rate its p99 is
    one stop's order (tens of ms, as the real RegionServer's 45-97 ms,
    docs/scale-hbase-load-report.json); at 10 % it rarely stops and its p99 is a few ms. The
    same node without the wake-ups and dispersion only stops near saturation."""
    saturated, _ = _one_node_at(10_000.0, LOCAL_QUOTA)
    old = LOCAL_QUOTA.model_copy(update={"cpu_wakeup_ms": 0.0, "cpu_quota_dispersion": 0.0})
    for share in (0.5, 0.7):
        ops, p99 = _one_node_at(share * saturated, LOCAL_QUOTA)
        assert ops == pytest.approx(share * saturated, rel=0.02)
        assert 40.0 < p99 < 100.0, share
        assert _one_node_at(share * saturated, old)[1] < 10.0
    ops, p99 = _one_node_at(0.1 * saturated, LOCAL_QUOTA)
    assert p99 < 10.0


def test_wake_ups_and_dispersion_leave_a_node_without_a_quota_as_it_was():
    """The new terms live in the quota's model only: with no period (a node is a machine) a
    node given them runs bit for bit as one without."""
    plain = HardwareSettings(cores=1)
    given = plain.model_copy(update={"cpu_wakeup_ms": 5.15, "cpu_wakeup_window_ms": 5.6, "cpu_quota_dispersion": 0.026})
    assert _one_node_at(600.0, plain) == _one_node_at(600.0, given)
