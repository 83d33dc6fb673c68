"""The policy registry (decision/policies.py): every policy a config can name is found by its
config, nothing else dispatches on a name, and the history keys no policy reads are known."""
from __future__ import annotations

import typing

import pytest

from decision.model import DecisionMemory
from decision.policies import POLICIES, POLICY_NAMES, policy_key, policy_of, unread_history
from decision.policy import PolicyConfig
from decision.target_tracking import decide_target_tracking
from decision.tiramola import decide_tiramola

NAMES = typing.get_args(PolicyConfig.model_fields["name"].annotation)


def test_every_name_a_config_can_write_runs_a_policy_of_the_registry():
    assert set(POLICY_NAMES) == set(NAMES)
    for name in NAMES:
        assert policy_of(PolicyConfig(name=name)) is POLICIES[name]


@pytest.mark.parametrize("fields, key, decide", [
    ({"name": "target-tracking"}, "target-tracking", decide_target_tracking),
    ({"name": "tiramola"}, "tiramola", decide_tiramola),
    ({"name": "met", "paper_faithful": True}, "met-paper", None),
    ({"name": "met", "target_utilisation": 0.6}, "met", None),  # a preset of met is met
])
def test_a_config_selects_its_policy_by_its_fields(fields, key, decide):
    config = PolicyConfig(**fields)
    assert policy_key(config) == key
    if decide is not None:
        assert policy_of(config).decide is decide


def test_only_the_policies_that_move_partitions_switch_the_stores_balancer_off():
    assert {k for k, r in POLICIES.items() if r.places_partitions} == {"met", "met-paper"}


@pytest.mark.parametrize("fields, samples, during", [
    ({"name": "met"}, 1, True),                          # the default: its own hysteresis; extends plans
    ({"name": "met", "size_from_demand": False}, 1, False),  # MET's marks: hold by their rules
    ({"name": "met", "paper_faithful": True}, 6, False),
    ({"name": "tiramola"}, 6, False),
    ({"name": "target-tracking"}, 1, False),               # HPA's window
    ({"name": "static"}, 1, False),
])
def test_each_policy_says_how_often_it_is_asked(fields, samples, during):
    config = PolicyConfig(**fields)
    assert policy_of(config).pace(config) == samples
    assert policy_of(config).during_plans(config) is during


def test_keys_of_an_older_or_newer_version_are_told_apart_from_every_policys_own():
    own = (("loop.plan_ended_at", 1.0), ("loop.plan_in_flight", 6.0), ("met.split_load:t", 5.0), ("met.reclassify:p1", 1.0),
           ("met.cycle_need:3", 2.0), ("1795341600.000|rs1", 0.4), ("tt|1795341600.000", 3.0))
    strange = (("met.some_future_key", 2.0), ("met.cycle_at:07", 1.0), ("tt|soon", 1.0),
               ("elsewhere.key", 1.5))
    assert unread_history(DecisionMemory(history=own + strange)) == tuple(k for k, _ in strange)
    assert unread_history(DecisionMemory(history=own)) == ()
