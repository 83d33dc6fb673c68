"""The scale-out lead time: the prior until measured, then the cluster's own scale-outs."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from decision.lead_time import MAX_S, MIN_S, LeadTime


def test_the_first_measurement_replaces_the_prior_then_each_moves_it_half_way():
    lead = LeadTime(420.0)
    assert "not measured" in lead.words()
    lead = lead.learn(330.0)
    assert lead == LeadTime(330.0, 1)
    lead = lead.learn(530.0)
    assert lead == LeadTime(430.0, 2)
    assert "measured on 2 scale-out(s)" in lead.words()


def test_a_plan_that_launched_nothing_or_got_stuck_teaches_nothing():
    lead = LeadTime(420.0, 3)
    assert lead.learn(5.0) == lead
    assert lead.learn(7200.0) == lead


@given(st.floats(60, 1000), st.lists(st.floats(0, 10_000), max_size=20))
def test_the_estimate_stays_within_the_measured_range(prior, took):
    lead = LeadTime(prior)
    for t in took:
        lead = lead.learn(t)
    seen = [t for t in took if MIN_S <= t <= MAX_S]
    if seen:
        assert min(seen) - 1e-6 <= lead.seconds <= max(seen) + 1e-6
    else:
        assert lead.seconds == prior
