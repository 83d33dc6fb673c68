"""Scoring across runs: figures over several seeds (mean, min–max, per seed) and the fixed-size
frontier (an elastic policy is worth something only if it beats a fixed cluster of the same
cost).

Frontier: the static policy is run at several cluster sizes; each size is a point (node-minutes,
operations). The frontier is the upper concave hull of those points, interpolated linearly
between them (a mix of two fixed sizes over time costs and serves in proportion, so any point on
a segment between two sizes is reachable). A policy's frontier ratio = its operations / the
hull's operations at its node-minutes: above 1 it did better than any fixed cluster of its cost.
Below the smallest size the hull is scaled from the origin (no cluster, no operations); above
the largest it stays flat (more machines than the largest tried buy nothing we measured).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def upper_hull(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Upper concave hull of (x, y) points, left to right (Andrew's monotone chain)."""
    best_at: dict[float, float] = {}
    for x, y in points:  # one point per x: the best (two runs of the same cost)
        best_at[float(x)] = max(float(y), best_at.get(float(x), float("-inf")))
    pts = sorted(best_at.items())
    hull: list[tuple[float, float]] = []
    for p in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) >= 0:
                hull.pop()  # the middle point lies on or under the chord: not on the upper hull
            else:
                break
        hull.append(p)
    # keep only the rising part: a bigger fixed cluster that serves less is never the frontier
    best = 0
    for i, (_, y) in enumerate(hull):
        if y >= hull[best][1]:
            best = i
    return hull[: best + 1]


def hull_at(hull: Sequence[tuple[float, float]], x: float) -> float:
    if not hull:
        raise ValueError("empty frontier")
    if x <= hull[0][0]:
        return hull[0][1] * max(x, 0.0) / hull[0][0] if hull[0][0] > 0 else hull[0][1]
    if x >= hull[-1][0]:
        return hull[-1][1]
    xs = np.array([p[0] for p in hull])
    ys = np.array([p[1] for p in hull])
    return float(np.interp(x, xs, ys))


def frontier_ratio(hull: Sequence[tuple[float, float]], node_minutes: float, ops: float) -> float:
    expected = hull_at(hull, node_minutes)
    return ops / expected if expected > 0 else float("nan")


def _numbers(d: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def aggregate(per_seed: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One summary over seeds: every top-level number (and each workload's tenant windows) as
    the mean, with `min_max` beside it and the seeds' own summaries in `per_seed`."""
    first = dict(per_seed[0])
    nums = [_numbers(s) for s in per_seed]
    keys = [k for k in nums[0] if all(k in n for n in nums)]
    out: dict[str, Any] = {k: v for k, v in first.items() if k not in keys}
    min_max: dict[str, list[float]] = {}
    for k in keys:
        vals = [n[k] for n in nums]
        out[k] = float(np.mean(vals))
        min_max[k] = [float(min(vals)), float(max(vals))]
    for key in ("slo_violation_windows_by_workload", "slo_attainment_by_workload"):
        wl = first.get(key)
        if isinstance(wl, dict):
            out[key] = {w: float(np.mean([s[key].get(w, 0) for s in per_seed])) for w in wl}
    out["seeds"] = [s.get("seed") for s in per_seed]
    out["min_max"] = min_max
    out["per_seed"] = list(per_seed)
    return out
