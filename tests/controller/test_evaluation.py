"""Scoring across runs: the fixed-size frontier's hull and ratio, the aggregation over seeds."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from controller.evaluation import aggregate, frontier_ratio, hull_at, upper_hull

points = st.lists(st.tuples(st.floats(1, 1e4), st.floats(0, 1e8)), min_size=1, max_size=12)


@given(pts=points)
def test_hull_is_on_or_above_every_static_point_up_to_its_peak(pts):
    hull = upper_hull(pts)
    peak = max(y for _, y in pts)
    assert abs(hull[-1][1] - peak) < 1e-6 * max(peak, 1)
    for x, y in pts:
        assert hull_at(hull, x) >= y - 1e-6 * max(abs(y), 1.0)


@given(pts=points)
def test_hull_is_concave_and_never_falls(pts):
    hull = upper_hull(pts)
    ys = [y for _, y in hull]
    assert all(b >= a for a, b in zip(ys, ys[1:]))
    slopes = [(y2 - y1) / (x2 - x1) for (x1, y1), (x2, y2) in zip(hull, hull[1:])]
    assert all(b <= a + 1e-9 * max(abs(a), 1.0) for a, b in zip(slopes, slopes[1:]))


def test_a_worse_bigger_cluster_is_not_the_frontier_and_ratios_interpolate():
    # 8 nodes doing worse than 6 (as on some scenarios): the frontier stays at 6's level
    hull = upper_hull([(240, 40.0), (360, 60.0), (480, 55.0), (720, 90.0)])
    assert hull == [(240, 40.0), (360, 60.0), (720, 90.0)]
    assert hull_at(hull, 540) == 75.0
    assert frontier_ratio(hull, 540, 75.0) == 1.0
    assert frontier_ratio(hull, 120, 30.0) == 1.5  # below the smallest size: scaled from 0
    assert frontier_ratio(hull, 900, 45.0) == 0.5  # above the largest: flat


def test_aggregate_gives_mean_min_max_and_keeps_each_seed():
    runs = [{"seed": s, "total_ops": ops, "policy": "met", "slo_violation_windows_by_workload": {"C": c}}
            for s, ops, c in ((1, 46.6e6, 3), (2, 40.6e6, 5), (3, 49.84e6, 1))]
    agg = aggregate(runs)
    assert np.isclose(agg["total_ops"], (46.6e6 + 40.6e6 + 49.84e6) / 3)
    assert agg["min_max"]["total_ops"] == [40.6e6, 49.84e6]
    assert agg["policy"] == "met" and agg["seeds"] == [1, 2, 3] and agg["per_seed"] == runs
    assert agg["slo_violation_windows_by_workload"] == {"C": 3.0}
