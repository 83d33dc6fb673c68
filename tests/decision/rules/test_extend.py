"""A plan in flight extended (decision/rules/extend.py): while the control loop carries out a
scale-out it asks the policy at every sample; demand that outgrew the size the plan leads to
launches more nodes at once, anything else waits for the plan's end."""
from __future__ import annotations

from dataclasses import replace

from decision import decide
from decision.rules.memory import read_memory
from tests.fixtures.rules import DONE, SIZED, queues_grew
from tests.fixtures.snapshots import later, partition, queued_snapshot


def short_cluster(asked_over_served=1.5):
    """Four nodes at 0.9 CPU serving 600 requests/s each, asked `asked_over_served` x that:
    each call queue grew by the excess in the last second (`short` below)."""
    return queued_snapshot([0.9] * 4, [600.0 * (asked_over_served - 1)] * 4, latency_ms=1000.0)


def decide_short(policy, memory, asked_over_served=1.5):
    """The decision on short_cluster() after one in which its queues were empty."""
    snap = short_cluster(asked_over_served)
    return decide(snap, policy, queues_grew(snap, memory))


def test_demand_beyond_the_plan_in_flight_adds_launches_to_it():
    # 5.4 node-loads want 6 nodes; the plan in flight leads to 5: one more, launched now
    plan = decide_short(SIZED, DONE.with_plan_in_flight(5))
    assert plan.reason.startswith("extend the plan in flight to 6 nodes (+1)")
    assert plan.sizing.current == 5 and plan.sizing.target == 6
    assert {a.op for a in plan.actions} <= {"launch", "move"}
    assert sum(a.op == "launch" for a in plan.actions) == 1
    launched = next(a.node for a in plan.actions if a.op == "launch")
    assert launched in {a.target for a in plan.actions if a.op == "move"}


def test_an_extension_leads_to_at_most_as_many_booting_nodes_as_serving_ones_or_five():
    # Four nodes asked three times what they serve want about 14; a plan in flight to 8 has
    # four still booting, bought on the same estimate: the extension adds one (4 serving + 5),
    # and once a plan leads to 9 nothing more until some of its nodes serve.
    plan = decide_short(SIZED, DONE.with_plan_in_flight(8), 3.0)
    assert plan.reason.startswith("extend the plan in flight to 9 nodes (+1)")
    assert "as many booting as serving, or 5" in plan.reason
    assert sum(a.op == "launch" for a in plan.actions) == 1
    held = decide_short(SIZED, DONE.with_plan_in_flight(9), 3.0)
    assert held.reason.startswith("hold (plan_in_flight)")
    assert not [a for a in held.actions if a.op == "launch"]


def test_a_plan_in_flight_that_carries_the_demand_is_left_to_finish():
    for memory in (DONE.with_plan_in_flight(6), DONE.with_plan_in_flight(8)):
        plan = decide_short(SIZED, memory)
        assert plan.is_empty and plan.reason.startswith("hold (plan_in_flight)")
    # idle nodes while a plan runs: no scale-in, no moves either
    idle = decide(queued_snapshot([0.05] * 6), SIZED, DONE.with_plan_in_flight(6))
    assert idle.is_empty and idle.reason.startswith("hold (plan_in_flight)")


def test_switched_off_or_sized_by_mets_marks_a_plan_in_flight_is_never_extended():
    for off in (SIZED.model_copy(update={"extend_plans": False}),
                SIZED.model_copy(update={"size_from_demand": False})):
        plan = decide_short(off, DONE.with_plan_in_flight(5), 3.0)
        assert plan.is_empty and plan.reason.startswith("hold (plan_in_flight)")


def test_the_loops_word_that_a_plan_ended_clears_the_plan_in_flight():
    memory = DONE.with_plan_in_flight(5).with_plan_ended(1000.0)
    assert memory.plan_in_flight() is None and memory.plan_ended_at() == 1000.0
    assert DONE.with_plan_in_flight(5).with_plan_in_flight(7).plan_in_flight() == 7


def _moved(plan):
    return {a.partition for a in plan.actions if a.op == "move"}


def test_an_extension_plans_on_the_placement_the_plan_in_flight_leads_to():
    # The scale-out's moves are still queued behind booting nodes, so the snapshot shows their
    # partitions where they were. The extension must not pick them again (the executor would
    # leave the duplicates out and the new node would get nothing): it relieves other ones.
    first = decide_short(SIZED, DONE)
    assert first.reason.startswith("scale out") and _moved(first)
    remembered = read_memory(first.memory.history).demand.queued
    assert remembered == _moved(first)
    more = decide_short(SIZED, first.memory.with_plan_in_flight(first.sizing.target), 3.0)
    assert more.reason.startswith("extend the plan in flight")
    assert _moved(more) and not _moved(more) & _moved(first)
    # both plans' partitions are remembered until the plan ends
    assert read_memory(more.memory.history).demand.queued == _moved(first) | _moved(more)


def test_the_queued_moves_are_forgotten_once_the_plan_ended():
    first = decide_short(SIZED, DONE)
    ended = first.memory.with_plan_in_flight(first.sizing.target).with_plan_ended(1000.0)
    after = decide(queued_snapshot([0.5] * 6), SIZED, ended)
    assert not read_memory(after.memory.history).demand.queued


def _joined(rs5_holds: tuple[str, ...] = ()):
    """short_cluster() with rs5 registered while the plan runs (one of the plan's new nodes),
    holding only the partitions `rs5_holds`; every other partition where it was."""
    joined = queued_snapshot([0.9] * 4 + [0.05], [1200.0] * 4 + [None], latency_ms=1000.0)
    parts = [replace(p, node="rs5") if p.id in rs5_holds else p
             for p in joined.partitions if p.node != "rs5"]
    return replace(joined, partitions=tuple(parts))


def test_a_node_that_joined_during_the_plan_takes_no_more_from_an_extension():
    # rs5 registered while the plan runs: it is one of the plan's new nodes, its queued
    # partitions still arriving, so it reads cool. The extension sends it nothing more (sent
    # more, the new nodes saturated once their queued partitions arrived).
    first = decide_short(SIZED, DONE)
    in_flight = first.memory.with_plan_in_flight(first.sizing.target)
    assert read_memory(in_flight.history).demand.plan_nodes == {"rs1", "rs2", "rs3", "rs4"}
    joined = _joined()
    more = decide(joined, SIZED, queues_grew(joined, in_flight))
    assert more.reason.startswith("extend the plan in flight")
    targets = {a.target for a in more.actions if a.op == "move"}
    assert targets and "rs5" not in targets
    assert targets <= {a.node for a in more.actions if a.op == "launch"}


def test_a_node_the_plan_launched_that_holds_a_partition_is_a_node_like_any_other():
    # rs5 joined and holds a partition that is not one the plan queued (an even-out sent it
    # there, or its own moves went to serving nodes while it booted and one came later): no
    # queued partition is on its way to it that anyone can know of. Left out as "arriving", it
    # served one partition at a tenth of its CPU for twenty minutes of a simulated ramp while
    # the nodes beside it ran at their capacity; it takes its share like any node.
    first = decide_short(SIZED, DONE)
    in_flight = first.memory.with_plan_in_flight(first.sizing.target)
    queued = read_memory(in_flight.history).demand.queued
    other = next(p.id for p in short_cluster().partitions if p.id not in queued)
    joined = _joined((other,))
    # the partition it holds asks little (its CPU says so too)
    joined = replace(joined, partitions=tuple(replace(p, reads=5.0, writes=0.0) if p.id == other else p
                                              for p in joined.partitions))
    more = decide(joined, SIZED, queues_grew(joined, in_flight))
    assert "rs5" in {a.target for a in more.actions if a.op == "move"}


def _serving(cpus, queues, partitions):
    """queued_snapshot's nodes (requests taking 1 s where calls are queued) serving
    `partitions` instead of its own."""
    latency = [1000.0 if q else 5.0 for q in queues]
    return replace(queued_snapshot(cpus, queues, latency_ms=latency), partitions=tuple(partitions))


def test_partitions_landed_on_a_node_already_serving_count_there_in_an_extension():
    # rs5 serves nothing yet when the scale-out is decided, so the plan sends it busy
    # partitions at once (no boot to wait for). Once they landed rs5 is as busy and short as
    # the rest; an extension must see their load on rs5 and send it nothing more. (Counted as
    # gone from rs5, they made it read cool: on a simulated steady-growth one node took moves
    # at 0.15, 0.5 and 0.89 CPU in three extensions and ran saturated for 11 minutes.)
    parts = [partition(f"p{i + 1}-{k}", f"rs{i + 1}", reads=100.0, writes=50.0, size_mb=10.0)
             for i in range(4) for k in range(8)]
    cool = _serving([0.9] * 4 + [0.02], [300.0] * 4 + [0.0], parts)
    first = decide(cool, SIZED, queues_grew(cool, DONE))
    assert first.reason.startswith("scale out")
    to_rs5 = {a.partition for a in first.actions if a.op == "move" and a.target == "rs5"}
    assert to_rs5, "the node already serving takes partitions at once"
    assert not read_memory(first.memory.history).demand.queued & to_rs5
    landed = _serving([0.8] * 5, [400.0] * 5,
                      [replace(p, node="rs5") if p.id in to_rs5 else p for p in parts])
    in_flight = first.memory.with_plan_in_flight(first.sizing.target)
    more = decide(landed, SIZED, queues_grew(landed, in_flight))
    assert more.reason.startswith("extend the plan in flight")
    targets = {a.target for a in more.actions if a.op == "move"}
    assert targets and "rs5" not in targets


def test_a_node_its_plan_left_hot_is_evened_out_while_the_plan_runs():
    # The scale-out's partitions landed on rs5, one of its new nodes, and demand grew since
    # (a ramp keeps extending the plan for half an hour, the plan was sized at its start): rs5
    # is short while rs1-rs4 have room. Its partitions move on to them now, not at the plan's
    # end; rs6, another new node whose partition has not arrived yet (it still waits on rs2),
    # takes none.
    first = decide_short(SIZED, DONE)
    queued = read_memory(first.memory.history).demand.queued
    waiting = next(a.partition for a in first.actions if a.op == "move" and a.target == "new-2")
    to_rs5 = queued - {waiting}
    in_flight = first.memory.with_plan_in_flight(first.sizing.target)
    parts = [replace(p, node="rs5") if p.id in to_rs5 else p for p in short_cluster().partitions]
    hot = _serving([0.3] * 4 + [1.0, 0.02], [0.0] * 4 + [200.0, 0.0], parts)
    plan = decide(hot, SIZED, queues_grew(hot, in_flight))
    assert plan.reason.startswith("even out while a plan to 6 nodes is carried out: rs5")
    moves = [a for a in plan.actions if a.op == "move"]
    assert moves and all(a.source == "rs5" and a.target in {"rs1", "rs2", "rs3", "rs4"}
                         for a in moves) and len(moves) == len(plan.actions)
    assert plan.sizing.target == first.sizing.target
    # moved on to serving nodes they are no longer the plan's queued partitions
    assert not read_memory(plan.memory.history).demand.queued & {a.partition for a in moves}
    # the same cluster with every node in room: the plan is left to finish
    calm = _serving([0.3] * 4 + [0.5, 0.02], [0.0] * 6, parts)
    assert decide(calm, SIZED, queues_grew(calm, in_flight)).reason.startswith(
        "hold (plan_in_flight)")


def test_a_node_the_plan_launched_that_nothing_is_on_its_way_to_takes_its_share():
    # Every partition the plan queued has landed, all of them on rs5 (the executor sent the
    # ones meant for rs6 to rs5 while rs6 booted): nothing is on its way to rs6 any more, and
    # left out as "arriving" it would idle until the plan ends. rs5 is hot: rs6, the coolest
    # node, takes from it.
    first = decide_short(SIZED, DONE)
    queued = read_memory(first.memory.history).demand.queued
    in_flight = first.memory.with_plan_in_flight(first.sizing.target)
    parts = [replace(p, node="rs5") if p.id in queued else p for p in short_cluster().partitions]
    hot = _serving([0.7] * 4 + [1.0, 0.02], [0.0] * 4 + [600.0, 0.0], parts)
    plan = decide(hot, SIZED, queues_grew(hot, in_flight))
    assert plan.reason.startswith("even out while a plan to 6 nodes is carried out: rs5")
    assert "rs6" in {a.target for a in plan.actions if a.op == "move"}


def test_partitions_waiting_for_a_booting_node_go_to_serving_nodes_with_room_early_in_the_boot():
    # rs1 is short, rs2-rs4 have room, and two of rs1's partitions wait for the plan's new
    # nodes, which boot for minutes. A minute into the boot the even-out sends them to rs2-rs4
    # now (the executor re-targets their moves); they are no longer the plan's queued ones.
    # Past half the lead time the nodes are nearly up: those two wait for them and only rs1's
    # other partition moves. With no room on the serving nodes, nothing is re-targeted.
    first = decide_short(SIZED, DONE)
    waiting = read_memory(first.memory.history).demand.queued
    assert {"p1-0", "p1-1"} <= waiting
    in_flight = first.memory.with_plan_in_flight(first.sizing.target)

    def asking(cpus):
        # each node's partitions ask in proportion to its CPU, as rs1's (saturated) do to its
        return [replace(p, reads=p.reads * cpus[int(p.node[2:]) - 1],
                        writes=p.writes * cpus[int(p.node[2:]) - 1])
                for p in short_cluster().partitions]

    def evened(cpus, after_s):
        hot = later(_serving(cpus, [600.0] + [0.0] * (len(cpus) - 1), asking(cpus)), after_s)
        plan = decide(hot, SIZED, queues_grew(hot, in_flight))
        lead = "even out while a plan to 6 nodes is carried out: "
        assert plan.reason.startswith(lead)
        # the words name the hottest node the moves come off
        named = plan.reason[len(lead):].split(" carries")[0]
        assert named in {a.source for a in plan.actions if a.op == "move"}
        return plan, {a.partition for a in plan.actions if a.op == "move"}

    early, moved = evened([1.0, 0.3, 0.3, 0.3], 60.0)
    assert "carried out: rs1 carries" in early.reason
    assert {"p1-0", "p1-1"} <= moved
    assert all(a.target in {"rs2", "rs3", "rs4"} for a in early.actions)
    assert not read_memory(early.memory.history).demand.queued & moved
    late, moved = evened([1.0, 0.3, 0.3, 0.3], 300.0)
    assert "carried out: rs1 carries" in late.reason
    assert moved and not moved & waiting
    # every serving node near its capacity: nothing to re-target to (a hold, or moves that
    # leave the waiting partitions to the new nodes)
    cpus = [1.0, 0.95, 0.95, 0.95]
    full = later(_serving(cpus, [600.0, 0.0, 0.0, 0.0], asking(cpus)), 60.0)
    plan = decide(full, SIZED, queues_grew(full, in_flight))
    assert not {a.partition for a in plan.actions if a.op == "move"} & waiting
