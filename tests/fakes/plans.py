"""Hand-made plans for the executor and the fake cluster (tests/fakes/cluster.py): a Plan
from a list of actions and a target assignment (`make_plan`), the three-server reshaping plan
(`scenario`), ticking a plan to its end on fake time (`run_to_end`), and a real executor's
journal of that plan (`write_journal`).

Used by the executor tests (through tests/actuator/plans.py), the `metctl status` tests and the
benches (bench/bench_executor.py, bench/bench_output_scale.py), so they run the same plans.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from actuator.executor import ExecutionStatus, Executor
from tests.fakes.cluster import FakeCluster
from actuator.journal import Journal
from actuator.settings import ExecutorSettings
from decision.model import (
    Action, DecisionMemory, Health, NodeAssignment, Plan, Sizing, Summary,
)


def make_plan(actions: list[Action], assignment: Mapping[str, tuple[str, list[str]]]) -> Plan:
    """A Plan carrying `actions` toward `assignment` (node -> (profile, partitions)); sizing and
    summary are counted from the actions, health is empty (no decision was made)."""
    launches = sum(a.op == "launch" for a in actions)
    terms = sum(a.op == "terminate" for a in actions)
    return Plan(
        policy="met", health=Health(nodes=(), suboptimal=0.0, remove=False, healthy=False),
        sizing=Sizing(current=len(assignment) - launches + terms, target=len(assignment), delta=launches - terms, step=1),
        groups=(),
        assignment=tuple(NodeAssignment(node=n, profile=p, partitions=tuple(ps), load=0.0)
                         for n, (p, ps) in assignment.items()),
        actions=tuple(actions),
        summary=Summary(moves=sum(a.op == "move" for a in actions),
                        reconfigurations=sum(a.op == "reconfigure" for a in actions),
                        launches=launches, terminations=terms, max_load_ratio=1.0),
        memory=DecisionMemory())


RS1, RS2, RS3 = "rs1,16020", "rs2,16020", "rs3,16020"


def scenario(world: FakeCluster, *, owned_rs3: bool = True) -> Plan:
    """Three servers; the plan adds a read node, reconfigures rs1 for writes, moves partitions
    (two toward the new node from different sources), compacts one and removes rs3."""
    world.add_server(RS1, partitions=("p0", "p1", "p2"))
    world.add_server(RS2, partitions=("p3", "p4", "p5"))
    world.add_server(RS3, partitions=("p6", "p7"), owned=owned_rs3)
    A = Action
    actions = [
        A("launch", "scale out", node="new-1", profile="read", cause="scale_out"),
        A("reconfigure", "write group", node=RS1, profile="write", from_profile="default"),
        A("move", "to read node", partition="p0", source=RS1, target="new-1"),
        A("move", "to read node", partition="p3", source=RS2, target="new-1"),
        A("move", "balance", partition="p6", source=RS3, target=RS2),
        A("move", "balance", partition="p7", source=RS3, target=RS1),
        A("compact", "locality", node="new-1", partition="p0", cause="locality"),
        A("drain", "scale in", node=RS3), A("terminate", "scale in", node=RS3),
    ]
    assignment = {RS1: ("write", ["p1", "p2", "p7"]), RS2: ("default", ["p4", "p5", "p6"]),
                  "new-1": ("read", ["p0", "p3"])}
    return make_plan(actions, assignment)


def run_to_end(ex: Executor, world: FakeCluster, *, max_ticks: int = 5000, step_s: float = 1.0,
               each_tick=None) -> ExecutionStatus:
    """Tick `ex` until its plan ends, advancing the fake clock `step_s` per tick; AssertionError
    if it still runs after `max_ticks`."""
    status = ex.tick()
    for _ in range(max_ticks):
        if status.state != "running":
            return status
        if each_tick is not None:
            each_tick(status)
        world.advance(step_s)
        status = ex.tick()
    raise AssertionError(f"plan still running after {max_ticks} ticks: {status}")


def write_journal(path: str | Path, *, fail_move: bool, finish: bool = True) -> Executor:
    """A journal at `path` written by the real executor carrying out `scenario` on a fake
    cluster as plan "plan-7": with `fail_move` the move of p6 keeps failing (the plan stops);
    without `finish` only 20 ticks run (the plan is still in flight). The journal is closed."""
    world = FakeCluster()
    plan = scenario(world)
    if fail_move:
        world.inject(move_failures={"p6": 99})
    ex = Executor(world.infra, world.datastore, ExecutorSettings(datastore_attempts=2, datastore_backoff_s=1),
                  world.clock, world.cluster, Journal(path))
    ex.submit(plan, "plan-7")
    if finish:
        run_to_end(ex, world)
    else:
        for _ in range(20):
            ex.tick()
            world.advance(1)
    ex.journal.close()
    return ex
