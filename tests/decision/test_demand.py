"""Demand per node: CPU while it keeps up; CPU scaled by asked / served (Little's law on its
call queue) when requests wait for it; each partition's share."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decision.arrays import SnapshotArrays
from decision.demand import QUEUE_FLOOR, asked_rate, demands
from decision.model import Node, NodeMetrics
from tests.fixtures.snapshots import make_snapshot, partition


def server(id, cpu, latency=None, queue=None, dropped=None):
    return Node(id, metrics=NodeMetrics(cpu, 0.01, 0.5, rpc_latency_ms=latency,
                                        rpc_queue_length=queue, rpc_dropped_per_s=dropped))


def test_a_node_that_keeps_up_is_asked_what_it_serves():
    snap = make_snapshot([server("a", 0.4, latency=2.0, queue=0.0)],
                         [partition("p1", "a", reads=3000), partition("p2", "a", reads=1000)])
    d = demands(SnapshotArrays(snap))
    assert d.total == pytest.approx(0.4) and d.asked == d.served == 4000
    assert d.partition.tolist() == pytest.approx([0.3, 0.1])
    assert not d.nodes[0].queued


def test_a_saturated_node_is_asked_what_queues_by_littles_law():
    # 10 k requests/s served at full CPU; 20 k calls wait and each spends 0.5 s: 40 k asked
    snap = make_snapshot([server("hot", 1.0, latency=500.0, queue=20_000.0),
                          server("cool", 0.3, latency=2.0, queue=0.0)],
                         [partition("p1", "hot", reads=8000), partition("p2", "hot", reads=2000),
                          partition("p3", "cool", reads=3000)])
    d = demands(SnapshotArrays(snap))
    hot = d.nodes[0]
    assert hot.queued and hot.asked == pytest.approx(40_000)
    assert hot.demand == pytest.approx(4.0)  # four nodes' CPU
    assert d.total == pytest.approx(4.3)
    assert d.partition.tolist() == pytest.approx([3.2, 0.8, 0.3])


def test_calls_dropped_unanswered_are_asked_too():
    # the queue holds what is served within the timeout (Little's law reads the served rate);
    # the excess is refused or times out: 30 k calls/s on top of 10 k served
    snap = make_snapshot([server("hot", 1.0, latency=1000.0, queue=10_000.0, dropped=30_000.0)],
                         [partition("p1", "hot", reads=10_000)])
    d = demands(SnapshotArrays(snap))
    assert d.nodes[0].queued and d.nodes[0].asked == pytest.approx(40_000)
    assert d.total == pytest.approx(4.0)


def test_calls_that_will_time_out_are_not_counted_twice():
    # 10 k calls/s answered after 0.5 s in the queue, 30 k/s dropped after waiting the whole
    # 1-s timeout: the queue holds 5 k + 30 k calls. Little's law over the answered calls' 0.5 s
    # reads 70 k/s; with the drops added, 100 k: asked is what was served plus what was dropped
    snap = make_snapshot([server("hot", 1.0, latency=500.0, queue=35_000.0, dropped=30_000.0)],
                         [partition("p1", "hot", reads=10_000)])
    d = demands(SnapshotArrays(snap))
    assert d.nodes[0].queued and d.nodes[0].asked == pytest.approx(40_000)


def test_without_a_queue_figure_cpu_is_all_there_is():
    snap = make_snapshot([server("a", 1.0, latency=400.0)], [partition("p1", "a", reads=5000)])
    assert demands(SnapshotArrays(snap)).total == pytest.approx(1.0)


def test_a_node_without_metrics_counts_no_demand():
    snap = make_snapshot([Node("a"), server("b", 0.5)],
                         [partition("p1", "a", reads=10), partition("p2", "b", reads=10)])
    d = demands(SnapshotArrays(snap))
    assert [n.demand for n in d.nodes] == [0.0, 0.5]


@pytest.mark.parametrize("queue, latency", [(QUEUE_FLOOR, 100.0), (1e4, 0.0), (1e4, None),
                                            (None, 100.0), (float("inf"), 5.0)])
def test_a_handful_of_calls_or_no_figures_ask_nothing_more(queue, latency):
    assert asked_rate(1000.0, queue, latency) == 1000.0


@given(st.floats(0, 1e6), st.floats(0, 1e7), st.floats(0.01, 1e4),
       st.one_of(st.none(), st.floats(allow_nan=True)))
def test_asked_is_never_less_than_served(served, queue, latency, dropped):
    assert asked_rate(served, queue, latency, dropped) >= served
