"""Where regions go when the store itself chooses: the initial placement (MET §6.4's manual
balance, or HBase's random one), HBase's stock balancer (even region counts, regions chosen at
random, MET §2.1), and the least-loaded server for a region that must reopen elsewhere."""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np


def initial_placement(mode: str, weight: np.ndarray, nodes: int,
                      rng: np.random.Generator) -> list[tuple[int, int]]:
    """(region, node) for every region, in the order they open. random: a shuffled round robin.
    balanced ("manually balanced", MET §6.4): LPT on the expected requests `weight`, at most
    ceil(n/k) regions a node, so hot regions spread out."""
    n = len(weight)
    if mode == "random":
        order = rng.permutation(n)
        return [(int(r), j % nodes) for j, r in enumerate(order)]
    cap = math.ceil(n / nodes)
    load = np.zeros(nodes)
    count = np.zeros(nodes, dtype=int)
    out = []
    for r in np.argsort(-weight, kind="stable"):
        cand = np.where(count < cap)[0]
        j = cand[np.argmin(load[cand])]
        load[j] += weight[r]
        count[j] += 1
        out.append((int(r), int(j)))
    return out


# How many operations per second one closed-loop client thread stands for when an open-loop
# table is weighed against closed ones in the balanced initial placement: a YCSB thread waiting
# ~5 ms per operation. Assumption (it only orders regions; no figure depends on it otherwise).
OPEN_OPS_PER_THREAD = 200.0


def expected_threads(threads: np.ndarray, target: np.ndarray, open_loop: np.ndarray,
                     mean_rate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per workload, the weight of its table in the balanced placement as (threads, cap
    factor): closed loop its threads and min(1, YCSB -target / 10,000); open loop its mean
    offered rate in threads (OPEN_OPS_PER_THREAD) and 1."""
    cap = np.minimum(1.0, target / 1e4)
    return (np.where(open_loop, mean_rate / OPEN_OPS_PER_THREAD, threads),
            np.where(open_loop, 1.0, cap))


def fewest_regions(assigned: np.ndarray, candidates: Sequence[int]) -> int:
    """The candidate node the store reports the fewest regions on (the first on a tie)."""
    counts = [int(np.sum(assigned == o)) for o in candidates]
    return candidates[int(np.argmin(counts))]


def balance(assigned: Callable[[], np.ndarray], live: list[int], rng: np.random.Generator,
            move: Callable[[int, int], None]) -> int:
    """HBase's stock balancer over the live servers: while a server holds more than its even
    share and another fewer, move a random region of a random overfull server to a random
    underfull one. `assigned()` reads the store's current assignment (a move changes it);
    returns the moves asked for."""
    if len(live) < 2:
        return 0
    placed = np.where(assigned() >= 0)[0]
    counts = {k: int(np.sum(assigned()[placed] == k)) for k in live}
    floor = len(placed) // len(live)
    ceil = floor + (1 if len(placed) % len(live) else 0)
    moved = 0
    while True:
        over = [k for k in live if counts[k] > ceil] or [k for k in live if counts[k] > floor]
        under = [k for k in live if counts[k] < floor]
        if not under or not over:
            break
        src = over[int(rng.integers(len(over)))]
        regs = np.where(assigned() == src)[0]
        r = int(regs[int(rng.integers(len(regs)))])
        dst = under[int(rng.integers(len(under)))]
        move(r, dst)
        counts[src] -= 1
        counts[dst] += 1
        moved += 1
    return moved
