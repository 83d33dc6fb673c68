"""Executor cost per plan on the in-package fake cluster: wall time per tick and per plan,
journal writes, for plans of growing size (in-memory journal, as the simulator uses, and a
file journal with fsync, as the daemon uses). Prints figures; asserts nothing.

    .venv/bin/python bench/bench_executor.py
"""
from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from actuator.executor import Executor  # noqa: E402
from tests.fakes.cluster import FakeCluster, FakeDelays  # noqa: E402
from tests.fakes.plans import make_plan  # noqa: E402
from actuator.journal import Journal  # noqa: E402
from actuator.settings import ExecutorSettings  # noqa: E402
from decision.model import Action  # noqa: E402


def build(n_servers: int, n_parts: int, n_new: int, seed: int = 1):
    rng = random.Random(seed)
    world = FakeCluster(delays=FakeDelays(move_s=1.0, restart_s=5.0, compaction_s=5.0))
    olds = [f"rs{i},16020" for i in range(n_servers)]
    parts = [f"r{j:05d}" for j in range(n_parts)]
    layout = {p: olds[j % n_servers] for j, p in enumerate(parts)}
    for s in olds:
        world.add_server(s, partitions=tuple(p for p in parts if layout[p] == s))
    news = [f"new-{k + 1}" for k in range(n_new)]
    targets = olds + news
    target = {p: rng.choice(targets) for p in parts}
    actions = [Action("launch", "bench", node=n, profile="read") for n in news]
    actions += [Action("reconfigure", "bench", node=s, profile="write", from_profile="default") for s in olds[:2]]
    actions += [Action("move", "bench", partition=p, source=layout[p], target=target[p])
                for p in parts if target[p] != layout[p]]
    assignment = {t: ("read" if t in news else "write" if t in olds[:2] else "default",
                      [p for p in parts if target[p] == t]) for t in targets}
    return world, make_plan(actions, assignment)


def run(n_servers: int, n_parts: int, n_new: int, journal_file: bool) -> None:
    world, plan = build(n_servers, n_parts, n_new)
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "j.sqlite" if journal_file else ":memory:")
        ex = Executor(world.infra, world.datastore, ExecutorSettings(max_concurrent_moves=4), world.clock,
                      world.cluster, journal)
        t0 = time.perf_counter()
        ex.submit(plan, "bench")
        ticks, status = 0, ex.tick()
        while status.state == "running":
            world.advance(1.0)
            status = ex.tick()
            ticks += 1
        wall = time.perf_counter() - t0
        moves = sum(a.op == "move" for a in plan.actions)
        print(f"{n_servers:>3} servers {n_parts:>5} partitions {moves:>5} moves {n_new} new  "
              f"{'file  ' if journal_file else 'memory'} journal: {status.state}, {ticks:>5} ticks, "
              f"{journal.writes:>6} writes, {wall:7.2f} s wall, {1e3 * wall / max(ticks, 1):6.2f} ms/tick, "
              f"{world.clock():7.0f} s simulated")


if __name__ == "__main__":
    for size in ((4, 30, 1), (8, 200, 2), (16, 1000, 4)):
        run(*size, journal_file=False)
    run(8, 200, 2, journal_file=True)
