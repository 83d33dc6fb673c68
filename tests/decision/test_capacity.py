"""Node capacity learned online: cost per request class, service time, and how busy a node may
run with its predicted p99 inside the SLO."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decision.capacity import (
    Learned, Sample, capacity, costs, learn, learn_all, max_utilisation, predicted_p99_ms,
)

GET, PUT, SCAN = 1e-4, 2.4e-4, 1.2e-3  # cpu per request/s (10 k gets/s fill a node)


def node(reads=0.0, writes=0.0, scans=0.0, latency=None, profile="default", noise=0.0,
         queued=False):
    cpu = GET * reads + PUT * writes + SCAN * scans + noise
    return Sample(profile, reads, writes, scans, cpu, latency, queued)


def taught(samples_per_step, steps=10, half_life_s=3600.0):
    learned = None
    for t in range(steps):
        learned = learn(learned, samples_per_step(t), 30.0 * t, half_life_s=half_life_s)
    return learned


def test_costs_of_each_class_are_recovered_from_mixed_nodes():
    rng = np.random.default_rng(1)

    def step(t):
        return [node(*rng.uniform(0, 1, 3) * (4000, 1500, 300)) for _ in range(6)]
    c = costs(taught(step))
    assert c == pytest.approx((GET, PUT, SCAN), rel=0.05)


def test_a_class_never_served_takes_the_pooled_cost_not_zero_or_a_guess():
    c = costs(taught(lambda t: [node(reads=1000 * (k + 1)) for k in range(4)]))
    assert c[0] == pytest.approx(GET, rel=0.05)
    # nothing says what a write costs: the pooled cost (here a get's), never negative
    assert c[1] == pytest.approx(GET, rel=0.1) and c[2] == pytest.approx(GET, rel=0.1)


def test_nothing_served_teaches_nothing():
    learned = learn(None, [node()], 0.0, half_life_s=600.0)
    assert costs(learned) is None and capacity(learned, 50.0, 0.2, ceiling=0.9, floor=0.3) is None


def test_old_samples_fade_with_the_half_life():
    first = taught(lambda t: [node(reads=2000, noise=0.2)] * 3, steps=5, half_life_s=60.0)
    later = learn(first, [node(reads=2000)] * 3, 30.0 * 4 + 3600.0, half_life_s=60.0)
    assert costs(later)[0] == pytest.approx(GET, rel=0.01)


def test_service_time_is_the_median_of_the_nodes_and_ignores_queued_ones():
    samples = [node(reads=2000, latency=2.0 / (1 - 0.2)), node(reads=2000, latency=2.0 / (1 - 0.2)),
               node(reads=2000, latency=50.0), node(reads=9000, latency=400.0, queued=True)]
    learned = learn(None, samples, 0.0, half_life_s=600.0)
    assert learned.service_ms == pytest.approx(2.0, rel=1e-6)


def test_a_slow_first_reading_gives_way_at_once_to_a_faster_one_and_a_slow_spell_only_slowly():
    # a fresh cluster answers slowly while its JVMs compile and its caches fill: 10 ms a request
    first = learn(None, [node(reads=2000, latency=10.0 / (1 - 0.2))], 0.0, half_life_s=600.0)
    warm = learn(first, [node(reads=2000, latency=1.0 / (1 - 0.2))], 30.0, half_life_s=600.0)
    assert warm.service_ms == pytest.approx(1.0, rel=1e-6)
    assert max_utilisation(warm.service_ms, 100.0, 0.2, ceiling=0.9, floor=0.3) == 0.9
    # one slow spell (a GC, a compaction) moves it a little, not to the spell's figure
    spell = learn(warm, [node(reads=2000, latency=10.0 / (1 - 0.2))], 60.0, half_life_s=600.0)
    assert 1.0 < spell.service_ms < 2.0
    # a service time that truly grows (heavier requests) is followed over the next snapshots
    heavier = spell
    for k in range(40):
        heavier = learn(heavier, [node(reads=2000, latency=4.0 / (1 - 0.2))], 90.0 + 30 * k,
                        half_life_s=600.0)
    assert heavier.service_ms == pytest.approx(4.0, rel=0.05)


def test_max_utilisation_keeps_the_predicted_p99_under_the_slo_with_headroom():
    u = max_utilisation(2.0, 50.0, 0.2, ceiling=0.95, floor=0.3)
    assert predicted_p99_ms(2.0, u) == pytest.approx(50.0 * 0.8)
    assert max_utilisation(0.1, 50.0, 0.2, ceiling=0.9, floor=0.3) == 0.9
    assert max_utilisation(30.0, 50.0, 0.2, ceiling=0.9, floor=0.3) == 0.3
    assert max_utilisation(None, 50.0, 0.2, ceiling=0.9, floor=0.3) == 0.9
    assert predicted_p99_ms(1.0, 1.0) == math.inf


def test_capacity_says_what_a_node_serves_in_words():
    learned = taught(lambda t: [node(reads=3000, writes=500, scans=50, latency=1.5),
                                node(reads=1000, writes=1500, scans=10, latency=1.5),
                                node(reads=500, writes=200, scans=200, latency=1.5)])
    cap = capacity(learned, 50.0, 0.2, ceiling=0.9, floor=0.3)
    assert cap.requests((1.0, 0.0, 0.0)) == pytest.approx(cap.max_utilisation / GET, rel=0.05)
    words = cap.words("default")
    assert "gets/s" in words and "within the SLO" in words


def test_profiles_learn_apart():
    out = learn_all({}, [node(reads=1000, profile="read"), node(writes=1000, profile="write")],
                    0.0, half_life_s=600.0)
    assert set(out) == {"read", "write"}
    again = learn_all(out, [node(reads=1000, profile="read")], 30.0, half_life_s=600.0)
    assert again["write"] == out["write"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 2e4), st.floats(0, 5e3), st.floats(0, 1e3),
                          st.floats(0, 1)), min_size=1, max_size=12))
def test_learned_costs_are_never_negative_and_the_sums_stay_finite(rows):
    learned: Learned | None = None
    for k, (r, w, s, cpu) in enumerate(rows):
        learned = learn(learned, [Sample("default", r, w, s, cpu)], 30.0 * k, half_life_s=600.0)
    c = costs(learned)
    if c is not None:
        assert all(v >= 0 and math.isfinite(v) for v in c)
