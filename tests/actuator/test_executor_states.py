"""The executor's declared states: the tables refuse illegal moves, every timeout names a real
setting, and docs/executor.md and the journal schema cannot drift from the tables."""
from pathlib import Path

import pytest

from actuator.executor import STEP_COLUMNS, IllegalTransition, Step
from actuator.executor.states import (
    PHASE_TRANSITIONS, PLAN_TRANSITIONS, STEP_TRANSITIONS, TIMEOUTS, Phase, PlanState, StepState,
    limit_s, render_doc, set_state, states_comment, timeout_s,
)
from actuator.journal import _SCHEMA
from actuator.settings import ExecutorSettings

DOC = Path(__file__).resolve().parents[2] / "docs" / "executor.md"


def test_the_state_section_of_the_executor_page_is_generated_from_the_tables():
    doc = DOC.read_text()
    assert render_doc(doc) == doc, "docs/executor.md drifted: run python -m actuator.executor.states"


def test_the_journal_schema_names_every_state():
    for enum in (PlanState, Phase, StepState):
        assert states_comment(enum) in _SCHEMA


def test_finished_states_are_final_and_a_finished_step_never_restarts():
    for final in (StepState.SKIPPED, StepState.CANCELLED, StepState.FAILED, StepState.ROLLED_BACK):
        assert STEP_TRANSITIONS[final] == frozenset()
        with pytest.raises(IllegalTransition):
            set_state("step", final.value, "running")
    for final in (PlanState.DONE, PlanState.FAILED, PlanState.ABANDONED):
        with pytest.raises(IllegalTransition):
            set_state("plan", final.value, "running")


def test_phases_go_forward_one_at_a_time_except_verify_back_to_move():
    set_state("phase", "verify", "move")
    set_state("phase", "prepare", "launch")
    for old, new in (("prepare", "move"), ("committed", "move"), ("finish", "prepare")):
        with pytest.raises(IllegalTransition):
            set_state("phase", old, new)
    assert all(len(n) <= 2 for n in PHASE_TRANSITIONS.values())


def test_an_unknown_state_is_refused():
    with pytest.raises(IllegalTransition):
        set_state("step", "pending", "half-done")


def test_every_table_covers_every_state():
    assert set(PLAN_TRANSITIONS) == set(PlanState)
    assert set(PHASE_TRANSITIONS) == set(Phase)
    assert set(STEP_TRANSITIONS) == set(StepState)


def test_every_timeout_is_an_executor_setting_and_follows_it():
    s = ExecutorSettings(move_timeout_s=7, drain_timeout_s=9)
    for field in TIMEOUTS.values():
        assert field in ExecutorSettings.model_fields
    assert timeout_s(s, "move", "running") == 7
    assert timeout_s(s, "drain", "decommission") == 9
    assert timeout_s(s, "move", "pending") is None
    # where the table has none, a step may stay as long as it takes
    assert limit_s(s, "move", "running") == 7 and limit_s(s, "move", "pending") == float("inf")


def test_a_step_the_journal_lost_a_needed_column_of_says_which():
    """A journal edited by hand: the phase stops the step naming what is missing, rather than
    sending None to a driver."""
    assert Step(idx=3, op="drain", node="rs1").need("node") == "rs1"
    with pytest.raises(ValueError, match=r"step 3 \(drain\) has no node in the journal"):
        Step(idx=3, op="drain").need("node")


def test_step_fields_are_the_journal_columns():
    step = Step(idx=0, op="move")
    assert tuple(step.row()) == STEP_COLUMNS


def test_overlapping_phases_only_start_later_work_and_every_dependency_is_checked_by_name():
    from actuator.executor.ready import CHECKS
    from actuator.executor.states import ALONGSIDE, DEPENDENCIES, PHASE_ORDER, WAITS_FOR
    work = (Phase.LAUNCH, Phase.RECONFIGURE, Phase.SPLIT, Phase.MOVE)
    for phase, later in ALONGSIDE.items():
        assert phase in work and all(p in work and PHASE_ORDER.index(p) > PHASE_ORDER.index(phase)
                                     for p in later)
    named = {d for deps in WAITS_FOR.values() for d in deps}
    assert named == set(DEPENDENCIES) == set(CHECKS)
