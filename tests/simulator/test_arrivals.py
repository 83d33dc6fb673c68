"""Open-loop rate schedules: each shape gives the rate it says, noise is seeded with mean 1, and
arrivals are Poisson around the schedule."""
from __future__ import annotations

import numpy as np
import pytest

from simulator.arrivals import Arrivals, rate_at
from simulator.scenario import scenario_from_dict
from tests.fixtures.simcluster import small_scenario_dict


def _workload(rate, **kw):
    data = small_scenario_dict()
    data["workloads"] = [{"name": "web", "ycsb": "C", "rate": rate, **kw}]
    return scenario_from_dict(data, "s.yaml").workloads[0]


@pytest.mark.parametrize("rate, at, want", [
    ([[0, 100], [60, 700]], [0, 30, 60, 600], [100, 400, 700, 700]),  # linear, held after the last point
    ({"shape": "constant", "ops_per_s": 250}, [0, 1e4], [250, 250]),
    ({"shape": "ramp", "from_ops_per_s": 100, "to_ops_per_s": 500, "start_s": 100, "end_s": 300},
     [0, 100, 200, 300, 900], [100, 100, 300, 500, 500]),
    ({"shape": "steps", "steps": [[0, 100], [60, 400], [120, 200]]}, [0, 59, 60, 130], [100, 100, 400, 200]),
    ({"shape": "daily", "mean_ops_per_s": 1000, "amplitude": 0.5, "period_s": 400, "phase_s": 100},
     [100, 200, 300, 400], [1000, 1500, 1000, 500]),  # peak a quarter period after the phase
    ({"shape": "spike", "base_ops_per_s": 100, "peak_ops_per_s": 1100, "at_s": 60, "duration_s": 100,
      "ramp_s": 20}, [0, 70, 80, 180, 190, 200], [100, 600, 1100, 1100, 600, 100]),
])
def test_each_shape_gives_the_rate_it_describes(rate, at, want):
    w = _workload(rate)
    assert np.allclose(rate_at(w.rate, np.array(at, dtype=float)), want)


def test_noise_is_seeded_and_averages_to_the_schedule():
    w = _workload({"shape": "constant", "ops_per_s": 1000, "noise": 0.2, "noise_interval_s": 10})
    t = np.arange(0, 200_000, 10.0) + 5.0
    a, b = Arrivals([w], seed=4), Arrivals([w], seed=4)
    ra = a.rate(0, t)
    assert np.array_equal(ra, b.rate(0, t))  # same seed, same noise
    assert not np.array_equal(ra, Arrivals([w], seed=5).rate(0, t))
    assert abs(ra.mean() / 1000 - 1) < 0.01 and abs(ra.std() / 1000 - 0.2) < 0.01
    assert np.all(ra > 0)
    # the noise of an interval does not depend on how time was stepped through
    assert np.array_equal(Arrivals([w], seed=4).rate(0, t[::-1])[::-1], ra)


def test_arrivals_are_poisson_around_the_rate_and_only_while_switched_on():
    w = _workload({"shape": "constant", "ops_per_s": 50}, start_s=100, stop_s=200)
    arr = Arrivals([w], seed=1)
    counts = np.array([arr.step(t, 1.0)[0] for t in np.arange(0.0, 300.0)])
    assert counts[:100].sum() == 0 and counts[200:].sum() == 0
    on = counts[100:200]
    assert abs(on.mean() - 50) < 3 and 25 < on.var() < 80  # Poisson: variance = mean


def test_closed_loop_workloads_offer_nothing_here():
    data = small_scenario_dict()
    sc = scenario_from_dict(data, "s.yaml")
    arr = Arrivals(sc.workloads, seed=1)
    assert not arr.open.any() and arr.step(0.0, 1.0).sum() == 0
