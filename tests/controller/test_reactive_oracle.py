"""controller/reactive_oracle.py: a policy that learns of demand as it arrives and gets nodes a
boot later — what it misses, what it bills, and the fewest spare nodes with which it meets the
SLO."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from controller.reactive_oracle import follow, least_headroom, start_ceiling


def test_without_a_lead_it_is_the_oracle():
    needs = [3, 5, 9, 4, 2, 7]
    run = follow(needs, lead_minutes=0, headroom=0)
    assert run.billed == tuple(needs) and all(run.met)
    assert run.node_minutes == sum(needs)


def test_a_rise_is_missed_for_a_boot_and_its_nodes_are_billed_while_they_boot():
    needs = [2, 2, 2, 6, 6, 6, 6, 6]
    run = follow(needs, lead_minutes=3, headroom=0)
    assert run.met == (True, True, True, False, False, False, True, True)
    assert run.ready[3:6] == (2, 2, 2) and run.ready[6] == 6
    assert run.billed[3:6] == (6, 6, 6)


def test_a_fall_releases_the_booting_nodes_first():
    # the four launched at minute 1 are not needed by minute 2: cancelled, never served
    run = follow([2, 6, 2, 2, 2], lead_minutes=3, headroom=0)
    assert run.billed == (2, 6, 2, 2, 2) and run.ready == (2, 2, 2, 2, 2)
    # a fall below what is ready releases ready nodes at once
    assert follow([5, 5, 1], lead_minutes=3, headroom=0).billed == (5, 5, 1)


def test_spare_nodes_carry_a_rise_until_the_new_ones_serve():
    needs = [2, 2, 6, 6, 6, 6, 6, 2, 2]
    best = least_headroom(needs, lead_minutes=3, target=1.0)
    assert best.headroom == 4 and best.attainment == 1.0
    assert best.node_minutes == sum(n + 4 for n in needs)
    assert follow(needs, 3, 3).attainment < 1.0
    # a lower target leaves the rise's first minutes to be missed, with fewer spare nodes
    assert least_headroom(needs, lead_minutes=3, target=0.6).headroom < 4


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="lead_minutes"):
        follow([1, 2], lead_minutes=-1, headroom=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=40), st.integers(0, 8),
       st.sampled_from([0.5, 0.9, 1.0]))
def test_more_spare_nodes_never_miss_more_minutes(needs, lead, target):
    best = least_headroom(needs, lead, target)
    assert best.attainment >= target - 1e-12
    met = [follow(needs, lead, h).attainment for h in range(best.headroom + 3)]
    assert met == sorted(met)
    run = follow(needs, lead, best.headroom)
    # never fewer ready nodes than billed can explain, and never cheaper than the oracle when
    # every minute is met
    assert all(r <= b for r, b in zip(run.ready, run.billed))
    if run.attainment == 1.0:
        assert run.node_minutes >= sum(needs)


def test_a_start_below_the_first_minutes_need_loses_those_minutes_to_every_policy():
    needs = [6, 7, 7, 5, 9, 9, 4, 4, 4, 4]
    # 5 nodes at the start; a node launched in minute 0 serves from minute 3: minutes 0-2 need
    # more than 5 and are lost whatever a policy does; minute 4's 9 comes after the lead
    assert start_ceiling(needs, lead_minutes=3, initial_nodes=5) == pytest.approx(0.7)
    assert start_ceiling(needs, lead_minutes=3, initial_nodes=7) == 1.0
    assert start_ceiling(needs, lead_minutes=0, initial_nodes=1) == 1.0  # nodes at once
    assert start_ceiling([], lead_minutes=3, initial_nodes=1) == 1.0
