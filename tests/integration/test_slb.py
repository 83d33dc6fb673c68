"""bench/slb.py with HBase 2.6's real StochasticLoadBalancer (hbase-server jar, py4j JVM) on a
small Zipf snapshot: what SLB plans is applied region by region and every region ends up on
exactly one live server, moves counted the same way for SLB and metctl; stock SLB declines an
even cluster. (The checks that need no JVM are tests/bench/test_slb.py.)"""
from __future__ import annotations

from collections import Counter

import pytest

from bench.slb import StochasticBalancer, apply_slb, placement_of, run_slb, zipf_snapshot

pytestmark = pytest.mark.integration

# SLB's search is bounded by time (30 s by default); 5 s is plenty for 200 regions and keeps
# the test short. Everything else is HBase's stock configuration.
SHORT_SEARCH = {"hbase.master.balancer.stochastic.maxRunningTime": "5000"}


@pytest.fixture(scope="module")
def slb():
    with StochasticBalancer(settings=SHORT_SEARCH) as balancer:
        yield balancer


def counts(placement: dict[str, str], nodes: list[str]) -> list[int]:
    c = Counter(placement.values())
    return [c[n] for n in nodes]


def test_slb_plan_places_every_region_exactly_once(slb):
    snap = zipf_snapshot(10, 200, seed=3, placement="random")
    nodes = [n.id for n in snap.nodes]
    before = placement_of(snap)
    run = slb.balance(snap)
    assert run.plans, f"SLB planned nothing on a count-skewed cluster: {run.log}"
    after, moves = apply_slb(snap, run)  # refuses a plan from the wrong server or a region twice
    assert sorted(after) == sorted(before)
    assert set(after.values()) <= set(nodes)
    assert sum(counts(after, nodes)) == 200
    changed = {pid for pid in before if after[pid] != before[pid]}
    assert moves == len(changed) == sum(src != dst for _, src, dst in run.plans)
    # SLB's heaviest cost (region count skew, multiplier 500) evens out the regions per server
    assert max(counts(after, nodes)) - min(counts(after, nodes)) < \
        max(counts(before, nodes)) - min(counts(before, nodes))
    figures = run_slb(snap, slb)  # a second, independent run through the figures path
    assert figures.moves == figures.extra["plans"] > 0
    assert figures.floor <= figures.max_mean


def test_stock_slb_declines_when_region_counts_are_even(slb):
    snap = zipf_snapshot(10, 200, seed=3, placement="round-robin")
    figures = run_slb(snap, slb)
    assert figures.moves == 0
    assert figures.extra["declined_imbalance"] < 0.025  # SLB's minCostNeedBalance
