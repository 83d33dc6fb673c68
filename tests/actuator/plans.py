"""Plans and fake clusters for the executor tests: a small hand-made scenario and a generator of
random consistent (layout, plan) pairs for the property and kill-point tests. `make_plan`,
`scenario`, `run_to_end` and RS1-RS3 live in tests/fakes/plans.py (the benches use them too)
and are re-exported here."""
from __future__ import annotations

import random
import time

from actuator.executor import ExecutionStatus, Executor
from tests.fakes.cluster import FakeCluster, FakeDelays
from tests.fakes.plans import RS1, RS2, RS3, make_plan, run_to_end, scenario
from decision.model import Action, Plan

__all__ = ["RS1", "RS2", "RS3", "make_plan", "run_to_end", "scenario", "random_case",
           "resolved_layout", "actual_layout", "fill_new_node", "scale_out_plan", "run_real_time",
           "overlap_scenario", "SLOW_BOOT"]


def random_case(seed: int, world: FakeCluster) -> Plan:
    """A random cluster (2-4 servers, 3-12 partitions) and a consistent plan reshaping it."""
    rng = random.Random(seed)
    n_old = rng.randint(2, 4)
    olds = [f"rs{i},16020" for i in range(1, n_old + 1)]
    parts = [f"r{j:02d}" for j in range(rng.randint(3, 12))]
    layout = {p: rng.choice(olds) for p in parts}
    for s in olds:
        world.add_server(s, partitions=tuple(p for p in parts if layout[p] == s))
    n_new = rng.randint(0, 2)
    news = [f"new-{k}" for k in range(1, n_new + 1)]
    leaving = set(rng.sample(olds, rng.randint(0, min(1, n_old - 1))))
    keep = [s for s in olds if s not in leaving]
    targets = keep + news
    target_of = {p: rng.choice(targets) for p in parts}
    profiles = ("read", "write", "scan", "read_write")
    actions: list[Action] = [Action("launch", "scale out", node=n, profile=rng.choice(profiles)) for n in news]
    prof: dict[str, str] = {n: a.profile for n, a in zip(news, actions)}
    for s in keep:
        if rng.random() < 0.5:
            prof[s] = rng.choice(profiles)
            actions.append(Action("reconfigure", "profile", node=s, profile=prof[s], from_profile="default"))
        else:
            prof[s] = "default"
    moves = [p for p in parts if target_of[p] != layout[p]]
    actions += [Action("move", "place", partition=p, source=layout[p], target=target_of[p]) for p in moves]
    actions += [Action("compact", "locality", node=target_of[p], partition=p) for p in moves[:2]]
    for s in sorted(leaving):
        actions += [Action("drain", "scale in", node=s), Action("terminate", "scale in", node=s)]
    assignment = {t: (prof[t], [p for p in parts if target_of[p] == t]) for t in targets}
    return make_plan(actions, assignment)


def resolved_layout(ex: Executor, plan: Plan) -> dict[str, str]:
    """partition -> server the plan's assignment wants, with placeholders resolved."""
    want = {}
    for a in plan.assignment:
        server = ex.resolve(a.node)
        for p in a.partitions:
            want[p] = server
    return want


def actual_layout(world: FakeCluster) -> dict[str, str | None]:
    return {p: v["server"] for p, v in world.s["partitions"].items()}


def fill_new_node(world: FakeCluster) -> Plan:
    """Scale out by one node that takes two partitions from each of rs1 and rs2."""
    world.add_server(RS1, partitions=("p0", "p1", "p2"))
    world.add_server(RS2, partitions=("p3", "p4", "p5"))
    A = Action
    actions = [A("launch", "scale out", node="new-1", profile="read")]
    actions += [A("move", "to new", partition=p, source=RS1, target="new-1") for p in ("p0", "p1")]
    actions += [A("move", "to new", partition=p, source=RS2, target="new-1") for p in ("p3", "p4")]
    return make_plan(actions, {RS1: ("default", ["p2"]), RS2: ("default", ["p5"]),
                               "new-1": ("read", ["p0", "p1", "p3", "p4"])})


# A cloud-like boot (the simulator's vm_boot_s is 300 s): long enough for everything that
# needs no new node to finish while the VM boots.
SLOW_BOOT = FakeDelays(boot_s=300.0, move_s=5.0)


def overlap_scenario(world: FakeCluster) -> Plan:
    """Scale out by one node while reshaping the existing three: rs2 is reconfigured for writes
    (none of its partitions goes to the new node), p1 and p6 move between existing nodes, a hot
    partition on rs3 is split, and p0 moves onto the new node. Everything but p0's move needs
    no new node, so with SLOW_BOOT it is all done while the new VM boots."""
    world.add_server(RS1, partitions=("p0", "p1", "p2"))
    world.add_server(RS2, partitions=("p3", "p4", "p5"))
    world.add_server(RS3, partitions=("p6", "p7", "hot"))
    A = Action
    actions = [
        A("launch", "scale out", node="new-1", profile="read", cause="scale_out"),
        A("reconfigure", "write group", node=RS2, profile="write", from_profile="default"),
        A("split", "hot partition", node=RS3, partition="hot", cause="hot_partition"),
        A("move", "to read node", partition="p0", source=RS1, target="new-1"),
        A("move", "balance", partition="p1", source=RS1, target=RS3),
        A("move", "balance", partition="p6", source=RS3, target=RS1),
    ]
    assignment = {RS1: ("default", ["p2", "p3", "p6"]), RS2: ("write", ["p4", "p5"]),
                  RS3: ("default", ["p1", "p7", "hot"]), "new-1": ("read", ["p0"])}
    return make_plan(actions, assignment)


def scale_out_plan() -> Plan:
    """One launch and one move onto the new node: the plan the cloud-driver tests carry out."""
    actions = [Action("launch", "scale out", node="new-1", profile="read"),
               Action("move", "to new", partition="p0", source="rs1,16020", target="new-1")]
    return make_plan(actions, {"rs1,16020": ("default", ["p1"]), "new-1": ("read", ["p0"])})


def run_real_time(ex: Executor, limit_s: float = 60.0, interval_s: float = 0.05) -> ExecutionStatus:
    """Tick a real-time executor until its plan ends or `limit_s` passes (a bound, not a timing)."""
    deadline = time.monotonic() + limit_s
    status = ex.tick()
    while status.state == "running" and time.monotonic() < deadline:
        time.sleep(interval_s)
        status = ex.tick()
    return status
