"""Which partitions move where, and whether a move pays (decision/rules/moves.py)."""
from __future__ import annotations

import pytest

from decision import decide
from decision.arrays import SnapshotArrays
from decision.rules.moves import costs, greedy_moves, move_pays
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import DONE, marks
from tests.fixtures.snapshots import make_snapshot, partition

G = marks()


def _one_hot(size_mb, cpus=(0.9, 0.2, 0.2, 0.2)):
    parts = [partition(f"h{k}", "rs1", reads=100, size_mb=size_mb) for k in range(8)] + \
        [partition(f"c{k}", f"rs{2 + k % 3}", reads=20) for k in range(6)]
    return make_snapshot(list(cpus), parts)


def test_a_move_pays_when_its_relief_over_the_payback_window_beats_its_warm_up():
    # 0.2 of a node off a node at 1.2 onto one at 0.2, for 600 s: 120 node-s of relief; a
    # 100 MiB partition costs 0.2 x (100 / 26 + 1.1) ~ 1 node-s, a 200 GiB one ~ 1,575.
    pays, relief, cost = move_pays(G, 0.2, 100.0, 1.2, 0.2)
    assert pays and relief == pytest.approx(120.0) and cost == pytest.approx(0.2 * (100 / 26 + 1.1))
    assert not move_pays(G, 0.2, 200 * 1024.0, 1.2, 0.2)[0]
    # a move that does not lower the hotter node relieves nothing
    assert not move_pays(G, 0.2, 1.0, 0.5, 0.5)[0]
    # its data arriving after the payback window: nothing left to relieve
    assert not move_pays(G, 0.2, 100.0, 1.2, 0.2, wait_s=G.move_payback_s)[0]


def test_with_nowhere_to_go_nothing_moves_and_the_hot_node_keeps_its_load():
    # A caller that filters destinations (none short, none draining) can be left with none:
    # the decision must still be made, with no move, not stop on an empty choice.
    arrays = SnapshotArrays(_one_hot(100.0))
    util, cost = costs(arrays, G)
    moves, after = greedy_moves(arrays, util, [0], [], 0.6, 0.8, G, cost)
    assert moves == [] and after.tolist() == util.tolist()
    # the same call with somewhere to go moves load off rs1
    moves, after = greedy_moves(arrays, util, [0], [1, 2, 3], 0.6, 0.8, G, cost)
    assert moves and after[0] < util[0]


def test_a_move_that_cannot_pay_for_its_warm_up_is_not_made():
    # rs1 overloaded; its partitions are 200 GiB each: read back at move_mb_s 26 MiB/s that is
    # over two hours of a cold partition, against move_payback_s 600 s of relief.
    small = decide(_one_hot(100.0), G, DONE)
    assert small.summary.moves and "node-s off the hot node" in small.actions[0].reason
    huge = decide(_one_hot(200 * 1024.0), G, DONE)
    assert huge.summary.moves == 0 and huge.summary.launches == 0
    weighed_off = decide(_one_hot(200 * 1024.0), marks(move_gain_vs_cost=False), DONE)
    assert weighed_off.summary.moves


def test_moves_queued_behind_the_plans_earlier_data_to_the_same_node_must_still_pay():
    # rs1 overloaded with eight 4 GiB partitions; everything goes to one new node, which takes
    # their data in at move_mb_s: the third arrives ~8 minutes after the plan starts and would
    # relieve rs1 for less than move_payback_s, the fifth not at all within it.
    small = decide(_one_hot(10.0, (1.0, 0.7, 0.7, 0.7)), G, DONE)
    big = decide(_one_hot(4 * 1024.0, (1.0, 0.7, 0.7, 0.7)), G, DONE)
    moved = [a for a in big.actions if a.op == "move"]
    assert 0 < len(moved) < small.summary.moves
    wait = 4 * 1024.0 / G.move_mb_s
    # each later move to the same node says how long it waits for the data sent before it
    to_new = [a for a in moved if a.target.startswith("new-")]
    for k, a in enumerate(to_new[1:], start=1):
        assert f"after {k * wait:.0f} s of this plan's earlier data to its node" in a.reason
    assert len(to_new) * wait <= G.move_payback_s + wait


def test_many_small_partitions_leave_a_hot_node_over_several_nodes_not_one_queue():
    # Seen on the StochasticLoadBalancer snapshot: every small partition went to the one least
    # loaded node, whose intake queue (2 GB each at move_mb_s) soon made any further move fail
    # to pay, and the hot node kept almost all its load (22 moves, no better balance).
    parts = [partition(f"h{k}", "rs1", reads=10, size_mb=2000) for k in range(40)] + \
        [partition(f"c{i}-{k}", f"rs{i}", reads=10, size_mb=2000) for i in (3, 4, 5, 6)
         for k in range(14)]
    snap = make_snapshot([0.9, 0.0, 0.3, 0.3, 0.3, 0.3], parts)
    plan = decide(snap, G, DONE)
    check_plan(snap, plan)
    moved = [a for a in plan.actions if a.op == "move"]
    assert all(a.source == "rs1" for a in moved)
    assert len(moved) >= 15 and len({a.target for a in moved}) >= 3


@pytest.mark.filterwarnings("error")
def test_a_node_with_vanishing_request_rates_is_rebalanced_like_any_busy_node():
    # Seen as overflow warnings in CI: a node's utilisation over a request rate of 1e-310/s
    # is infinite, and its partitions looked unmovable. Their shares of the node are what count.
    ids = ["rs1", "rs2", "rs3", "rs4"]

    def plan_for(hot_rate):
        parts = [partition(f"h{k}", "rs1", reads=hot_rate) for k in range(8)] + \
            [partition(f"c{k}", ids[1 + k % 3], reads=hot_rate / 5) for k in range(6)]
        snap = make_snapshot([0.9, 0.2, 0.2, 0.2], parts)
        plan = decide(snap, G, DONE)
        check_plan(snap, plan)
        return sorted((a.partition, a.source) for a in plan.actions if a.op == "move")

    assert plan_for(1e-310) == plan_for(100.0) != []
