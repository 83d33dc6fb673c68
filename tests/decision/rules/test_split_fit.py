"""Split to fit (decision/rules/split_fit.py): a node over its capacity because of one partition
gets a split, not a node; a node with many busy partitions gets nodes (size to demand)."""
from __future__ import annotations

from decision import decide
from decision.model import Node, NodeMetrics, Plan
from decision.rules.split_fit import SplitToFit
from tests.fixtures.rules import DONE, SIZED, queues_grew, sized
from tests.fixtures.snapshots import make_snapshot, partition, queued_snapshot


def one_hot_partition():
    nodes = [Node("rs1", "default", "active", NodeMetrics(1.0, 0.01, 0.5, rpc_latency_ms=1000.0,
                                                           rpc_queue_length=6000.0)),
             Node("rs2", "default", "active", NodeMetrics(0.2, 0.01, 0.5, rpc_latency_ms=5.0)),
             Node("rs3", "default", "active", NodeMetrics(0.2, 0.01, 0.5, rpc_latency_ms=5.0))]
    parts = [partition("hot", "rs1", reads=4000, size_mb=10)] + \
        [partition(f"c{k}", f"rs{1 + k % 3}", reads=100, size_mb=10) for k in range(6)]
    return make_snapshot(nodes, parts)


def test_alone_it_splits_the_partition_that_makes_the_overload():
    plan = sized(SplitToFit(), one_hot_partition())
    assert isinstance(plan, Plan) and plan.sizing.delta == 0
    assert [a.partition for a in plan.actions if a.op == "split"] == ["hot"]
    assert "over capacity by one hot partition (rs1" in plan.reason
    # the default policy splits before it adds a node for it
    assert decide(one_hot_partition(), SIZED, DONE).summary.splits == 1


def test_many_busy_partitions_on_a_short_node_are_no_case_for_a_split():
    # every partition of these short nodes carries a third of a node: more nodes help
    short = queued_snapshot([0.9] * 4, [1200.0] * 4, latency_ms=1000.0)
    assert sized(SplitToFit(), short, memory=queues_grew(short)) is None
    assert decide(short, SIZED, queues_grew(short)).sizing.delta > 0


def test_switched_off_it_is_silent():
    off = SIZED.model_copy(update={"split_hot_partitions": False})
    assert sized(SplitToFit(), one_hot_partition(), off) is None
    assert not decide(one_hot_partition(), off, DONE).summary.splits
