"""Split a hot partition (decision/rules/splits.py): a node one partition overloads gets its
partition split and its other partitions moved off, never a node."""
from __future__ import annotations

from decision import decide
from decision.model import Plan
from decision.rules.rule import Carry
from decision.rules.splits import SplitHot
from tests.decision.plan_checks import check_plan
from tests.fixtures.rules import DONE, alone, marks
from tests.fixtures.snapshots import later, make_snapshot, partition

G = marks()


def _alone(cpu=0.95):
    """A node that one partition (5,000 requests/s) overloads, its neighbours moved away."""
    return make_snapshot([cpu, 0.2, 0.2], [partition("hot", "rs1", writes=5000)] + [
        partition(f"c{k}", f"rs{2 + k % 2}", reads=10) for k in range(6)])


def _crowded():
    """The same hot partition with neighbours on its node."""
    return make_snapshot([0.95, 0.2, 0.2], [partition("hot", "rs1", writes=5000)] + [
        partition(f"c{k}", f"rs{1 + k % 3}", reads=10) for k in range(6)])


def _after_split(load_of_hottest_half, *, seconds, cpu=0.95):
    """The hot node after its partition was split: the halves serve `load_of_hottest_half` and
    the rest of the 5,000 requests/s."""
    halves = [partition("hot.a", "rs1", writes=load_of_hottest_half),
              partition("hot.b", "rs1", writes=5000 - load_of_hottest_half)]
    others = [partition(f"c{k}", f"rs{2 + k % 2}", reads=10) for k in range(6)]
    return later(make_snapshot([cpu, 0.2, 0.2], halves + others), seconds)


def test_alone_on_and_off():
    split = alone(SplitHot(), _alone(), G)
    assert isinstance(split, Plan) and [a.op for a in split.actions] == ["split"]
    # split_hot_partitions off: the neighbours still leave the hot node (move_only_what_pays)
    moved = alone(SplitHot(), _crowded(), marks(split_hot_partitions=False))
    assert isinstance(moved, Plan) and {a.op for a in moved.actions} == {"move"}
    assert all(a.partition != "hot" for a in moved.actions)
    # ...and once it is alone there, nothing to do: nothing said either
    assert alone(SplitHot(), _alone(), marks(split_hot_partitions=False)) == Carry()
    # both off: the rule is off
    both = marks(split_hot_partitions=False, move_only_what_pays=False)
    assert not SplitHot().enabled(both) and alone(SplitHot(), _alone(), both) is None


def test_one_hot_partition_does_not_add_nodes():
    snap = _crowded()
    plan = decide(snap, G, DONE)
    check_plan(snap, plan)
    # no node added; the hot partition is split and its neighbours leave its node
    assert plan.sizing.delta == 0 and not [a for a in plan.actions if a.op == "launch"]
    assert [(a.op, a.partition, a.node) for a in plan.actions if a.op == "split"] == [
        ("split", "hot", "rs1")]
    moves = [a for a in plan.actions if a.op == "move"]
    assert moves and all(a.source == "rs1" and a.partition != "hot" for a in moves)
    # once it is alone there and may not be split, nothing pays: hold
    no_split = marks(split_hot_partitions=False)
    held = decide(_alone(), no_split, DONE)
    assert held.is_empty and held.reason.startswith("hold (hot_partition)")
    assert decide(_alone(), marks(paper_faithful=True), DONE).sizing.delta > 0  # MET adds


def test_a_partition_that_alone_overloads_its_node_is_split_and_its_halves_can_leave():
    alone_ = _alone(cpu=0.7)
    plan = decide(alone_, G, DONE)
    check_plan(alone_, plan)
    (split,) = plan.actions
    assert (split.op, split.partition, split.node, split.cause) == ("split", "hot", "rs1",
                                                                     "hot_partition")
    assert plan.summary.splits == 1 and plan.sizing.delta == 0 and "5000 requests/s" in split.reason
    # The halves share the load: after the warm-up one half leaves the node (to a new one:
    # on rs2 or rs3 it would overload them).
    after = _after_split(2600, seconds=G.warmup_s + 1, cpu=0.7)
    spread = decide(after, G, plan.memory)
    check_plan(after, spread)
    (move,) = [a for a in spread.actions if a.op == "move"]
    assert move.partition.startswith("hot.") and move.source == "rs1" and spread.sizing.delta == 1


def test_a_table_whose_splits_keep_the_load_on_one_half_is_left_whole():
    # Ordered inserts: every write lands in the last region, so one half keeps them all.
    memory, ids = decide(_alone(), G, DONE).memory, []
    t = 0.0
    for k in range(G.resplit_tries + 1):
        t += G.warmup_s + 1
        halves = [partition(f"hot{k}.a", "rs1", writes=100),
                  partition(f"hot{k}.b", "rs1", writes=4900)]
        others = [partition(f"c{j}", f"rs{2 + j % 2}", reads=10) for j in range(6)]
        snap = later(make_snapshot([0.95, 0.2, 0.2], halves + others), t)
        plan = decide(snap, G, memory)
        ids.append([a.partition for a in plan.actions if a.op == "split"])
        memory = plan.memory
    # resplit_tries splits in all (the first included), each leaving the load on one half;
    # then the table is left whole
    tries = G.resplit_tries
    assert ids == [[f"hot{k}.b"] for k in range(tries - 1)] + [[], []]
    assert "not split again" in plan.reason and plan.sizing.delta == 0
    # said in a hold too, when nothing else moves
    others_away = [partition(f"hot{tries}.a", "rs1", writes=0),  # idle: never moved
                   partition(f"hot{tries}.b", "rs1", writes=4900)]
    held = decide(later(make_snapshot([0.95, 0.2, 0.2], others_away), t + G.warmup_s + 1), G,
                  memory)
    assert held.is_empty and "not split again" in held.reason
    # An hour on, the workload may have changed: it may be tried again.
    retry = decide(later(snap, G.resplit_after_s), G, memory)
    assert [a.partition for a in retry.actions if a.op == "split"] == [f"hot{G.resplit_tries}.b"]


def test_a_narrow_hot_key_range_is_split_until_its_halves_part():
    # The first split leaves the whole hot range in one half; the next one parts it.
    first = decide(_alone(), G, DONE)
    once = _after_split(4800, seconds=G.warmup_s + 1)
    second = decide(once, G, first.memory)
    assert [a.partition for a in second.actions if a.op == "split"] == ["hot.a"]
