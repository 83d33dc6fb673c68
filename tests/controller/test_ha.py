"""Leader election and fencing: the fence's rules with a fake clock, running alone, settings,
an unreachable ZooKeeper. Two contenders on a real ZooKeeper: tests/integration/test_ha_zookeeper.py."""
from __future__ import annotations

import threading

import pytest
from pydantic import ValidationError

from controller.ha import Fence, HASettings, Leadership, NotLeader


class FakeClock:
    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


# ---- the fence ---------------------------------------------------------------------------
def test_fence_leads_only_after_acquiring():
    fence = Fence(lease_s=1.0)
    assert not fence.is_leader(0.0)
    fence.acquired(0.0)
    assert fence.is_leader(0.5)


def test_fence_lease_expires_without_a_fresh_round_trip():
    # a process frozen past its lease must not act when it wakes, whatever kazoo says yet
    fence = Fence(lease_s=1.0)
    fence.acquired(10.0)
    assert fence.is_leader(10.99)
    assert not fence.is_leader(11.0)
    assert "lease expired" in fence.why_not(11.0)
    assert fence.confirmed(11.2, fence.epoch())
    assert fence.is_leader(12.1)


def test_fence_suspended_session_stops_acting_at_once_and_a_new_proof_restores():
    fence = Fence(lease_s=5.0)
    fence.acquired(0.0)
    before = fence.epoch()
    fence.suspended()
    assert not fence.is_leader(0.1)
    assert fence.why_not(0.1) == "ZooKeeper session suspended"
    # a round trip sent before the suspension proves nothing
    assert not fence.confirmed(0.05, before)
    assert not fence.is_leader(0.2)
    # one sent after the reconnect that found our znode alive does
    assert fence.confirmed(0.3, fence.epoch())
    assert fence.is_leader(0.4)


def test_fence_lost_session_needs_a_new_lock():
    fence = Fence(lease_s=5.0)
    fence.acquired(0.0)
    fence.lost()
    assert not fence.confirmed(0.1, fence.epoch())  # not holding: a proof cannot restore it
    assert fence.why_not(0.1) == "following"
    fence.acquired(0.2)
    assert fence.is_leader(0.3)


def test_fence_released_is_final():
    fence = Fence(lease_s=5.0)
    fence.acquired(0.0)
    fence.released()
    fence.acquired(0.1)
    assert not fence.is_leader(0.2)
    assert fence.why_not(0.2) == "released (shutting down)"


def test_fence_is_thread_safe_under_concurrent_updates():
    fence = Fence(lease_s=5.0)
    fence.acquired(0.0)

    def flap():
        for _ in range(2000):
            fence.suspended()
            fence.confirmed(1.0, fence.epoch())

    threads = [threading.Thread(target=flap) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    fence.suspended()
    assert not fence.is_leader(1.5)


# ---- running alone ---------------------------------------------------------------------------
def test_without_zookeeper_metctl_runs_alone_and_says_so():
    lead = Leadership(HASettings(), "demo")
    heard = []
    lead.add_listener(lambda leader, why: heard.append((leader, why)))
    lead.start()
    assert lead.alone and lead.is_leader() and lead.may_act()
    assert "running alone" in lead.describe()
    assert heard == [(True, "alone")]


def test_alone_sigterm_release_stops_new_actions():
    lead = Leadership(HASettings(), "demo")
    lead.start()
    with lead.acting():
        lead.request_release()  # SIGTERM during an action: the action finishes …
    assert not lead.may_act()  # … and no new one starts
    with pytest.raises(NotLeader):
        with lead.acting():
            pass


def test_following_instance_refuses_to_act():
    lead = Leadership(HASettings(zookeeper_hosts="127.0.0.1:1"), "demo", clock=FakeClock())
    assert not lead.alone and not lead.may_act()
    assert lead.status() == "following"
    with pytest.raises(NotLeader, match="following"):
        with lead.acting():
            pass


# ---- settings -------------------------------------------------------------------------------
def test_settings_election_path_and_identity():
    s = HASettings(zookeeper_hosts="zk1:2181,zk2:2181", root_znode="/ops/metctl", identity="a")
    assert s.enabled and s.election_path("prod") == "/ops/metctl/prod/leader"
    assert s.resolved_identity() == "a"
    assert ":" in HASettings().resolved_identity()  # hostname:pid by default
    assert HASettings(root_znode="/").election_path("c") == "/c/leader"


@pytest.mark.parametrize("field,value", [
    ("root_znode", "metctl"), ("root_znode", "/metctl/"), ("session_timeout_s", 0),
    ("lease_fraction", 1.0), ("lease_fraction", 0), ("unknown", 1),
])
def test_settings_refuse_bad_values(field, value):
    with pytest.raises(ValidationError):
        HASettings(**{field: value})


def test_lease_is_a_fraction_of_the_session_timeout():
    lead = Leadership(HASettings(zookeeper_hosts="x:1", session_timeout_s=4, lease_fraction=0.25),
                      "c")
    assert lead.fence.lease_s == 1.0


# ---- no ZooKeeper to reach ------------------------------------------------------------------


@pytest.mark.integration
def test_unreachable_zookeeper_is_a_connection_error():
    lead = Leadership(HASettings(zookeeper_hosts="127.0.0.1:1", connect_timeout_s=0.5), "c")
    with pytest.raises(ConnectionError, match="cannot reach ZooKeeper"):
        lead.start()


# ---- the executor behind the fence (in-package fake cluster, fake time) -----------------------
from actuator.executor import Executor  # noqa: E402
from tests.fakes.cluster import FakeCluster  # noqa: E402
from actuator.journal import Journal  # noqa: E402
from actuator.settings import ExecutorSettings  # noqa: E402
from controller.ha import FencedExecutor, fence_drivers  # noqa: E402
from tests.actuator.plans import scenario  # noqa: E402


def fenced(world: FakeCluster, journal: Journal, after_tick=None):
    lead = Leadership(HASettings(), "demo")
    lead.start()
    ex = Executor(*fence_drivers(world.infra, world.datastore, lead), ExecutorSettings(), world.clock, world.cluster,
                  journal)
    return lead, FencedExecutor(ex, lead, after_tick)


def tick_until(fx: FencedExecutor, world: FakeCluster, done, limit: int = 5000):
    for _ in range(limit):
        status = fx.tick()
        if done(status):
            return status
        world.advance(1.0)
    raise AssertionError("never got there")


def test_fenced_executor_stops_touching_the_cluster_and_a_new_leader_finishes_from_the_journal():
    world, journal = FakeCluster(), Journal(":memory:")
    plan = scenario(world)
    first, fx1 = fenced(world, journal)
    fx1.submit(plan, "p1")
    tick_until(fx1, world, lambda s: s.actions_done >= 2)
    first.request_release()  # SIGTERM (or fenced): no tick may touch the cluster any more
    effects, events = list(world.effects), journal.events("p1", limit=1000)
    for _ in range(50):
        world.advance(1.0)
        assert fx1.tick().state == "running"
    assert world.effects == effects and journal.events("p1", limit=1000) == events
    with pytest.raises(NotLeader):
        fx1.submit(plan, "p2")
    # the next leader: a fresh executor on the same journal learns the plan is in flight
    second, fx2 = fenced(world, journal)
    assert fx2.busy
    status = tick_until(fx2, world, lambda s: not fx2.busy)
    assert status.state == "done" and status.actions_done == len(plan.actions)
    launches = [e for e in world.effects if e[0] == "launch"]
    assert len(launches) == 1  # nothing done twice across the hand-over


def test_fenced_executor_reports_each_tick():
    world, journal = FakeCluster(), Journal(":memory:")
    seen = []
    _, fx = fenced(world, journal, after_tick=seen.append)
    fx.submit(scenario(world), "p1")
    tick_until(fx, world, lambda s: s.state == "done")
    assert seen and seen[-1].state == "done"


def test_exit_waits_for_the_action_in_flight():
    lead = Leadership(HASettings(), "demo")
    lead.start()
    finished = []
    with pytest.raises(SystemExit) as exited:
        with lead.acting():
            lead.request_release()
            lead.exit_when_idle(143)  # SIGTERM mid-action: no exit yet …
            finished.append(True)  # … the action runs to its end
    assert finished == [True] and exited.value.code == 143
    idle = Leadership(HASettings(), "demo")
    idle.start()
    with pytest.raises(SystemExit):
        idle.exit_when_idle(143)  # nothing in flight: at once


def test_leadership_lost_in_the_middle_of_a_tick_stops_the_next_driver_call():
    from controller.ha import FencedDriver

    world, journal = FakeCluster(), Journal(":memory:")
    plan = scenario(world)
    lead, fx = fenced(world, journal)
    assert isinstance(fx.executor.infra, FencedDriver) and isinstance(fx.executor.ds, FencedDriver)
    # the fence closes right after the first partition move: in the same tick, more moves
    # (and everything after) must be refused
    real_move = fx.executor.ds._driver.move_partition
    calls, effects_then = [], []

    def move_then_lose_leadership(*args):
        calls.append(args)
        real_move(*args)
        effects_then.append(len(world.effects))
        lead.fence.released()

    fx.executor.ds._driver.move_partition = move_then_lose_leadership
    fx.submit(plan, "p1")
    for _ in range(300):
        fx.tick()
        world.advance(1.0)
    assert len(calls) == 1 and len(world.effects) == effects_then[0]
    assert fx.executor.ds.partitions()  # reads still pass


def test_an_executor_built_with_drivers_outside_the_fence_is_refused():
    world, journal = FakeCluster(), Journal(":memory:")
    lead = Leadership(HASettings(), "demo")
    lead.start()
    bare = Executor(world.infra, world.datastore, ExecutorSettings(), world.clock, world.cluster, journal)
    with pytest.raises(TypeError, match="not fenced"):
        FencedExecutor(bare, lead)
