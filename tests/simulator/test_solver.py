"""The queueing formulas (simulator/solver.py) against their textbook definitions and against
sampling: Erlang C, M/M/c waits, the fluid backlog (properties), the latency percentile."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import solver


def erlang_c_by_definition(c: int, rho: float) -> float:
    """P(wait) in M/M/c from its defining sum (Kleinrock, "Queueing Systems" vol. 1, §3.5)."""
    a = c * rho
    head = sum(a ** k / math.factorial(k) for k in range(c))
    tail = a ** c / math.factorial(c) / (1.0 - rho)
    return tail / (head + tail)


@given(st.integers(1, 12), st.floats(0.0, 0.99))
def test_erlang_c_is_the_textbook_formula(c, rho):
    assert math.isclose(float(solver.erlang_c(np.array(c), np.array(rho))), erlang_c_by_definition(c, rho),
                        rel_tol=1e-9, abs_tol=1e-12)


def test_mm1_wait_is_rho_s_over_one_minus_rho_and_more_servers_wait_less():
    p, w = solver.station_wait(np.array([1, 2, 4]), np.array([0.8, 0.8, 0.8]), np.array([10.0, 10.0, 10.0]))
    assert math.isclose(p[0], 0.8) and math.isclose(w[0], 0.8 * 10.0 / 0.2)
    assert w[0] > w[1] > w[2] and p[0] > p[1] > p[2]


queues = st.integers(1, 4).flatmap(lambda k: st.tuples(
    st.lists(st.floats(0, 5e4), min_size=2 * k, max_size=2 * k),  # backlog, arrivals (2 classes)
    st.lists(st.floats(0, 3e4), min_size=2 * k, max_size=2 * k),
    st.lists(st.floats(0.0, 2.0), min_size=4 * k, max_size=4 * k),  # work per request (class, node, station)
    st.lists(st.floats(0.0, 3e4), min_size=2 * k, max_size=2 * k),  # capacity (node, station)
    st.tuples(st.floats(0.05, 30.0), st.floats(0.05, 30.0)),  # timeouts
    st.just(k)))


@settings(max_examples=200, deadline=None)
@given(queues)
def test_the_fluid_backlog_conserves_requests_and_never_goes_negative(q):
    backlog, arrivals, work, cap, timeouts, k = q
    backlog = np.array(backlog).reshape(2, k)
    arrivals = np.array(arrivals).reshape(2, k)
    work = np.array(work).reshape(2, k, 2)
    cap = np.array(cap).reshape(k, 2)
    step = solver.fluid_queues(backlog, arrivals, work, cap, 1.0, np.array(timeouts))
    for a in (step.served, step.failed, step.backlog):
        assert np.all(a >= -1e-9)
    total = backlog + arrivals
    assert np.allclose(step.served + step.failed + step.backlog, total, rtol=1e-9, atol=1e-6)
    # no station does more work than it has
    done = np.einsum("oks,ok->ks", work, step.served)
    assert np.all(done <= cap * (1 + 1e-9) + 1e-6)
    # what is left waits at most its class's timeout (older requests failed)
    for o in range(2):
        for node in range(k):
            if step.backlog[o, node] > 1e-9 and np.isfinite(step.wait_end_s[node]):
                kept = step.backlog[:, node] @ work[:, node, :] / np.maximum(cap[node], 1e-300)
                assert np.max(kept[cap[node] > 0], initial=0.0) <= max(timeouts) + 1e-6


def test_past_capacity_the_backlog_grows_by_arrivals_less_capacity():
    work = np.ones((1, 1, 2))
    cap = np.array([[1000.0, 1e9]])  # 1,000 requests a second
    backlog = np.zeros((1, 1))
    for _ in range(5):
        step = solver.fluid_queues(backlog, np.array([[1500.0]]), work, cap, 1.0, np.array([100.0]))
        backlog = step.backlog
    assert math.isclose(float(backlog[0, 0]), 5 * 500.0) and step.failed.sum() == 0
    assert math.isclose(float(step.wait_end_s[0]), 2.5)  # 2,500 queued at 1,000 a second
    # with a 1-s timeout the queue keeps what it can serve within a second; the rest fail
    step = solver.fluid_queues(backlog, np.array([[1500.0]]), work, cap, 1.0, np.array([1.0]))
    assert math.isclose(float(step.backlog[0, 0]), 1000.0) and math.isclose(float(step.failed[0, 0]), 2000.0)


def test_offline_regions_answer_within_the_timeout_or_fail():
    ok, failed, lo, hi = solver.offline_wait(np.array([100.0, 100.0, 100.0]), np.array([0.4, 1.5, 5.0]),
                                             1.0, np.array([1.0, 1.0, 1.0]))
    assert ok[0] == 100.0 and failed[0] == 0.0 and hi[0] == 0.4  # opens within the step
    assert math.isclose(failed[1], 50.0) and math.isclose(ok[1], 50.0)  # half arrive > 1 s before it opens
    assert failed[2] == 100.0 and ok[2] == 0.0


def test_the_latency_percentile_matches_sampling():
    mix = solver.LatencyMix(weight=np.array([[3.0, 1.0]]), offset_ms=np.array([[2.0, 5.0]]),
                            fluid_lo_ms=np.array([[0.0, 10.0]]), fluid_hi_ms=np.array([[0.0, 30.0]]),
                            p1=np.array([[0.6, 0.3]]), mean1_ms=np.array([[1.2, 0.5]]),
                            p2=np.array([[0.2, 0.9]]), mean2_ms=np.array([[4.0, 9.0]]))
    rng = np.random.default_rng(1)
    n = 400_000
    parts = []
    for i, m in ((0, 3 * n // 4), (1, n // 4)):
        lo, hi = mix.fluid_lo_ms[0, i], mix.fluid_hi_ms[0, i]
        x = mix.offset_ms[0, i] + lo + (hi - lo) * rng.random(m)
        for p, mean in ((mix.p1[0, i], mix.mean1_ms[0, i]), (mix.p2[0, i], mix.mean2_ms[0, i])):
            x = x + np.where(rng.random(m) < p, rng.exponential(mean / p, m), 0.0)
        parts.append(x)
    sample = np.concatenate(parts)
    assert abs(mix.quantile_ms()[0] / np.quantile(sample, 0.99) - 1) < 0.01
    assert abs(mix.mean_ms()[0] / sample.mean() - 1) < 0.01
    # nothing answered: no percentile
    empty = solver.LatencyMix(*(np.zeros((1, 2)) for _ in range(8)))
    assert np.isnan(empty.quantile_ms()[0])


def test_mixed_inflation_slows_closed_classes_as_open_load_grows():
    f = solver.mixed_inflation(np.array([0.0, 0.5, 0.9, 1.0, 3.0]))
    assert f[0] == 1.0 and math.isclose(f[1], 2.0) and math.isclose(f[2], 10.0)
    assert f[3] == f[4] == 1.0 / (1.0 - solver.OPEN_SHARE_MAX)


def test_a_wait_behind_several_requests_is_gamma_and_tighter_than_exponential():
    """Closed classes (simulator.network): a request that finds k requests ahead waits for
    k services (Erlang-k); the percentile follows sampling, and is below an exponential
    wait's of the same mean."""
    one = np.ones((1, 1))
    zero = np.zeros((1, 1))
    gamma = solver.LatencyMix(one, 2 * one, zero, zero, one, 10 * one, zero, zero, shape=6 * one)
    expo = solver.LatencyMix(one, 2 * one, zero, zero, one, 10 * one, zero, zero)
    sample = 2 + np.random.default_rng(3).gamma(6, 10 / 6, 400_000)
    assert abs(gamma.quantile_ms()[0] / np.quantile(sample, 0.99) - 1) < 0.01
    assert gamma.quantile_ms()[0] < expo.quantile_ms()[0]
    assert gamma.mean_ms()[0] == expo.mean_ms()[0] == 12


def _one_wait(p: float, mean_ms: float, **quota) -> solver.LatencyMix:
    """One class at one node: no delay, a wait that is exponential with `mean_ms` when it
    waits (probability p); `quota`: under_quota's arguments, busy as a number."""
    one, zero = np.ones((1, 1)), np.zeros((1, 1))
    mix = solver.LatencyMix(one, zero, zero, zero, p * one, p * mean_ms * one, zero, zero)
    if quota:
        stopped, rest = quota.get("stopped"), quota.get("stop_rest")
        mix = mix.under_quota(np.array([quota["busy"]]), quota["period_ms"], quota["run_share"],
                              None if stopped is None else np.array([stopped]), rest)
    return mix


def test_a_quota_s_stops_put_the_tail_in_whole_periods_as_sampling_says():
    """A node whose control group has spent its quota stops until the next period: a request
    then waits run_share of its even-speed wait plus one stop, (1 - run_share) period, per
    period boundary its work crosses (solver.throttled_wait_survival), checked against drawing
    the waits and where in its period the node was met."""
    period, share, busy, mean = 100.0, 0.15, 0.9, 14.0
    mix = _one_wait(0.8, mean, busy=busy, period_ms=period, run_share=share)
    rng = np.random.default_rng(5)
    n = 400_000
    w = np.where(rng.random(n) < 0.8, rng.exponential(mean, n), 0.0)
    phi = busy * rng.random(n)
    crossings = np.floor(w / period + phi)
    sample = share * w + crossings * (1 - share) * period
    assert abs(mix.quantile_ms()[0] / np.quantile(sample, 0.99) - 1) < 0.02
    for t in (5.0, 50.0, 90.0):
        assert abs(mix.share_over(t)[0] - (sample > t).mean()) < 0.005
    # the p99 is a stop away: about one period, where the even-speed wait's is 4.6 means
    assert mix.quantile_ms()[0] > (1 - share) * period > _one_wait(0.8, mean).quantile_ms()[0]


@settings(max_examples=60, deadline=None)
@given(st.floats(2.0, 300.0), st.floats(0.05, 1.0), st.floats(0.0, 1.0), st.floats(10.0, 200.0))
def test_a_quota_reshapes_the_wait_without_adding_to_a_saturated_node_s_mean(mean, share, busy, period):
    """At a node that spends its whole quota (busy 1) the stops are a randomised rounding of
    the wait to periods: the mean is the even-speed wait's; below it the node stops less, so
    the wait is shorter; a busier node's tail is never lighter; at most one stop is added."""
    mix = _one_wait(1.0, mean, busy=busy, period_ms=period, run_share=share)
    plain = _one_wait(1.0, mean)
    top = 30 * mean + 2 * period
    grid = np.linspace(0.0, top, 20_001)
    survival = mix.survival(grid[None, :])[0]
    integral = float(((survival[1:] + survival[:-1]) / 2 * np.diff(grid)).sum())  # E[T] = ∫ P(T > t)
    # within the quadrature over φ: 4 % for waits down to 1 % of the period
    if busy == 1.0:
        assert integral == pytest.approx(mean, rel=0.04)
    assert integral <= mean * 1.04
    busier = _one_wait(1.0, mean, busy=min(1.0, busy + 0.2), period_ms=period, run_share=share)
    assert np.all(busier.survival(grid[None, ::500])[0] >= survival[::500] - 1e-9)
    p99 = mix.quantile_ms()[0]  # each percentile is found to 0.1 ms or 0.2 % of itself
    assert p99 <= plain.quantile_ms()[0] + (1 - share) * period + max(0.1, 2e-3 * p99) + 1e-6


def test_no_quota_period_leaves_the_mixture_as_it_is():
    plain = _one_wait(0.5, 10.0)
    assert plain.under_quota(np.array([1.0]), 0.0, 0.15) is plain


def test_a_request_that_arrives_while_its_node_is_stopped_waits_the_stop_s_rest_as_sampling_says():
    """A node under a quota is stopped σ of the time: a request that arrives then waits the rest
    of the stop, uniform over (1 - run_share) period, and then its wait at a node whose quota
    is whole (φ = 0); the others wait as before (solver.LatencyMix.under_quota's `stopped`),
    checked against drawing arrivals into stops."""
    period, share, busy, mean, sigma = 100.0, 0.15, 0.3, 3.0, 0.2
    mix = _one_wait(0.8, mean, busy=busy, period_ms=period, run_share=share, stopped=sigma)
    rng = np.random.default_rng(7)
    n = 400_000
    w = np.where(rng.random(n) < 0.8, rng.exponential(mean, n), 0.0)
    into_stop = rng.random(n) < sigma
    phi = np.where(into_stop, 0.0, busy * rng.random(n))
    sample = share * w + np.floor(w / period + phi) * (1 - share) * period
    sample = sample + into_stop * rng.random(n) * (1 - share) * period
    assert abs(mix.quantile_ms()[0] / np.quantile(sample, 0.99) - 1) < 0.02
    for t in (2.0, 20.0, 60.0):
        assert abs(mix.share_over(t)[0] - (sample > t).mean()) < 0.005
    # the p99 is in the stop (the even-speed wait's is a few ms) and at most one stop more than it
    plain = _one_wait(0.8, mean).quantile_ms()[0]
    assert plain < 20.0 < mix.quantile_ms()[0] <= plain + (1 - share) * period + 0.2


def test_a_node_never_stopped_keeps_the_mixture_it_had():
    """σ = 0 (or none given) is today's quota model, to the last bit."""
    before = _one_wait(0.8, 14.0, busy=0.9, period_ms=100.0, run_share=0.15)
    zero = _one_wait(0.8, 14.0, busy=0.9, period_ms=100.0, run_share=0.15, stopped=0.0)
    grid = np.linspace(0.0, 200.0, 41)[None, :]
    assert zero.stopped is None and np.array_equal(zero.survival(grid), before.survival(grid))


@settings(max_examples=80, deadline=None)
@given(st.floats(0.0, 3.0), st.floats(0.0, 3.0), st.floats(0.001, 1.0), st.floats(0.05, 1.0),
       st.floats(0.0, 2000.0), st.floats(0.0, 2000.0))
def test_the_share_of_time_stopped_is_a_share_and_grows_with_the_load(a, b, dispersion, share, lam1, lam2):
    """σ lies in [0, 1 - run_share] and never falls as a node asks more of its quota; what it
    asks never falls as it serves more requests (a wake-up serves more of them, but a second
    has more wake-ups), and without wake-ups it is its utilisation."""
    lo, hi = sorted((a, b))
    sig = solver.quota_stopped_share(np.array([lo, hi]), dispersion, share)
    assert np.all(sig >= 0.0) and np.all(sig <= 1.0 - share + 1e-12)
    assert sig[0] <= sig[1] + 1e-12
    few, many = sorted((lam1, lam2))
    asked = solver.quota_asked(np.array([0.2, 0.2]), np.array([few, many]), 5.15, 5.6, 1)
    assert asked[0] <= asked[1] + 1e-12
    assert np.array_equal(solver.quota_asked(np.array([0.3]), np.array([many]), 0.0, 5.6, 1), np.array([0.3]))


def test_a_stop_as_long_as_its_period_s_excess_demand_is_waited_as_sampling_says():
    """With cpu_quota_stop_per_excess κ a period whose demand D (gamma, mean x, variance d·x)
    passes its quota stops for min(1 - s, κ(D - 1)) of it, at its end: a request arriving at
    a uniform time is in a stop σ of the time (solver.quota_stopped_share) and then waits the
    stop's rest, longer stops met more often (solver.quota_stop_rest); checked against drawing
    periods and arrival times."""
    period, share, busy, mean, x, d, kappa = 100.0, 0.15, 0.6, 3.0, 1.0, 0.03, 2.0
    rng = np.random.default_rng(11)
    n = 400_000
    demand = rng.gamma(x / d, d, n)
    stop = np.clip(kappa * (demand - 1.0), 0.0, 1.0 - share)  # share of the period, at its end
    at = rng.random(n)
    into_stop = at > 1.0 - stop
    sigma = solver.quota_stopped_share(np.array([x]), d, share, kappa)
    assert abs(sigma[0] - into_stop.mean()) < 0.003
    rest = solver.quota_stop_rest(np.array([x]), d, share, kappa)
    assert rest.shape == (1, solver.STOP_POINTS) and abs(rest.sum() - 1.0) < 1e-12
    mix = _one_wait(0.8, mean, busy=busy, period_ms=period, run_share=share, stopped=sigma[0], stop_rest=rest)
    w = np.where(rng.random(n) < 0.8, rng.exponential(mean, n), 0.0)
    phi = np.where(into_stop, 0.0, busy * rng.random(n))
    sample = share * w + np.floor(w / period + phi) * (1 - share) * period
    sample = sample + into_stop * (1.0 - at) * period
    for t in (2.0, 10.0, 20.0, 40.0):
        assert abs(mix.share_over(t)[0] - (sample > t).mean()) < 0.005
    assert abs(mix.quantile_ms()[0] / np.quantile(sample, 0.99) - 1) < 0.05
    # shorter stops than the period's whole rest: a shorter tail than at the same σ with whole stops
    whole = _one_wait(0.8, mean, busy=busy, period_ms=period, run_share=share, stopped=sigma[0])
    assert mix.quantile_ms()[0] < whole.quantile_ms()[0]


def test_without_a_stop_s_length_every_stop_is_its_period_s_whole_rest_to_the_bit():
    """κ 0 (the default) is the quota's stops as before: σ as before to the bit, no rest's
    bins (the uniform rest of a whole stop as before); a κ so large that no stop ends short
    of the rest is that model within the quadrature."""
    asked = np.array([0.5, 0.95, 1.1, 2.0])
    assert solver.quota_stop_rest(asked, 0.026, 0.15, 0.0) is None
    assert np.array_equal(solver.quota_stopped_share(asked, 0.026, 0.15, 0.0),
                          solver.quota_stopped_share(asked, 0.026, 0.15))
    before = _one_wait(0.8, 14.0, busy=0.9, period_ms=100.0, run_share=0.15, stopped=0.3)
    assert before.stop_rest is None
    # and a stop that never ends short of the rest (κ large) is the whole-rest model: its rest
    # uniform, each bin's probability its width
    long = solver.quota_stop_rest(asked[2:], 0.026, 0.15, 1e6)
    assert np.allclose(long, np.diff(solver._REST_EDGES), atol=1e-4)
    grid = np.linspace(0.0, 200.0, 41)[None, :]
    as_bins = _one_wait(0.8, 14.0, busy=0.9, period_ms=100.0, run_share=0.15, stopped=0.3, stop_rest=long[:1])
    assert np.allclose(as_bins.survival(grid), before.survival(grid), atol=0.01)
    assert np.allclose(solver.quota_stopped_share(asked, 0.026, 0.15, 1e6),
                       solver.quota_stopped_share(asked, 0.026, 0.15), atol=1e-4)


@settings(max_examples=80, deadline=None)
@given(st.floats(0.0, 3.0), st.floats(0.0, 3.0), st.one_of(st.just(0.0), st.floats(1e-4, 1.0)), st.floats(0.05, 1.0),
       st.floats(0.01, 20.0))
def test_a_stop_s_length_keeps_the_share_stopped_a_share_that_grows_with_the_load(a, b, dispersion, share, kappa):
    """With κ > 0, σ lies in [0, 1 - run_share], never falls as a node asks more of its quota
    and is never more than with whole stops; the rest's bins are probabilities, and a node that
    asks more waits no shorter a rest (its stops are no shorter)."""
    lo, hi = sorted((a, b))
    asked = np.array([lo, hi])
    sig = solver.quota_stopped_share(asked, dispersion, share, kappa)
    assert np.all(sig >= 0.0) and np.all(sig <= 1.0 - share + 1e-12)
    assert sig[0] <= sig[1] + 1e-9
    assert np.all(sig <= solver.quota_stopped_share(asked, dispersion, share) + 1e-9)
    rest = solver.quota_stop_rest(asked, dispersion, share, kappa)
    assert rest.shape == (2, solver.STOP_POINTS) and np.all(rest >= 0.0)
    assert np.allclose(rest.sum(axis=1), 1.0)
    if sig[0] > 1e-6:  # the mean rest: no shorter at the busier node
        mid = (solver._REST_EDGES[1:] + solver._REST_EDGES[:-1]) / 2
        assert (rest[0] * mid).sum() <= (rest[1] * mid).sum() + 1e-6
