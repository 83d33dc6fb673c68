"""Demand per node: CPU while it keeps up; CPU scaled by asked / served when its call queue
grows or calls are dropped; each partition's share."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decision.arrays import SnapshotArrays
from decision.demand import QUEUE_FLOOR, QueueSeen, asked_rate, demands, queues_seen
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


def test_a_saturated_node_is_asked_what_it_serves_plus_what_its_queue_grew_by():
    # 10 k requests/s served at full CPU; the queue grew from 2 k to 302 k calls in 10 s:
    # 30 k/s more arrived than left, 40 k asked
    snap = make_snapshot([server("hot", 1.0, latency=500.0, queue=302_000.0),
                          server("cool", 0.3, latency=2.0, queue=0.0)],
                         [partition("p1", "hot", reads=8000), partition("p2", "hot", reads=2000),
                          partition("p3", "cool", reads=3000)])
    now = snap.taken_at.timestamp()
    d = demands(SnapshotArrays(snap), {"hot": QueueSeen(now - 10, 2000.0),
                                       "cool": QueueSeen(now - 10, 0.0)}, now)
    hot = d.nodes[0]
    assert hot.queued and hot.asked == pytest.approx(40_000)
    assert hot.demand == pytest.approx(4.0)  # four nodes' CPU
    assert d.total == pytest.approx(4.3)
    assert d.partition.tolist() == pytest.approx([3.2, 0.8, 0.3])


def test_a_queue_that_has_just_formed_is_not_read_as_more_than_arrived():
    # Little's law (queue / latency of the answered calls) read this node as asked 100 k/s:
    # the queue grew by 5 k calls over the last 10 s, 500 calls/s on top of 10 k served
    snap = make_snapshot([server("hot", 1.0, latency=50.0, queue=5_000.0)],
                         [partition("p1", "hot", reads=10_000)])
    now = snap.taken_at.timestamp()
    d = demands(SnapshotArrays(snap), {"hot": QueueSeen(now - 10, 0.0)}, now)
    assert d.nodes[0].queued and d.nodes[0].asked == pytest.approx(10_500)


def test_a_long_queue_that_does_not_grow_asks_what_is_served_and_is_still_short():
    snap = make_snapshot([server("hot", 1.0, latency=500.0, queue=5_000.0)],
                         [partition("p1", "hot", reads=10_000)])
    now = snap.taken_at.timestamp()
    for before in ({"hot": QueueSeen(now - 10, 5_000.0)}, {"hot": QueueSeen(now - 10, 9_000.0)},
                   {}, None):
        d = demands(SnapshotArrays(snap), before, now)
        assert d.nodes[0].asked == 10_000 and d.nodes[0].queued
    assert queues_seen(d, now) == {"hot": QueueSeen(now, 5_000.0)}


@pytest.mark.parametrize("queue", [10_000.0, 35_000.0])
def test_calls_dropped_unanswered_are_asked_too_and_not_counted_twice(queue):
    # 10 k calls/s answered, 30 k/s refused or dropped after waiting the whole timeout; the
    # queue, which also holds those, grew by 1 k or 3.5 k calls/s: asked is served plus
    # dropped, 40 k either way
    snap = make_snapshot([server("hot", 1.0, latency=500.0, queue=queue, dropped=30_000.0)],
                         [partition("p1", "hot", reads=10_000)])
    now = snap.taken_at.timestamp()
    d = demands(SnapshotArrays(snap), {"hot": QueueSeen(now - 10, 0.0)}, now)
    assert d.nodes[0].queued and d.nodes[0].asked == pytest.approx(40_000)
    assert d.total == pytest.approx(4.0)


def test_without_a_queue_figure_cpu_is_all_there_is():
    snap = make_snapshot([server("a", 1.0, latency=400.0)], [partition("p1", "a", reads=5000)])
    assert demands(SnapshotArrays(snap)).total == pytest.approx(1.0)


def test_a_node_without_metrics_counts_no_demand():
    snap = make_snapshot([Node("a"), server("b", 0.5)],
                         [partition("p1", "a", reads=10), partition("p2", "b", reads=10)])
    d = demands(SnapshotArrays(snap))
    assert [n.demand for n in d.nodes] == [0.0, 0.5]


@pytest.mark.parametrize("queue, before, elapsed", [
    (QUEUE_FLOOR, 0.0, 10.0),        # a handful of calls
    (1e4, 0.0, 0.0), (1e4, 0.0, -5.0),  # no time between the two readings, or a clock stepped back
    (None, 0.0, 10.0), (float("inf"), 0.0, 10.0), (1e4, float("nan"), 10.0),
    (1e4, None, 10.0)])               # the first reading of this node
def test_a_handful_of_calls_or_no_figures_ask_nothing_more(queue, before, elapsed):
    seen = QueueSeen(100.0, before) if before is not None else None
    assert asked_rate(1000.0, queue, None, seen, 100.0 + elapsed) == 1000.0


@given(st.floats(0, 1e6), st.one_of(st.none(), st.floats(allow_nan=True)),
       st.one_of(st.none(), st.floats(allow_nan=True)), st.floats(allow_nan=True),
       st.floats(-1e4, 1e4))
def test_asked_is_never_less_than_served(served, queue, dropped, before, elapsed):
    asked = asked_rate(served, queue, dropped, QueueSeen(0.0, before), elapsed)
    assert asked >= served
