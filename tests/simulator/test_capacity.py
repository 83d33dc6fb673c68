"""The capacity model: YCSB hotspot shares, Che's LRU approximation, and costs by profile."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from simulator import capacity
from simulator.cluster import SimCluster
from simulator.scenario import scenario_from_dict
from simulator.settings import CostSettings, HardwareSettings, SimulatorSettings
from tests.fixtures.simcluster import small_scenario_dict


@given(n=st.integers(1, 12), hot_data=st.floats(0.05, 0.95), hot_ops=st.floats(0.05, 0.95))
def test_hotspot_shares_match_sampled_keys(n, hot_data, hot_ops):
    share, hot_req, hot_size = capacity.hotspot_shares(n, hot_data, hot_ops)
    # Oracle: draw keys the way YCSB's hotspot generator does and count them per region.
    rng = np.random.default_rng(0)
    m = 200_000
    hot = rng.random(m) < hot_ops
    keys = np.where(hot, rng.random(m) * hot_data, hot_data + rng.random(m) * (1 - hot_data))
    counts = np.bincount(np.minimum((keys * n).astype(int), n - 1), minlength=n) / m
    assert np.allclose(share, counts, atol=0.01)
    assert abs(share.sum() - 1) < 1e-9
    assert np.all((hot_req >= 0) & (hot_req <= 1)) and np.all((hot_size >= 0) & (hot_size <= 1 + 1e-9))


def test_met_four_region_shares_are_near_the_papers():
    share, _, _ = capacity.hotspot_shares(4, 0.4, 0.5)
    # MET §3.1 measured 34/26/20/20 %; the generator gives the same order and spread.
    assert share[0] > share[1] > share[2] and abs(share[2] - share[3]) < 1e-12
    assert np.allclose(share, [0.34, 0.26, 0.20, 0.20], atol=0.035)


@settings(max_examples=60)
@given(sizes=st.lists(st.floats(1, 1e4), min_size=1, max_size=8),
       rates=st.lists(st.floats(0.01, 1e4), min_size=8, max_size=8), cap_frac=st.floats(0.01, 0.99))
def test_che_fills_the_cache_exactly_and_is_monotone(sizes, rates, cap_frac):
    blocks = np.array(sizes)
    rate = np.array(rates[: len(sizes)])
    node = np.zeros(len(sizes), dtype=int)
    cap = np.array([blocks.sum() * cap_frac])
    hit = capacity.che_hit_ratios(node, blocks, rate, cap)
    assert np.all((hit >= 0) & (hit <= 1))
    assert abs((blocks * hit).sum() - cap[0]) <= 1e-3 * cap[0] + 1e-6  # occupancy = capacity
    more = capacity.che_hit_ratios(node, blocks, rate, cap * 1.2 if cap_frac < 0.8 else cap)
    assert np.all(more >= hit - 1e-9)
    lam = rate / blocks  # hotter blocks are more likely cached
    order = np.argsort(lam)
    assert np.all(np.diff(hit[order]) >= -1e-9)


def test_everything_cached_when_it_fits():
    hit = capacity.che_hit_ratios(np.array([0, 0, 1]), np.array([10.0, 5.0, 3.0]),
                                  np.array([1.0, 2.0, 0.5]), np.array([100.0, 2.0]))
    assert np.allclose(hit[:2], 1.0) and hit[2] < 1.0


def test_small_blocks_favour_gets_big_blocks_favour_scans():
    c, h = CostSettings(), HardwareSettings()
    b = np.array([32.0, 64.0, 128.0])
    get = capacity.get_cpu_ms(b, c)
    assert get[0] < get[1] < get[2]
    # a missed scan needs fewer block reads with bigger blocks (each block read is a seek)
    miss = capacity.scan_blocks(b, c) * capacity.miss_disk_ms(b, h)
    assert miss[2] < miss[1] < miss[0]


def test_small_memstore_amplifies_writes():
    c, h = CostSettings(), HardwareSettings()
    size = np.array([2000.0, 2000.0])
    d = capacity.put_disk_ms(size, np.array([16.0, 128.0]), c, h)
    assert d[0] > d[1]


def _one_node(workload: dict, profile: str, **scenario) -> float:
    data = small_scenario_dict(initial_nodes=1, workloads=[workload], initial_profile=profile,
                               duration_s=300, **scenario)
    cl = SimCluster(scenario_from_dict(data, "<t>"), SimulatorSettings())
    cl.run_until(300)
    return float(np.array(cl.rec_ops)[120:].sum(axis=1).mean())


def test_a_matching_profile_serves_more():
    # a read-only table that does not fit the default profile's block cache (40 % of the heap)
    # but fits the read profile's (55 %): the read node serves more gets
    reads = {"name": "C", "ycsb": "C", "threads": 50, "records": 1_900_000, "regions": 4}
    assert _one_node(reads, "read") > 1.2 * _one_node(reads, "default")
    # and a write profile (10 % cache) serves fewer reads than the default
    assert _one_node(reads, "write") < _one_node(reads, "default")


def test_scan_node_serves_more_scans_than_default():
    scans = {"name": "E", "ycsb": "E", "threads": 50, "records": 1_900_000, "regions": 4}
    assert _one_node(scans, "scan") > _one_node(scans, "default")


@given(hot_data=st.floats(0.05, 0.95), hot_ops=st.floats(0.05, 0.95),
       cuts=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_key_ranges_split_the_load_of_their_parent(hot_data, hot_ops, cuts):
    """Any tiling of the key space gets all the requests, and a range cut anywhere gives its
    two halves exactly its own requests (what a region split relies on)."""
    edges = np.unique(np.concatenate([[0.0, 1.0], cuts]))
    share, hot_req, hot_size = capacity.key_range_shares(edges[:-1], edges[1:], hot_data, hot_ops)
    assert abs(share.sum() - 1.0) < 1e-9
    whole, _, _ = capacity.key_range_shares(np.array([edges[0]]), np.array([edges[-1]]), hot_data, hot_ops)
    assert abs(whole[0] - 1.0) < 1e-9
    # hot requests of each range = its hot keys times the hot density
    hot_keys = hot_size * (edges[1:] - edges[:-1])
    assert np.allclose(share * hot_req, hot_keys * hot_ops / hot_data, atol=1e-12)


def test_key_ranges_of_equal_regions_are_the_hotspot_shares():
    for n in (1, 3, 4, 7):
        i = np.arange(n)
        a = capacity.hotspot_shares(n, 0.4, 0.5)
        b = capacity.key_range_shares(i / n, (i + 1) / n, 0.4, 0.5)
        assert all(np.allclose(x, y) for x, y in zip(a, b))


def test_a_range_straddling_the_hot_boundary_gives_more_to_its_hot_half():
    # MET §3.1's hotspot (40 % of the keys get 50 % of the requests); [0.25, 0.5) holds the
    # boundary at 0.4: its left half is all hot, its right half 20 % hot
    share, hot_req, hot_size = capacity.key_range_shares(np.array([0.25, 0.375]), np.array([0.375, 0.5]), 0.4, 0.5)
    assert share[0] > share[1]
    assert np.allclose(share, [0.125 * 1.25, 0.025 * 1.25 + 0.1 * 0.5 / 0.6])
    assert np.allclose(hot_size, [1.0, 0.2]) and hot_req[0] == 1.0 and 0 < hot_req[1] < 1
