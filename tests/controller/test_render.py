"""Plan rendering: the JSON is Plan.to_dict() exactly (and always valid JSON); the table shows
every part of the plan and degrades gracefully without a snapshot."""
from __future__ import annotations

import json
from dataclasses import replace

from controller.render import plan_to_json, plan_to_table
from decision.model import (
    Action, DecisionMemory, GroupPlan, Health, NodeAssignment, NodeHealth, Plan, Sizing, Summary,
)


def a_plan(**changes) -> Plan:
    plan = Plan(
        policy="met",
        health=Health(nodes=(NodeHealth("rs1,16020", "overloaded", ("cpu 0.90 >= cpu_high 0.60",)),
                             NodeHealth("rs2,16020", "healthy", ())),
                      suboptimal=0.5, remove=False, healthy=False, reason="1 of 2 overloaded"),
        sizing=Sizing(current=2, target=3, delta=1, step=2, reason="overloaded: add 1"),
        groups=(GroupPlan("read", 3, 2), GroupPlan("write", 1, 1)),
        assignment=(NodeAssignment("rs1,16020", "read", ("p1", "p2"), 300.0),
                    NodeAssignment("rs2,16020", "read", ("p3",), 200.0),
                    NodeAssignment("new-1", "write", ("p4",), 100.0)),
        actions=(Action("launch", "scale out by 1", node="new-1", profile="write", cause="scale_out"),
                 Action("reconfigure", "now serves reads", node="rs2,16020", profile="read",
                        from_profile="default", cause="profile_change"),
                 Action("move", "to the new write node", partition="p4", source="rs1,16020",
                        target="new-1", cause="scale_out"),
                 Action("compact", "locality 0.50 < 0.70", node="new-1", partition="p4",
                        cause="locality")),
        summary=Summary(moves=1, reconfigurations=1, launches=1, terminations=0,
                        max_load_ratio=1.5),
        memory=DecisionMemory(step=2, first_decision_done=True),
        reason="overloaded: add 1",
    )
    return replace(plan, **changes)


def test_json_is_plan_to_dict_in_order():
    plan = a_plan()
    text = plan_to_json(plan)
    assert json.loads(text) == json.loads(json.dumps(plan.to_dict()))
    assert list(json.loads(text)) == list(plan.to_dict())
    assert text == plan_to_json(a_plan())


def test_json_never_contains_nan():
    plan = a_plan(summary=Summary(0, 0, 0, 0, float("nan")))
    assert json.loads(plan_to_json(plan))["summary"]["max_load_ratio"] is None


def test_table_shows_every_part_without_a_snapshot():
    out = plan_to_table(a_plan())
    for words in ("policy met", "Health", "overloaded", "cpu 0.90 >= cpu_high 0.60",
                  "2 → 3 nodes (delta +1), next step 2", "Groups", "Assignment", "new-1",
                  "Actions (4, in order)", "launch", "default → read", "rs1,16020 → new-1",
                  "locality 0.50 < 0.70", "moves 1", "max_load_ratio 1.50"):
        assert words in out, words
    assert "\x1b[" not in out


def test_table_colours_only_when_asked():
    assert "\x1b[" in plan_to_table(a_plan(), color=True)


def test_empty_plan_says_so():
    out = plan_to_table(a_plan(actions=(), groups=()))
    assert "No actions." in out and "Groups" not in out
