"""What the console and the events cost the control loop: the time to build the console's
cluster view when a decision reads a snapshot (in the loop's thread), the size of
`GET /v1/cluster`, and the time to record one event with a webhook and an open stream
listening (the loop only hands over). Zipf clusters from simulator.synthetic; medians of 5.

    python bench/bench_console.py
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.console.view import ClusterView  # noqa: E402
from controller.events import EventStore  # noqa: E402
from decision import decide  # noqa: E402
from decision.model import DecisionMemory  # noqa: E402
from decision.policy import PolicyConfig  # noqa: E402
from simulator.synthetic import zipf_cluster  # noqa: E402


def median_s(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    policy = PolicyConfig()
    print("| nodes | partitions | decide (s) | console view (s) | view / decide | /v1/cluster (KiB) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for nodes, per_node in ((20, 50), (100, 100), (1000, 100)):
        snap = zipf_cluster(nodes, per_node, seed=1)
        plan = decide(snap, policy, DecisionMemory())
        view = ClusterView(policy)
        t_decide = median_s(lambda: decide(snap, policy, DecisionMemory()), 3)
        t_view = median_s(lambda: view.on_decision(0.0, plan, None, snap))
        size = len(json.dumps(view.document([]), default=str)) / 1024
        print(f"| {nodes} | {nodes * per_node:,} | {t_decide:.3f} | {t_view:.3f} | "
              f"{t_view / t_decide:.0%} | {size:,.0f} |")

    store = EventStore(keep=1000)
    handed: list = []
    store.listeners += [handed.append, lambda e: None]  # a webhook's and a stream's hand-over
    n = 20_000
    t0 = time.perf_counter()
    for i in range(n):
        store.append("action", f"move r{i} rs1 -> rs2", "moves off an overloaded node", "done",
                     plan_id="met-0001-1", op="move", duration_s=1.0)
    per_event_us = (time.perf_counter() - t0) / n * 1e6
    print(f"\nrecording one event with two listeners: {per_event_us:.1f} µs "
          f"({n:,} events, store bounded at 1,000)")


if __name__ == "__main__":
    main()
