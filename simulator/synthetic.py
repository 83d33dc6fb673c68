"""Synthetic cluster snapshots for benchmarks and tests: Zipf-skewed partition loads placed at
random (`zipf_cluster`), and the cluster after a plan ran to completion (`carry_out`).

Used by bench/bench_plan.py, bench/bench_output_scale.py and the decision tests (through
tests/fixtures/snapshots.py, which re-exports both), so a benchmark and a test decide on the
same clusters. Deterministic for a seed (numpy's default_rng).
"""
from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from decision.model import ClusterSnapshot, Node, NodeMetrics, Partition, Plan

T0 = datetime(2026, 11, 22, 10, 0, 0, tzinfo=timezone.utc)


def zipf_cluster(nodes: int, partitions_per_node: int, seed: int = 0, exponent: float = 0.8,
                 cpu: float = 0.7, mix: bool = True, taken_at: datetime = T0) -> ClusterSnapshot:
    """A cluster with Zipf-skewed partition loads placed at random (HBase's count-balanced
    round-robin of a shuffled region list), each node at `cpu`. `mix=False` makes every
    partition read_write-like; otherwise each is randomly read-, write-, scan- or mix-heavy."""
    rng = np.random.default_rng(seed)
    n_parts = nodes * partitions_per_node
    loads = 1000.0 / np.arange(1, n_parts + 1) ** exponent
    rng.shuffle(loads)
    if mix:
        kind = rng.integers(0, 4, n_parts)  # 0 read, 1 write, 2 read_write, 3 scan
        shares = np.array([[0.9, 0.1, 0.0], [0.1, 0.9, 0.0], [0.5, 0.5, 0.0], [0.05, 0.05, 0.9]])
        rws = shares[kind] * loads[:, None]
    else:
        rws = np.stack([loads * 0.5, loads * 0.5, np.zeros(n_parts)], axis=1)
    place = rng.permutation(n_parts) % nodes
    node_list = tuple(Node(id=f"rs{i:05d}", profile="default", state="active",
                           metrics=NodeMetrics(cpu=cpu, io_wait=0.01, memory=0.5))
                      for i in range(nodes))
    parts = tuple(Partition(f"r{k:07d}", "usertable", node_list[place[k]].id, float(r), float(w),
                            float(s), 100.0, 1.0)
                  for k, (r, w, s) in enumerate(rws.tolist()))
    return ClusterSnapshot(taken_at=taken_at, nodes=node_list, partitions=parts)


def carry_out(snapshot: ClusterSnapshot, plan: Plan, drift: float = 0.0, seed: int = 0,
              cpu: float | None = None) -> ClusterSnapshot:
    """The cluster after `plan` ran to completion: its assignment becomes the placement,
    launched nodes get ids "launched-<placeholder>", every node is active with the plan's
    profile; partition rates are multiplied by lognormal(0, drift) noise (seeded); node cpu is
    `cpu` or unchanged (new nodes: 0.3)."""
    rng = np.random.default_rng(seed)
    rename = {a.node: f"launched-{a.node}" for a in plan.actions if a.op == "launch"}
    before = {n.id: n for n in snapshot.nodes}
    nodes = []
    for a in plan.assignment:
        old = before.get(a.node)
        metrics = (NodeMetrics(cpu, 0.01, 0.5) if cpu is not None
                   else old.metrics if old is not None else NodeMetrics(0.3, 0.01, 0.5))
        nodes.append(Node(rename.get(a.node, a.node), a.profile, "active", metrics))
    where = {pid: rename.get(a.node, a.node) for a in plan.assignment for pid in a.partitions}
    factor = rng.lognormal(0.0, drift, len(snapshot.partitions)).tolist() if drift else \
        [1.0] * len(snapshot.partitions)
    parts = tuple(Partition(p.id, p.table, where[p.id], p.reads * f, p.writes * f, p.scans * f,
                            p.size_mb, p.locality) for p, f in zip(snapshot.partitions, factor))
    return ClusterSnapshot(snapshot.taken_at, tuple(nodes), parts, snapshot.missing)
