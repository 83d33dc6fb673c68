"""Protection honoured by the executor for a plan submitted *before* the protection: the
protected node is never restarted, drained or terminated; its steps are skipped with the
reason in the journal; the rest of the plan runs."""
from __future__ import annotations

from actuator.executor import Executor
from tests.fakes.cluster import FakeCluster
from actuator.journal import Journal
from actuator.settings import ExecutorSettings
from tests.actuator.plans import RS1, RS3, run_to_end, scenario


def executor(world: FakeCluster) -> Executor:
    return Executor(world.infra, world.datastore, ExecutorSettings(), world.clock, world.cluster,
                    Journal(":memory:"))


def test_nodes_protected_after_submission_are_not_restarted_drained_or_terminated():
    world = FakeCluster()
    plan = scenario(world)  # restarts rs1 (reconfigure), drains and terminates rs3
    ex = executor(world)
    ex.submit(plan, "p1")
    protection: dict[str, str] = {}
    ex.protected = lambda: protection
    ex.tick()  # the plan is under way …
    protection.update({RS1: "protected by ops: disk check", RS3: "protected by ops: keep"})
    status = run_to_end(ex, world)  # … when the operator protects rs1 and rs3
    assert status.state == "done"
    kinds = [e[:2] for e in world.effects]
    assert ("restart", RS1) not in kinds
    assert not [e for e in world.effects if e[0] in ("decommission", "terminate")]
    steps = {(s["op"], s.get("node")): s for s in ex.journal.load_steps("p1") if s.get("parent") is None}
    for key in (("reconfigure", RS1), ("drain", RS3), ("terminate", RS3)):
        assert steps[key]["state"] == "skipped" and "protected" in steps[key]["note"], steps[key]
    # rs3 keeps serving what only its drain would have moved off
    on_rs3 = [p for p, v in world.s["partitions"].items() if v["server"] == RS3]
    assert on_rs3
    # the rest of the plan ran: the new node launched and filled
    assert [e for e in world.effects if e[0] == "launch"]


def test_without_protection_the_same_plan_restarts_and_terminates():
    world = FakeCluster()
    plan = scenario(world)
    ex = executor(world)
    ex.submit(plan, "p1")
    assert run_to_end(ex, world).state == "done"
    assert ("restart", RS1) in [e[:2] for e in world.effects]
    assert [e for e in world.effects if e[0] == "terminate"]
