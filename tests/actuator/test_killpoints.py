"""The controller SIGKILLed at every journal write of a plan, then restarted on the same journal
and cluster: the plan must end exactly as an uninterrupted run does — the same effects on the
cluster, each exactly once (no launch, move, restart, compaction, decommission or termination
lost or done twice), the same final layout.

Each run forks a real child process that executes the plan against a file-backed fake cluster
and SIGKILLs itself just before or just after journal write k; a fresh executor in the parent
then resumes from the SQLite journal. Writes are counted on an uninterrupted run first.
"""
from __future__ import annotations

import os
import signal
from collections import Counter
from pathlib import Path

import pytest

from actuator.executor import Executor
from tests.fakes.cluster import FakeCluster
from actuator.journal import Journal
from actuator.settings import ExecutorSettings
from tests.actuator.plans import SLOW_BOOT, actual_layout, overlap_scenario, run_to_end, scenario

SETTINGS = ExecutorSettings(booting_timeout_s=40, launch_backoff_s=5, launch_attempts=2)
# overlap: a 300-s boot during which a reconfigure, a split and moves between existing nodes run
SLOW_SETTINGS = ExecutorSettings(**{**SETTINGS.model_dump(), "booting_timeout_s": 400})


def _cluster(path: Path, case: str) -> FakeCluster:
    return FakeCluster(state_file=path / "cluster.json",
                       **({"delays": SLOW_BOOT} if case == "overlap" else {}))


def _world(path: Path, case: str) -> tuple[FakeCluster, object]:
    world = _cluster(path, case)
    if case == "overlap":
        return world, overlap_scenario(world)
    # drain_only: rs3 was not launched by metctl, so it is drained and left running
    plan = scenario(world, owned_rs3=case != "drain_only")
    if case == "abandon":
        world.inject(launch=("never_ready", "never_ready"))
    return world, plan


def _drive(path: Path, plan, on_write=None, case: str = "complete"
           ) -> tuple[str, Journal, Executor, FakeCluster]:
    """Resume (or submit, as the daemon would when the journal has no plan) and run to the end."""
    world = _cluster(path, case)
    journal = Journal(path / "journal.sqlite", on_write=on_write)
    settings = SLOW_SETTINGS if case == "overlap" else SETTINGS
    ex = Executor(world.infra, world.datastore, settings, world.clock, world.cluster, journal)
    ex.resume()
    if journal.latest() is None:
        ex.submit(plan, "plan-1")
    # the overlap case's 300-s boot in 5-s ticks: the same writes, a fifth of the ticks
    status = run_to_end(ex, world, step_s=5.0 if case == "overlap" else 1.0)
    return status.state, journal, ex, world


def _clean_run(path: Path, case: str, on_write=None):
    _, plan = _world(path, case)
    state, journal, ex, world = _drive(path, plan, on_write, case)
    return state, journal.writes, Counter(world.effects), actual_layout(world)


def _killed_child(path: Path, plan, kill_at: int, when: str, case: str = "complete") -> int:
    pid = os.fork()
    if pid == 0:  # child: run until the chosen journal write, then die hard
        code = 3
        try:
            def hook(moment: str, number: int, _what: str) -> None:
                if number == kill_at and moment == when:
                    os.kill(os.getpid(), signal.SIGKILL)
            _drive(path, plan, on_write=hook, case=case)
            code = 0  # the kill point was never reached
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def _overlap_window(path: Path) -> list[int]:
    """The journal writes of the overlap case made while the new VM boots AND other work
    (reconfigure, split, moves between existing nodes) is in flight, read from the journal
    itself at each write."""
    window: list[int] = []

    def hook(moment: str, number: int, _what: str) -> None:
        if moment != "before" or number < 2:
            return
        journal = Journal(path / "journal.sqlite", readonly=True)
        steps = journal.load_steps("plan-1")
        journal.close()
        launching = any(r["op"] == "launch" and r["state"] != "done" for r in steps)
        other = any(r["op"] != "launch" and r["state"] == "running" for r in steps)
        if launching and other:
            window.append(number)

    _clean_run(path, "overlap", on_write=hook)
    return window


@pytest.mark.parametrize("case", ["complete", "abandon", "drain_only", "overlap"])
def test_sigkill_at_every_journal_write_resumes_exactly_once(tmp_path, case, capsys):
    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    window: list[int] = []
    if case == "overlap":
        (tmp_path / "window").mkdir()
        window = _overlap_window(tmp_path / "window")
        assert len(window) > 10  # the boot and the other work overlap for many writes
    clean_state, writes, clean_effects, clean_layout = _clean_run(clean_dir, case)
    assert clean_state == ("abandoned" if case == "abandon" else "done")
    if case == "drain_only":
        assert ("decommission", "rs3,16020") in clean_effects
        assert not any(e[0] == "terminate" for e in clean_effects)
    assert writes > 20
    results = []
    kill_points = range(1, writes + 1)
    if case == "drain_only":
        # only the writes that differ from `complete`: prepare (where the terminate step is
        # skipped) and drain, terminate, finish — the phases between run the same code
        kill_points = [k for k in kill_points if k <= 5 or k > writes - 8]
    if case == "overlap":
        # the writes made while the VM boots and other work is in flight (the rest of the
        # plan runs the code the `complete` case covers); from just before the window
        kill_points = [k for k in kill_points if min(window) - 1 <= k <= max(window) + 1]
    for k in kill_points:
        for when in ("before", "after"):
            run = tmp_path / f"k{k}-{when}"
            run.mkdir()
            _, plan = _world(run, case)
            status = _killed_child(run, plan, k, when, case)
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (k, when, status)
            state, journal, ex, world = _drive(run, plan, case=case)
            effects = Counter(world.effects)
            balancer_window = (ex.status().plan_id is not None
                               and any("balancer state before the plan is unknown" in e["message"]
                                       for e in journal.events(ex.status().plan_id)))
            expected = clean_effects.copy()
            if balancer_window:
                # killed between switching the balancer off and journaling its previous state:
                # it is left off (metctl keeps control) and the journal says so.
                expected[("balancer", True)] -= 1
                expected += Counter()
            ok = (state == clean_state and effects == expected and actual_layout(world) == clean_layout
                  and not any(e[0] in ("LOST", "restart-with-partitions") for e in world.effects))
            results.append((k, when, ok, balancer_window))
            assert ok, (k, when, state, effects - expected, expected - effects)
    with capsys.disabled():
        windows = sum(r[3] for r in results)
        print(f"\nkill-point matrix [{case}]: {len(results)} kill points ({len(kill_points)} of {writes} "
              "journal writes x before/after), "
              f"{sum(r[2] for r in results)} resumed exactly like the uninterrupted run "
              f"({windows} in the balancer window)")


class _Crash(BaseException):
    """Raised from the journal hook: the executor object is abandoned mid-step, as if killed."""


from hypothesis import HealthCheck, example, given, settings as hsettings, strategies as st  # noqa: E402

from tests.actuator.plans import random_case, resolved_layout  # noqa: E402


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), kill=st.floats(0, 1), when=st.sampled_from(["before", "after"]),
       faults=st.booleans())
# CI found it: killed after rs1's reconfigure was journaled done but before a plan move already
# in place was, the resumed run counted that move as still inbound to the new node and
# evacuated rs2 to rs1 instead (two extra moves there and back)
@example(seed=1038, kill=0.40625, when="after", faults=False)
def test_random_plans_crashed_at_a_random_write_end_like_uninterrupted_runs(seed, kill, when, faults):
    def build():
        world = FakeCluster()
        plan = random_case(seed, world)
        if faults:
            parts = sorted(world.s["partitions"])
            world.inject(move_failures={parts[0]: 2}, move_back={parts[-1]: 1})
        return world, plan

    world, plan = build()
    ex = Executor(world.infra, world.datastore, SETTINGS, world.clock, world.cluster, Journal(":memory:"))
    ex.submit(plan, "p")
    clean = run_to_end(ex, world)
    assert clean.state == "done", clean
    clean_effects, writes = Counter(world.effects), ex.journal.writes
    assert actual_layout(world) == resolved_layout(ex, plan)

    k = 1 + int(kill * (writes - 1))
    world, plan = build()
    journal = Journal(":memory:")

    def hook(moment: str, number: int, _what: str) -> None:
        if number == k and moment == when:
            raise _Crash()

    journal.on_write = hook
    first = Executor(world.infra, world.datastore, SETTINGS, world.clock, world.cluster, journal)
    try:
        first.submit(plan, "p")
        run_to_end(first, world)
        raise AssertionError("the crash point was never reached")
    except _Crash:
        pass
    journal.on_write = None
    second = Executor(world.infra, world.datastore, SETTINGS, world.clock, world.cluster, journal)
    second.resume()
    if journal.latest() is None:
        second.submit(plan, "p")
    status = run_to_end(second, world)
    expected = clean_effects.copy()
    if any("balancer state before the plan is unknown" in e["message"] for e in journal.events("p")):
        expected[("balancer", True)] -= 1
        expected += Counter()
    assert status.state == "done" and Counter(world.effects) == expected, (k, when)
    assert actual_layout(world) == resolved_layout(second, plan)


def _crash_run(build, k: int, when: str, settings=SETTINGS, resume_settings=None):
    """Run the plan, 'kill' the executor at journal write k (in process: the executor object is
    dropped mid-step), then resume with a fresh one on the same journal and cluster."""
    world, plan = build()
    journal = Journal(":memory:")

    def hook(moment: str, number: int, _what: str) -> None:
        if number == k and moment == when:
            raise _Crash()

    journal.on_write = hook
    try:
        first = Executor(world.infra, world.datastore, settings, world.clock, world.cluster, journal)
        first.submit(plan, "p")
        run_to_end(first, world)
        return None  # k beyond this run's writes
    except _Crash:
        pass
    journal.on_write = None
    second = Executor(world.infra, world.datastore, resume_settings or settings, world.clock, world.cluster,
                      journal)
    second.resume()
    if journal.latest() is None:
        second.submit(plan, "p")
    return run_to_end(second, world), world, second, journal


def test_a_plan_that_stops_on_a_failing_move_stops_the_same_way_after_a_crash_at_any_write(capsys):
    def build():
        world = FakeCluster()
        plan = scenario(world)
        world.inject(move_failures={"p6": 99})
        return world, plan

    world, plan = build()
    ex = Executor(world.infra, world.datastore, SETTINGS, world.clock, world.cluster, Journal(":memory:"))
    ex.submit(plan, "p")
    clean = run_to_end(ex, world)
    assert clean.state == "failed"
    clean_effects, writes = Counter(world.effects), ex.journal.writes
    checked = 0
    for k in range(1, writes + 1):
        for when in ("before", "after"):
            result = _crash_run(build, k, when)
            assert result is not None
            status, world2, _, journal = result
            expected = clean_effects.copy()
            if any("balancer state before the plan is unknown" in e["message"] for e in journal.events("p")):
                expected[("balancer", True)] -= 1
                expected += Counter()
            assert status.state == "failed" and "p6" in status.reason, (k, when, status)
            assert Counter(world2.effects) == expected, (k, when)
            checked += 1
    with capsys.disabled():
        print(f"\nkill-point matrix [stopped]: {checked} crash points, {checked} stopped exactly like the "
              "uninterrupted run")


def test_rollback_on_resume_at_any_write_leaves_no_new_node_and_every_partition_served(capsys):
    def build():
        world = FakeCluster()
        return world, scenario(world)

    world, plan = build()
    ex = Executor(world.infra, world.datastore, SETTINGS, world.clock, world.cluster, Journal(":memory:"))
    ex.submit(plan, "p")
    run_to_end(ex, world)
    writes = ex.journal.writes
    outcomes: Counter = Counter()
    for k in range(1, writes + 1):
        for when in ("before", "after"):
            status, world2, second, journal = _crash_run(
                build, k, when, resume_settings=ExecutorSettings(**{**SETTINGS.model_dump(), "on_resume": "rollback"}))
            outcomes[status.state] += 1
            for _ in range(20):
                world2.advance(1)
            layout = actual_layout(world2)
            assert all(server is not None for server in layout.values()), (k, when)
            kinds = Counter(e[0] for e in world2.effects)
            assert kinds["LOST"] == 0 and kinds["restart-with-partitions"] == 0
            launches = [e for e in world2.effects if e[0] == "launch"]
            assert len(launches) <= 1, (k, when)  # never launched twice
            row = journal.load_plan("p")
            if status.state == "abandoned":
                assert not row["committed"]
                new = {e[1] for e in launches}
                assert not any(n.instance_id in new for n in world2.infra.nodes()), (k, when)
                new_servers = {f"{world2.s['instances'][i]['address']},16020" for i in new}
                assert not set(layout.values()) & new_servers
            else:
                assert status.state == "done" and row["committed"], (k, when, status)
    with capsys.disabled():
        print(f"\nkill-point matrix [rollback on resume]: {sum(outcomes.values())} crash points: "
              f"{outcomes['abandoned']} rolled back, {outcomes['done']} finished (past the commit point)")
    assert outcomes["abandoned"] > 0 and outcomes["done"] > 0
