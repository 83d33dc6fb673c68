"""bench/where_windows_go.py puts each missed window down to what the policy was doing then: a
plan in flight (by what it does: launch, drain, move) or a hold (its cause), and a window soon
after a scale-in to that scale-in; and beside the oracle's size for its minute, whether it
lacked nodes, and where it did not, whether the load sat unevenly."""
from __future__ import annotations

import re

from bench.where_windows_go import NodeCpu, main, plan_kinds, policy_state
from controller.harness import DecisionRecord


def _decision(t, plan_id, **kinds):
    return DecisionRecord(t, plan_id, "", 4, 4, 0, sum(kinds.values()), kinds)


DECISIONS = [
    _decision(30.0, None),
    _decision(60.0, "out", launch=2, move=6),
    _decision(90.0, "out", move=3),           # an extension that only moves: still a scale-out
    _decision(400.0, "even", move=2),
    _decision(600.0, "in", drain=1, move=4, terminate=1),
]
PLAN_EVENTS = [(60.0, "submitted", "out"), (350.0, "done", "out"),
               (400.0, "submitted", "even"), (420.0, "done", "even"),
               (600.0, "submitted", "in"), (650.0, "failed", "in")]
HOLDS = [(30.0, "nothing_pays", ""), (370.0, "within_slo", ""), (700.0, "plan_in_flight", "")]


def test_a_plan_is_known_by_what_it_does_an_extension_keeps_a_scale_out_one():
    assert plan_kinds(DECISIONS) == {"out": "scale-out", "even": "moves", "in": "scale-in"}


def test_each_moment_is_put_down_to_the_plan_in_flight_or_the_last_hold():
    def state(at):
        return policy_state(at, DECISIONS, PLAN_EVENTS, HOLDS, after_plan_s=300.0)

    assert state(10.0) == "before any decision"
    assert state(45.0) == "held (nothing_pays)"
    assert state(200.0) == "scale-out in flight"
    assert state(380.0) == "held (within_slo)"
    assert state(410.0) == "moves in flight"
    assert state(620.0) == "scale-in in flight"
    # a plan that ended, failed or not, no longer runs; a scale-in's aftermath is named
    assert state(900.0) == "after a scale-in"
    assert state(1000.0) == "held (plan_in_flight)"


def test_the_listing_counts_the_missed_windows_by_what_the_policy_did(capsys):
    assert main(["--scenario", "tenant-churn", "--seed", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    missed = int(out[2].split(" of ")[0])
    lacking, enough, uneven = (int(n) for n in re.match(
        r"(\d+) with fewer .*?, (\d+) with as many or more \((\d+) of them uneven", out[3]).groups())
    assert lacking + enough == missed and uneven <= enough
    counts = out[4].removeprefix("the policy meanwhile: ").split(", ")
    assert sum(int(c.rsplit(" ", 1)[1]) for c in counts) == missed
    # the newcomer's ramp outruns a boot: most of what is lost is lost while nodes come
    assert counts[0].startswith("scale-out in flight")


def test_the_nodes_cpu_is_read_at_the_last_decision_before_the_window_ends():
    cpu = NodeCpu()
    cpu.seen = [(30.0, 0.95, 0.60), (60.0, 0.70, 0.65)]
    assert cpu.before(10.0) is None
    assert cpu.before(45.0) == (0.95, 0.60)
    assert cpu.before(60.0) == (0.70, 0.65)
