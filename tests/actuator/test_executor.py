"""The executor on the in-package fake cluster: order of phases, throttling, incremental
transfer, failures (launch timeouts, quota, failing and undone moves), ownership (drain-only
scale-in of nodes metctl did not launch, adoption), rollback."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from actuator.executor import ExecutorBusy, Executor
from tests.fakes.cluster import FakeCluster, FakeDelays
from actuator.journal import Journal
from actuator.settings import AdoptEntry, ExecutorSettings
from decision.model import Action, Plan
from tests.actuator.plans import (
    RS1, RS2, RS3, SLOW_BOOT, actual_layout, fill_new_node, make_plan, random_case, resolved_layout,
    run_to_end, scenario,
)


def executor(world: FakeCluster, datastore=None, journal: Journal | None = None,
             **overrides) -> Executor:
    """An executor on the fake world (its own datastore driver, or `datastore` in its place;
    a journal in memory, or `journal`)."""
    return Executor(world.infra, datastore or world.datastore, ExecutorSettings(**overrides),
                    world.clock, world.cluster, journal or Journal(":memory:"))


def ops(world: FakeCluster, op: str) -> list[tuple]:
    return [e for e in world.effects if e[0] == op]


def test_scenario_reaches_the_assignment_in_met_order():
    world = FakeCluster()
    plan = scenario(world)
    ex = executor(world)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "done" and status.actions_done == status.actions_total == len(plan.actions)
    assert actual_layout(world) == resolved_layout(ex, plan)
    kinds = [e[0] for e in world.effects]
    # launch first, terminate last; the restart only once rs1 serves nothing
    assert kinds.index("launch") < kinds.index("move") and kinds.index("restart") < kinds.index("compact")
    assert kinds.index("decommission") < kinds.index("terminate")
    assert "restart-with-partitions" not in kinds and "LOST" not in kinds
    new_server = ex.resolve("new-1")
    restart_at = kinds.index("restart")
    # evacuation of rs1 never sends partitions to the new (already final) node but p0, whose target it is
    evacuated = [e for e in world.effects[:restart_at] if e[0] == "move" and e[2] == RS1]
    assert {e[3] for e in evacuated if e[1] != "p0"} == {RS2}  # not the new node, not rs3 (leaving)
    assert ("move", "p0", RS1, new_server) in world.effects
    assert world.effects[-1] == ("balancer", True) and world.effects[0] == ("balancer", False)
    (_, terminated), = ops(world, "terminate")
    assert world.s["instances"][terminated]["address"] == "rs3"


def test_new_node_user_data_and_tags_carry_the_profile():
    world = FakeCluster(cluster="prod")
    plan = scenario(world)
    ex = executor(world)
    ex.submit(plan, "p1")
    run_to_end(ex, world)
    (_, iid, token), = ops(world, "launch")
    inst = world.s["instances"][iid]
    assert inst["tags"] == {"metctl:managed": "true", "metctl:cluster": "prod", "metctl:profile": "read",
                            "metctl:launch": token}
    assert '"profile": "read"' in inst["user_data"] and '"cluster": "prod"' in inst["user_data"]


@pytest.mark.parametrize("max_moves", [1, 2, 3])
def test_moves_are_throttled_and_a_new_node_fills_from_one_source_at_a_time(max_moves):
    world = FakeCluster(delays=FakeDelays(move_s=5.0))
    plan = scenario(world)
    ex = executor(world, max_concurrent_moves=max_moves)
    ex.submit(plan, "p1")
    seen = {"max_in_flight": 0, "sources_to_new": 0}

    def check(_status):
        moving = [v for v in world.s["partitions"].values() if v["moving_to"] is not None]
        seen["max_in_flight"] = max(seen["max_in_flight"], len(moving))
        new = ex.resolve("new-1")
        to_new = {v["prev"] for v in moving if new and v["moving_to"] == new}
        seen["sources_to_new"] = max(seen["sources_to_new"], len(to_new))

    assert run_to_end(ex, world, each_tick=check).state == "done"
    assert 1 <= seen["max_in_flight"] <= max_moves
    assert seen["sources_to_new"] == 1


@pytest.mark.parametrize("max_moves", [2, 4])
def test_incremental_transfer_sends_one_source_after_the_other(max_moves):
    world = FakeCluster(delays=FakeDelays(move_s=5.0))
    plan = fill_new_node(world)
    ex = executor(world, max_concurrent_moves=max_moves)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    sources = [e[2] for e in ops(world, "move")]
    assert sources == sorted(sources)  # all of rs1's partitions, then all of rs2's
    assert actual_layout(world) == resolved_layout(ex, plan)


def test_parallel_transfer_when_incremental_is_off():
    world = FakeCluster(delays=FakeDelays(move_s=5.0))
    plan = fill_new_node(world)
    ex = executor(world, max_concurrent_moves=4, incremental_transfer=False)
    ex.submit(plan, "p1")
    sources = set()

    def check(_):
        new = ex.resolve("new-1")
        moving = {v["prev"] for v in world.s["partitions"].values() if new and v["moving_to"] == new}
        if len(moving) > 1:
            sources.update(moving)

    assert run_to_end(ex, world, each_tick=check).state == "done"
    assert sources == {RS1, RS2}


@pytest.mark.parametrize("copy_mb, reissued", [(None, True), (3600.0, False)])
def test_a_move_that_copies_data_gets_time_for_its_size(copy_mb, reissued):
    # Each move takes 200 s: longer than move_timeout_s 120 s. HBase copies nothing, so such a
    # move is stuck and re-issued; a store that copies 3.6 GB at 26 MiB/s needs the time.
    world = FakeCluster(delays=FakeDelays(move_s=200.0, copy_mb=copy_mb))
    plan = fill_new_node(world)
    ex = executor(world, move_timeout_s=120, move_mb_s=26)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    late = [e["message"] for e in ex.journal.events("p1") if "after 120 s" in e["message"]
            or "after 397" in e["message"]]
    assert bool(late) == reissued
    assert actual_layout(world) == resolved_layout(ex, plan)


def _scale_in_of_two_tables(world: FakeCluster) -> Plan:
    """rs1 leaves: its three regions of "orders" and two of "users" move to rs2."""
    world.add_server(RS1, partitions=("a0", "a1", "a2", "b0", "b1"))
    world.add_server(RS2, partitions=("a3",))
    for p in ("b0", "b1"):
        world.s["partitions"][p]["table"] = "users"
    for p in ("a0", "a1", "a2", "a3"):
        world.s["partitions"][p]["table"] = "orders"
    A = Action
    actions = [A("move", "scale in", partition=p, source=RS1, target=RS2) for p in ("a0", "a1", "a2", "b0", "b1")]
    actions += [A("drain", "scale in", node=RS1), A("terminate", "scale in", node=RS1)]
    return make_plan(actions, {RS2: ("default", ["a0", "a1", "a2", "a3", "b0", "b1"])})


def _starts(ex: Executor, parts: tuple[str, ...]) -> list[tuple[float, float]]:
    return sorted((m.started_at, m.finished_at) for m in ex.of("move") if m.partition in parts)


def test_a_scale_ins_moves_of_one_table_are_spaced_and_other_tables_go_meanwhile():
    world = FakeCluster(delays=FakeDelays(move_s=3.0))
    plan = _scale_in_of_two_tables(world)
    ex = executor(world, max_concurrent_moves=2, scale_in_move_gap_s=20)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert actual_layout(world) == resolved_layout(ex, plan)
    orders, users = _starts(ex, ("a0", "a1", "a2")), _starts(ex, ("b0", "b1"))
    for moves in (orders, users):
        for (start, _), (next_start, _) in zip(moves, moves[1:]):
            assert next_start - start >= 20
        for (_, end), (next_start, _) in zip(moves, moves[1:]):
            assert next_start >= end  # one at a time
    # the throttle's second slot goes to the other table, not to waiting
    assert users[0][0] < orders[1][0]
    # rs1 is drained only once its last region has left, however long the pacing made that
    drain = ex.of("drain")[0]
    assert drain.started_at is not None and drain.started_at >= max(end for _, end in orders + users)


def test_moves_that_relieve_or_fill_and_unpaced_scale_ins_are_not_held():
    world = FakeCluster(delays=FakeDelays(move_s=3.0))
    plan = fill_new_node(world)  # a scale-out: its moves fill the new node as soon as it can take them
    ex = executor(world, max_concurrent_moves=2, scale_in_move_gap_s=20)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    starts = [s for s, _ in _starts(ex, ("p0", "p1", "p3", "p4"))]
    assert starts[-1] - starts[0] < 20

    world = FakeCluster(delays=FakeDelays(move_s=3.0))
    plan = _scale_in_of_two_tables(world)
    ex = executor(world, max_concurrent_moves=2, scale_in_move_gap_s=0)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    starts = [s for s, _ in _starts(ex, ("a0", "a1", "a2"))]
    assert starts[-1] - starts[0] < 20


def test_launch_that_never_becomes_ready_is_retried_then_abandoned_cleanly():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(launch=("never_ready", "never_ready", "never_ready"))
    ex = executor(world, booting_timeout_s=60, launch_attempts=3, launch_backoff_s=10)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "abandoned"
    assert "launch of new-1 failed after 3 attempts" in status.reason and "booting" in status.reason
    launched = [e[1] for e in ops(world, "launch")]
    assert len(launched) == 3 and sorted(e[1] for e in ops(world, "terminate")) == sorted(launched)
    # while it booted, the move between two existing nodes went ahead and stays (p6 is served
    # on rs2); rs1's reconfigure waited for the new node (p0 goes there) and never started
    assert ops(world, "move") == [("move", "p6", RS3, RS2)] and not ops(world, "restart")
    assert actual_layout(world)["p6"] == RS2
    world.advance(10)  # past the fake's terminate delay
    assert world.infra.nodes() and all(n.instance_id.startswith("i-old") for n in world.infra.nodes())
    assert world.s["balancer"] is True  # restored
    times = [t for t in ex.journal.events("p1") if "retrying launch" in t["message"]]
    assert [t["message"] for t in times] == ["retrying launch of new-1 in 10 s", "retrying launch of new-1 in 20 s"]


def test_a_failed_launch_is_retried_after_back_off_then_the_plan_completes():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(launch=("error", "never_join"))
    ex = executor(world, joining_timeout_s=30, launch_backoff_s=10)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "done"
    assert len(ops(world, "launch")) == 2  # the error made no node; the never-joining one was replaced
    assert len([e for e in ops(world, "terminate") if e[1].startswith("i-new")]) == 1
    assert actual_layout(world) == resolved_layout(ex, plan)


def test_quota_error_abandons_at_once_without_retry():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(launch=("quota",))
    ex = executor(world)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "abandoned" and "quota" in status.reason
    assert not ops(world, "launch") and not ops(world, "move")
    errors = ex.journal.events("p1", level="error")
    assert any("quota" in e["message"] for e in errors)


def test_a_move_failing_twice_then_succeeding_completes_the_plan():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(move_failures={"p6": 2})
    ex = executor(world, datastore_backoff_s=3)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "done"
    assert actual_layout(world) == resolved_layout(ex, plan)
    step = next(s for s in ex.steps if s.op == "move" and s.partition == "p6" and s.parent is None)
    assert step.attempts == 3 and step.state == "done"
    errors = [e for e in ex.journal.events("p1", level="error") if "p6" in e["message"]]
    assert len(errors) == 2


def test_a_move_that_keeps_failing_stops_the_plan_at_a_consistent_point():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(move_failures={"p6": 99})
    ex = executor(world, datastore_attempts=3, datastore_backoff_s=1)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "failed" and "p6" in status.reason
    for _ in range(30):  # moves in flight finish by themselves
        world.advance(1)
    assert all(server is not None for server in actual_layout(world).values())
    assert not ops(world, "terminate") and not ops(world, "decommission") and not ops(world, "compact")
    steps = {s.idx: s.state for s in ex.steps}
    assert "pending" not in steps.values() and "cancelled" in steps.values()
    assert not ex.busy


def test_a_move_undone_by_the_store_is_verified_and_redone():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(move_back={"p6": 1})
    ex = executor(world)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert actual_layout(world) == resolved_layout(ex, plan)
    assert len([e for e in ops(world, "move") if e[1] == "p6"]) == 2


def test_a_node_metctl_did_not_launch_is_drained_and_left_running_with_the_reason_journaled():
    world = FakeCluster()
    plan = scenario(world, owned_rs3=False)
    rs3_instance = next(i for i, inst in world.s["instances"].items() if inst["address"] == "rs3")
    ex = executor(world)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "done" and status.actions_done == status.actions_total
    assert ("decommission", RS3) in world.effects and ops(world, "terminate") == []
    assert world.s["instances"][rs3_instance]["terminated_at"] is None  # the machine still runs
    assert actual_layout(world) == resolved_layout(ex, plan)
    (term,) = ex.of("terminate")
    assert term.state == "skipped" and term.note == (
        "drained, not terminated: metctl did not launch rs3; adopt it with infrastructure.adopt "
        "to let metctl terminate it")
    assert any(term.note in e["message"] for e in ex.journal.events("p1"))


def test_an_adopted_node_is_drained_then_terminated():
    world = FakeCluster()
    plan = scenario(world, owned_rs3=False)
    rs3_instance = next(i for i, inst in world.s["instances"].items() if inst["address"] == "rs3")
    world.infra.adopt = (AdoptEntry(hosts=("rs3",)),)
    ex = executor(world)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert ops(world, "terminate") == [("terminate", rs3_instance)]
    kinds = [e[0] for e in world.effects]
    assert kinds.index("decommission") < kinds.index("terminate")
    assert all(s.state == "done" for s in ex.of("terminate"))


def test_restart_failures_are_retried():
    world = FakeCluster()
    plan = scenario(world)
    world.inject(restart_failures={RS1: 2})
    ex = executor(world, datastore_backoff_s=2)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert ops(world, "restart") == [("restart", RS1, "write")]


def test_submit_refuses_while_busy_and_reports_idle_before():
    world = FakeCluster()
    plan = scenario(world)
    ex = executor(world)
    assert ex.tick().state == "idle" and not ex.busy
    ex.submit(plan, "p1")
    assert ex.busy
    with pytest.raises(ExecutorBusy):
        ex.submit(plan, "p2")


def test_rollback_on_resume_terminates_the_new_node_and_moves_its_partitions_back():
    world = FakeCluster()
    plan = scenario(world)
    journal = Journal(":memory:")
    ex = Executor(world.infra, world.datastore, ExecutorSettings(), world.clock, "demo", journal)
    ex.submit(plan, "p1")
    # run until p0 has arrived on the new node, then "crash" (drop the executor)
    for _ in range(400):
        ex.tick()
        world.advance(1)
        new = ex.resolve("new-1")
        if new and world.s["partitions"]["p0"]["server"] == new:
            break
    else:
        raise AssertionError("p0 never reached the new node")
    fresh = Executor(world.infra, world.datastore, ExecutorSettings(on_resume="rollback"), world.clock, "demo",
                     journal)
    fresh.resume()
    status = run_to_end(fresh, world)
    assert status.state == "abandoned"
    assert new not in set(actual_layout(world).values())
    world.advance(10)
    assert all(n.instance_id.startswith("i-old") for n in world.infra.nodes())
    assert "LOST" not in [e[0] for e in world.effects]


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), max_moves=st.integers(1, 3), faults=st.integers(0, 2),
       launch_fault=st.sampled_from([(), ("error",), ("never_join",), ("never_ready",)]))
def test_any_consistent_plan_ends_in_its_assignment_without_serving_gaps(seed, max_moves, faults, launch_fault):
    world = FakeCluster()
    plan = random_case(seed, world)
    parts = sorted(world.s["partitions"])
    servers = sorted(world.s["servers"])
    # transient faults within the retry budgets: the plan must still complete
    world.inject(launch=launch_fault, move_failures={parts[0]: faults}, move_back={parts[-1]: min(faults, 1)},
                 restart_failures={servers[0]: faults})
    ex = executor(world, max_concurrent_moves=max_moves, booting_timeout_s=60, joining_timeout_s=60)
    ex.submit(plan, f"plan-{seed}")

    def check(_):
        moving = sum(v["moving_to"] is not None for v in world.s["partitions"].values())
        assert moving <= max_moves

    status = run_to_end(ex, world, each_tick=check)
    assert status.state == "done", status
    assert actual_layout(world) == resolved_layout(ex, plan)
    kinds = [e[0] for e in world.effects]
    assert "LOST" not in kinds and "restart-with-partitions" not in kinds
    restarted = [e[1] for e in world.effects if e[0] == "restart"]
    assert len(restarted) == len(set(restarted)) == sum(a.op == "reconfigure" for a in plan.actions)
    for a in plan.assignment:
        server = world.s["servers"][ex.resolve(a.node)]
        assert server["profile"] == a.profile


def _split_plan(world: FakeCluster, *, with_move: bool = True):
    from tests.fakes.plans import make_plan
    from decision.model import Action
    world.add_server(RS1, partitions=("hot", "p1"))
    world.add_server(RS2, partitions=("p2",))
    actions = [Action("split", "one partition overloads rs1", node=RS1, partition="hot",
                      cause="hot_partition")]
    if with_move:
        actions.append(Action("move", "off the hot node", partition="p1", source=RS1, target=RS2,
                              cause="rebalance"))
    return make_plan(actions, {RS1: ("default", ["hot"]), RS2: ("default", ["p1", "p2"])})


def test_a_split_ends_when_the_store_lists_its_daughters_on_the_same_server():
    world = FakeCluster(delays=FakeDelays(split_s=12.0))
    plan = _split_plan(world)
    ex = executor(world)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "done" and status.actions_done == 2
    assert ops(world, "split") == [("split", "hot")]
    layout = actual_layout(world)
    assert "hot" not in layout and layout["hot.a"] == layout["hot.b"] == RS1
    assert layout["p1"] == RS2
    kinds = [e[0] for e in world.effects]
    assert kinds.index("split") < kinds.index("move")  # the plan's order: split, then move
    (step,) = [s for s in ex.journal.load_steps("p1") if s["op"] == "split"]
    assert step["state"] == "done" and step["attempts"] == 1


def test_a_split_the_store_refuses_is_skipped_and_the_plan_goes_on():
    class NoSplits(type(FakeCluster().datastore)):
        def split_partition(self, partition_id):
            from actuator.drivers import DriverError
            raise DriverError(f"{partition_id}: no split point", retryable=False)

    world = FakeCluster()
    plan = _split_plan(world)
    ex = executor(world, datastore=NoSplits(world))
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert actual_layout(world) == {"hot": RS1, "p1": RS2, "p2": RS2}
    (step,) = [s for s in ex.journal.load_steps("p1") if s["op"] == "split"]
    assert step["state"] == "skipped" and "no split point" in step["note"]


def test_a_split_issued_before_a_controller_restart_is_not_issued_twice(tmp_path):
    world = FakeCluster(delays=FakeDelays(split_s=30.0), state_file=tmp_path / "world.json")
    plan = _split_plan(world, with_move=False)
    journal = tmp_path / "journal.db"
    first = Executor(world.infra, world.datastore, ExecutorSettings(), world.clock, world.cluster,
                     Journal(str(journal)))
    first.submit(plan, "p1")
    for _ in range(5):  # the split is issued, then the controller dies mid-split
        first.tick()
        world.advance(1.0)
    assert ops(world, "split") == [("split", "hot")]
    again = FakeCluster(delays=FakeDelays(split_s=30.0), state_file=tmp_path / "world.json")
    second = Executor(again.infra, again.datastore, ExecutorSettings(), again.clock, again.cluster,
                      Journal(str(journal)))
    second.resume()
    assert run_to_end(second, again).state == "done"
    assert ops(again, "split") == [("split", "hot")]
    assert set(actual_layout(again)) == {"hot.a", "hot.b", "p1", "p2"}


def _plan_steps(ex: Executor) -> dict[str, object]:
    """The plan's own steps by what they do: 'launch', 'reconfigure', 'split', 'move p0'…"""
    return {(s.op if s.op != "move" else f"move {s.partition}"): s for s in ex.steps if s.parent is None}


def test_while_the_new_vm_boots_the_work_on_existing_nodes_is_done_and_the_commit_waits_for_it():
    from tests.actuator.plans import SLOW_BOOT, overlap_scenario
    world = FakeCluster(delays=SLOW_BOOT)
    plan = overlap_scenario(world)
    ex = executor(world)
    ex.submit(plan, "p1")
    during_boot = []

    def watch(st):
        if st.phase == "launch" and st.current != "launch":
            during_boot.append(st.current)

    status = run_to_end(ex, world, each_tick=watch)
    assert status.state == "done"
    steps = _plan_steps(ex)
    ready_at = steps["launch"].finished_at
    assert ready_at > 300  # the boot alone takes 300 s
    # rs2's reconfigure, the split on rs3 and both moves between existing nodes ended before
    # the new node registered; the move onto it started only once it had
    for what in ("reconfigure", "split", "move p1", "move p6"):
        assert steps[what].state == "done" and steps[what].finished_at < ready_at, what
    assert steps["move p0"].started_at >= ready_at
    new = ex.resolve("new-1")
    assert ("move", "p0", RS1, new) in world.effects
    assert [e for e in world.effects if e[0] == "move" and e[1] == "p0"] == [("move", "p0", RS1, new)]
    layout = actual_layout(world)
    assert layout["p1"] == RS3 and layout["p6"] == RS1 and layout["p0"] == new
    assert layout["hot.a"] == layout["hot.b"] == RS3 and world.s["servers"][RS2]["profile"] == "write"
    commit = next(e for e in ex.journal.events("p1") if e["message"].startswith("COMMIT"))
    assert commit["at"] >= ready_at
    # `metctl status` shows the phase as launch and the work under way during the boot
    assert any("move p1" in c or "move p6" in c for c in during_boot), during_boot


def test_a_reconfigure_that_would_evacuate_onto_the_new_node_waits_for_it():
    from tests.actuator.plans import SLOW_BOOT
    world = FakeCluster(delays=SLOW_BOOT)
    plan = scenario(world)  # rs1's p0 goes to new-1; p6 moves rs3 -> rs2
    ex = executor(world)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    steps = _plan_steps(ex)
    ready_at = steps["launch"].finished_at
    assert steps["move p6"].finished_at < ready_at  # between existing nodes: during the boot
    assert steps["reconfigure"].started_at >= ready_at
    # so rs1's evacuation sent p0 straight to the new node: moved once, not twice
    assert [e for e in world.effects if e[0] == "move" and e[1] == "p0"] == [
        ("move", "p0", RS1, ex.resolve("new-1"))]


def test_abandoned_during_the_boot_every_partition_stays_served_and_the_vm_is_terminated():
    from tests.actuator.plans import SLOW_BOOT, overlap_scenario
    world = FakeCluster(delays=SLOW_BOOT)
    plan = overlap_scenario(world)
    world.inject(launch=("never_ready",))
    ex = executor(world, launch_attempts=1, booting_timeout_s=400)
    ex.submit(plan, "p1")

    def served(_):
        # a partition is never without a server except while one move or split is in flight
        gaps = [p for p, v in world.s["partitions"].items()
                if v["server"] is None and v["moving_to"] is None]
        assert not gaps

    status = run_to_end(ex, world, each_tick=served)
    assert status.state == "abandoned" and "booting" in status.reason
    world.advance(10)  # past the fake's terminate delay
    assert all(n.instance_id.startswith("i-old") for n in world.infra.nodes())
    layout = actual_layout(world)
    assert all(server in (RS1, RS2, RS3) for server in layout.values()), layout
    # the work on existing nodes done during the boot stays: every partition is served
    assert layout["p1"] == RS3 and layout["p6"] == RS1 and layout["p0"] == RS1
    assert layout["hot.a"] == layout["hot.b"] == RS3 and world.s["servers"][RS2]["profile"] == "write"
    assert not ex.journal.load_plan("p1")["committed"] and world.s["balancer"] is True


def test_a_move_onto_a_new_node_starts_once_it_registers_and_is_undone_if_another_launch_fails():
    from decision.model import Action
    from tests.actuator.plans import make_plan
    world = FakeCluster()
    world.add_server(RS1, partitions=("p0", "p1"))
    world.add_server(RS2, partitions=("p2", "p3"))
    plan = make_plan([Action("launch", "scale out", node="new-1", profile="read"),
                      Action("launch", "scale out", node="new-2", profile="read"),
                      Action("move", "to new", partition="p0", source=RS1, target="new-1"),
                      Action("move", "to new", partition="p2", source=RS2, target="new-2")],
                     {RS1: ("default", ["p1"]), RS2: ("default", ["p3"]),
                      "new-1": ("read", ["p0"]), "new-2": ("read", ["p2"])})
    world.inject(launch=("ok", "never_ready"))  # new-1 boots; new-2 never does
    ex = executor(world, launch_attempts=1, booting_timeout_s=200)
    ex.submit(plan, "p1")
    status = run_to_end(ex, world)
    assert status.state == "abandoned" and "new-2" in status.reason
    new1 = ex.steps[0].server_id
    # p0 went to new-1 while new-2 was still booting, and came back when the plan was abandoned
    assert [e for e in world.effects if e[0] == "move"] == [("move", "p0", RS1, new1), ("move", "p0", new1, RS1)]
    world.advance(10)
    assert all(n.instance_id.startswith("i-old") for n in world.infra.nodes())
    assert actual_layout(world) == {"p0": RS1, "p1": RS1, "p2": RS2, "p3": RS2}


def test_a_balancer_that_will_not_switch_back_on_is_reported_and_the_plan_still_ends():
    class StuckBalancer(type(FakeCluster().datastore)):
        def set_balancer(self, enabled):
            from actuator.drivers import DriverError
            if enabled:
                raise DriverError("master unreachable")
            return super().set_balancer(enabled)

    world = FakeCluster()
    plan = fill_new_node(world)
    ex = executor(world, datastore=StuckBalancer(world))
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert any("could not switch the balancer back on: master unreachable" in e["message"]
               for e in ex.journal.events("p1", level="error"))


def _extension(source: str, partition: str, node: str = "new-1") -> Plan:
    """What the policy asks while a scale-out runs: one more node, one busy partition onto it
    (the policy numbers its own placeholders from new-1: the executor renames them)."""
    A = Action
    return make_plan([A("launch", "scale out (extending)", node=node, profile="read"),
                      A("move", "onto the extension", partition=partition, source=source,
                        target=node)],
                     {source: ("default", []), node: ("read", [partition])})


def test_a_plan_in_flight_is_extended_with_more_launches_while_it_launches():
    world = FakeCluster(delays=SLOW_BOOT)
    plan = fill_new_node(world)
    ex = executor(world)
    assert ex.extend(_extension(RS1, "p2")) == 0  # no plan in flight: nothing to extend
    ex.submit(plan, "p1")
    ex.tick()
    world.advance(10.0)
    ex.tick()  # the first node is booting
    # a move of a partition the plan already moves is left out; the launch and p2's move stay
    assert ex.extend(_extension(RS1, "p0")) == 1
    assert ex.extend(_extension(RS1, "p2")) == 2
    status = run_to_end(ex, world)
    assert status.state == "done" and len(ops(world, "launch")) == 3
    layout = actual_layout(world)
    new_servers = {ex.resolve(f"new-{k}") for k in (1, 2, 3)}
    assert None not in new_servers and len(new_servers) == 3
    assert layout["p2"] in new_servers and layout["p2"] != ex.resolve("new-1")
    assert layout["p0"] == layout["p1"] == ex.resolve("new-1")  # the plan's own moves as planned


def test_an_extension_may_move_on_a_partition_whose_move_has_ended():
    # While new-1 boots, p2's move between serving nodes lands on rs2 (a node it may leave
    # hot); an extension moves it on to rs1 and the plan ends with p2 there: verify checks
    # its last move, not the first one (which would move it back and forth). A partition
    # whose move still waits for its node stays the plan's, unless the extension sends it to
    # a node serving now (test_a_move_waiting_for_a_booting_node_gives_way_to_one_onto_a_serving_node).
    world = FakeCluster(delays=SLOW_BOOT)
    world.add_server(RS1, partitions=("p0", "p1", "p2"))
    world.add_server(RS2, partitions=("p3", "p4", "p5"))
    A = Action
    plan = make_plan([A("launch", "scale out", node="new-1", profile="read"),
                      A("move", "to new", partition="p0", source=RS1, target="new-1"),
                      A("move", "even out", partition="p2", source=RS1, target=RS2)],
                     {RS1: ("default", ["p1"]), RS2: ("default", ["p2", "p3", "p4", "p5"]),
                      "new-1": ("read", ["p0"])})
    ex = executor(world)
    ex.submit(plan, "p1")
    for _ in range(30):
        ex.tick()
        world.advance(1.0)
    assert actual_layout(world)["p2"] == RS2 and ex.status().phase == "launch"
    on = make_plan([A("move", "even out", partition="p2", source=RS2, target=RS1)],
                   {RS1: ("default", ["p1", "p2"])})
    assert ex.extend(on) == 1
    again = _extension(RS1, "p0", node="new-1")
    assert ex.extend(again) == 1  # p0's move still waits for new-1: only the launch is added
    assert run_to_end(ex, world).state == "done"
    layout = actual_layout(world)
    assert layout["p2"] == RS1 and layout["p0"] == ex.resolve("new-1")
    assert len(ops(world, "move")) == 3


def test_a_move_waiting_for_a_booting_node_gives_way_to_one_onto_a_serving_node():
    # p0 and p1 wait for new-1, which boots for minutes, while rs1 is hot. The policy's
    # even-out sends p0 to rs2, serving now: the move waiting for new-1 is cancelled (said in
    # the journal), p0 moves once, to rs2, and the plan still launches new-1 and fills it
    # with p1. The extension's own new node does not take a waiting partition over.
    world = FakeCluster(delays=SLOW_BOOT)
    world.add_server(RS1, partitions=("p0", "p1", "p2"))
    world.add_server(RS2, partitions=("p3",))
    A = Action
    plan = make_plan([A("launch", "scale out", node="new-1", profile="read"),
                      A("move", "to new", partition="p0", source=RS1, target="new-1"),
                      A("move", "to new", partition="p1", source=RS1, target="new-1")],
                     {RS1: ("default", ["p2"]), RS2: ("default", ["p3"]),
                      "new-1": ("read", ["p0", "p1"])})
    ex = executor(world)
    ex.submit(plan, "p1")
    for _ in range(5):
        ex.tick()
        world.advance(1.0)
    assert ex.status().phase == "launch" and ex.resolve("new-1") is None
    assert ex.extend(_extension(RS1, "p1", node="new-1")) == 1  # onto a booting node: stays
    evened = make_plan([A("move", "even out", partition="p0", source=RS1, target=RS2)],
                       {RS2: ("default", ["p0", "p3"])})
    assert ex.extend(evened) == 1
    assert [m.state for m in ex.of("move") if m.partition == "p0"] == ["cancelled", "pending"]
    for _ in range(10):  # a move takes 5 s here, a boot 300 s
        ex.tick()
        world.advance(1.0)
    assert actual_layout(world)["p0"] == RS2  # moved while new-1 still boots
    assert ex.resolve("new-1") is None
    assert run_to_end(ex, world).state == "done"
    layout = actual_layout(world)
    assert layout["p0"] == RS2 and layout["p1"] == ex.resolve("new-1") is not None
    assert [e[1] for e in ops(world, "move")].count("p0") == 1
    events = [e["message"] for e in ex.journal.events("p1")]
    assert any("re-targeted" in m for m in events)


class Killed(Exception):
    """The controller process dying (raised by a journal's on_write hook)."""


def _dies_before(write: str, armed: list[bool]):
    """A journal on_write hook: the process dies just before the first write whose label
    starts with `write`, once `armed` holds anything."""
    def hook(moment: str, _number: int, what: str) -> None:
        if armed and moment == "before" and what.startswith(write):
            raise Killed
    return hook


def test_a_crash_while_re_targeting_leaves_the_waiting_move_whole(tmp_path):
    # The cancelled move and the one replacing it are one journal write: killed before it,
    # the partition still waits for the booting node (not cancelled with nothing in its
    # place); after a restart the same extension re-targets it.
    world = FakeCluster(delays=SLOW_BOOT)
    world.add_server(RS1, partitions=("p0", "p1", "p2"))
    world.add_server(RS2, partitions=("p3",))
    path = tmp_path / "journal.sqlite"
    armed: list[bool] = []
    crash = _dies_before("add ", armed)

    A = Action
    plan = make_plan([A("launch", "scale out", node="new-1", profile="read"),
                      A("move", "to new", partition="p0", source=RS1, target="new-1")],
                     {RS1: ("default", ["p1", "p2"]), RS2: ("default", ["p3"]),
                      "new-1": ("read", ["p0"])})
    ex = executor(world, journal=Journal(path, on_write=crash))
    ex.submit(plan, "p1")
    for _ in range(5):
        ex.tick()
        world.advance(1.0)
    evened = make_plan([A("move", "even out", partition="p0", source=RS1, target=RS2)],
                       {RS2: ("default", ["p0", "p3"])})
    armed.append(True)
    with pytest.raises(Killed):
        ex.extend(evened)
    rows = [r for r in Journal(path, readonly=True).load_steps("p1") if r["op"] == "move"]
    assert [(r["partition"], r["target"], r["state"]) for r in rows] == [("p0", "new-1", "pending")]
    fresh = executor(world, journal=Journal(path))
    fresh.resume()
    assert fresh.extend(evened) == 1
    assert run_to_end(fresh, world).state == "done"
    assert actual_layout(world)["p0"] == RS2
    assert [e[1] for e in ops(world, "move")].count("p0") == 1


def test_an_extension_that_removes_or_comes_after_the_launches_is_refused():
    world = FakeCluster(delays=SLOW_BOOT)
    ex = executor(world)
    ex.submit(fill_new_node(world), "p1")
    ex.tick()
    removal = make_plan([Action("drain", "scale in", node=RS2),
                         Action("terminate", "scale in", node=RS2)], {RS1: ("default", [])})
    assert ex.extend(removal) == 0
    run_to_end(ex, world)
    assert ex.extend(_extension(RS1, "p2")) == 0  # the plan is over
    assert len(ops(world, "launch")) == 1


PACED = {"max_concurrent_moves": 1, "scale_in_move_gap_s": 20}


def _cut_mid_scale_in(world: FakeCluster, journal: Journal | None = None) -> Executor:
    """A paced scale-in of rs1 (five regions to rs2) run until one region has landed and one
    is moving; then the demand turns."""
    plan = _scale_in_of_two_tables(world)
    ex = executor(world, journal=journal, **PACED)
    ex.submit(plan, "p1")
    for _ in range(200):
        ex.tick()
        moves = ex.of("move")
        if any(m.state == "done" for m in moves) and any(m.state == "running" for m in moves):
            return ex
        world.advance(1.0)
    raise AssertionError("the scale-in never had a move landed and one under way")


def test_a_scale_in_cut_short_keeps_its_node_serving_what_it_has_left():
    world = FakeCluster(delays=FakeDelays(move_s=3.0))
    ex = _cut_mid_scale_in(world)
    landed = {m.partition for m in ex.of("move") if m.state != "pending"}
    assert ex.cut_short("demand rose to 9.6 node-loads") == 5  # 3 moves, the drain, the terminate
    assert ex.cut_short("again") == 0  # nothing left to cut
    assert run_to_end(ex, world).state == "done"
    layout = actual_layout(world)
    # the moves under way landed; the regions not started stay on rs1, which still serves
    assert {p for p, s in layout.items() if s == RS2} == landed | {"a3"}
    assert {p for p, s in layout.items() if s == RS1} == {"a0", "a1", "a2", "b0", "b1"} - landed
    moved = [e[1] for e in ops(world, "move")]
    assert sorted(moved) == sorted(landed)  # no region moved twice, none back
    assert not ops(world, "decommission") and not ops(world, "terminate")
    assert RS1 in {s.id for s in world.datastore.servers() if s.state == "active"}
    assert "LOST" not in [e[0] for e in world.effects]
    events = [e["message"] for e in ex.journal.events("p1")]
    assert any(m.startswith("plan cut short: demand rose to 9.6 node-loads") for m in events)


def test_only_a_scale_in_not_yet_removing_a_node_is_cut_short():
    world = FakeCluster(delays=SLOW_BOOT)
    ex = executor(world)
    assert ex.cut_short("no plan") == 0
    ex.submit(fill_new_node(world), "p1")  # a scale-out: its nodes are what the demand needs
    ex.tick()
    assert ex.cut_short("demand rose") == 0
    assert run_to_end(ex, world).state == "done" and len(ops(world, "launch")) == 1

    world = FakeCluster(delays=FakeDelays(move_s=3.0, decommission_s=30.0))
    plan = _scale_in_of_two_tables(world)
    ex = executor(world)
    ex.submit(plan, "p1")
    for _ in range(200):  # until rs1's decommission is asked for: too late to keep it
        ex.tick()
        if ops(world, "decommission"):
            break
        world.advance(1.0)
    assert ex.cut_short("demand rose") == 0
    assert run_to_end(ex, world).state == "done" and len(ops(world, "terminate")) == 1


def test_a_crash_while_cutting_short_leaves_the_scale_in_whole_and_a_cut_survives_a_restart(tmp_path):
    world = FakeCluster(delays=FakeDelays(move_s=3.0))
    path = tmp_path / "journal.sqlite"
    crash = _dies_before("update ", [True])

    ex = _cut_mid_scale_in(world, Journal(path, on_write=crash))
    with pytest.raises(Killed):
        ex.cut_short("demand rose")
    steps = Journal(path, readonly=True).load_steps("p1")
    assert not [r for r in steps if r["state"] == "cancelled"]  # all or nothing: nothing
    fresh = executor(world, journal=Journal(path), **PACED)
    fresh.resume()
    assert fresh.cut_short("demand rose") > 0
    again = executor(world, journal=Journal(path), **PACED)
    again.resume()  # restarted after the cut: the cut steps stay cancelled
    assert run_to_end(again, world).state == "done"
    assert not ops(world, "terminate") and RS1 in set(actual_layout(world).values())
