"""The rules' memory (decision/rules/memory.py): typed in the code, the `met.*` keys on disk, so
a state file of the version before the rules reads and writes back unchanged."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from decision.demand import QueueSeen
from decision.demand_cycle import MISSING, DemandRecord
from decision.model import DecisionMemory
from decision.rules.demand_memory import DemandMemory
from decision.rules.memory import (
    CycleSlot, PeakPartition, PendingScaleOut, RulesMemory, SplitRecord, memory_pairs,
    read_memory, warming_up, with_rules_memory,
)

BEFORE = Path(__file__).parents[2] / "fixtures" / "data" / "memory-before-rules.json"


def old_history() -> list[tuple[str, float]]:
    """The history of a state file written by metctl before the rules (commit da10472): every
    kind of key its default policy wrote, one key of MET's re-placement, one unknown `met.`
    key, and two keys of other owners."""
    return [(k, v) for k, v in json.loads(BEFORE.read_text())["history"]]


def test_a_state_file_of_the_version_before_the_rules_is_read_field_by_field():
    memory = read_memory(old_history())
    assert memory.last_action_at == 1795344800.0
    assert memory.scale_out == PendingScaleOut(1795341600.0, 2400.0, 0.5)  # +2 nodes on 4
    assert memory.no_gain_requests == 2400.0
    assert memory.splits == {"usertable": SplitRecord(5000.0, 1795342300.0, 0)}
    assert memory.cycle[1] == CycleSlot(12, 1795341901.0) and memory.cycle[10].need == 0
    assert len(memory.peaks) == 12 and memory.peaks["p00000"].at == 1795341600.0
    assert memory.predict_until == 1795345500.0
    assert memory.kept == (("met.reclassify:abc", 1.0), ("met.some_future_key", 2.0))


def test_written_back_it_is_the_same_history_in_the_same_order():
    history = old_history()
    base = DecisionMemory(step=4, first_decision_done=True, history=tuple(history))
    assert with_rules_memory(base, read_memory(history), 4) == base


def test_a_record_missing_a_key_it_is_always_written_with_is_forgotten():
    partial = [("met.out_at", 10.0), ("met.split_load:t", 5.0), ("met.cycle_need:3", 2.0),
               ("met.peak_cost:p", 0.5), ("met.cycle_at:07", 1.0)]
    memory = read_memory(partial)
    assert memory == RulesMemory(kept=(("met.cycle_at:07", 1.0),))
    assert memory_pairs(memory) == (("met.cycle_at:07", 1.0),)


def test_what_an_older_version_never_wrote_is_read_as_it_meant_it():
    """Before commit bb940e0 a split was recorded without its streak, before e779129 a
    scale-out without its size: the version that wrote them read a missing streak as 0."""
    old = [("met.out_at", 10.0), ("met.out_requests_before", 2400.0),
           ("met.split_load:usertable", 5000.0), ("met.split_at:usertable", 9.0)]
    memory = read_memory(old)
    assert memory.splits == {"usertable": SplitRecord(5000.0, 9.0, 0)}
    assert memory.scale_out == PendingScaleOut(10.0, 2400.0, None) and memory.kept == ()
    assert ("met.split_streak:usertable", 0.0) in memory_pairs(memory)


def test_other_owners_keys_are_left_first_and_alone():
    base = DecisionMemory(history=(("loop.plan_ended_at", 5.0), ("123.000|rs1", 0.4),
                                   ("met.last_action_at", 1.0)))
    out = with_rules_memory(base, RulesMemory(last_action_at=2.0), 3)
    assert out.history == (("loop.plan_ended_at", 5.0), ("123.000|rs1", 0.4),
                           ("met.last_action_at", 2.0))
    assert out.step == 3 and out.first_decision_done


finite = st.floats(min_value=0, max_value=2e9, allow_nan=False)
names = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=8)
memories = st.builds(
    RulesMemory,
    last_action_at=st.none() | finite, no_gain_requests=st.none() | finite,
    predict_until=st.none() | finite,
    scale_out=st.none() | st.builds(PendingScaleOut, finite, finite, st.none() | finite),
    splits=st.dictionaries(names, st.builds(SplitRecord, finite, finite, st.integers(0, 9))),
    cycle=st.dictionaries(st.integers(0, 4095), st.builds(CycleSlot, st.integers(0, 100), finite)),
    peaks=st.dictionaries(names, st.builds(PeakPartition, finite, finite)),
)


@settings(max_examples=100, deadline=None)
@given(memories)
def test_any_memory_reads_back_as_it_was_written(memory):
    assert read_memory(memory_pairs(memory)) == memory


def test_the_call_queues_of_the_last_decision_read_back_for_the_next():
    # the queue's growth between two decisions is demand (decision/demand.py); a daemon
    # restarted between them reads the queues it saw from its state file
    queues = {"rs1": QueueSeen(1795344800.0, 1200.0), "rs2:16020": QueueSeen(1795344800.0, 0.0)}
    memory = RulesMemory(demand=DemandMemory(queues=queues))
    assert read_memory(memory_pairs(memory)).demand.queues == queues
    # a queue without the time it was seen is forgotten, not guessed at
    pairs = [(k, v) for k, v in memory_pairs(memory) if k != "met.queue_at"]
    assert read_memory(pairs).demand.queues == {}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 50) | st.just(MISSING), min_size=1, max_size=300),
       st.sampled_from([30.0, 60.0, 450.0]), finite)
def test_the_demand_record_reads_back_as_it_was_written(values, step, start):
    # a restarted daemon finds the cycle it had found: the record is its memory of the demand
    record = DemandRecord(step, start, tuple(values))
    assert read_memory(memory_pairs(RulesMemory(demand=DemandMemory(cycle=record)))).demand.cycle == record


def test_a_demand_record_edited_by_hand_reads_what_it_can():
    record = DemandRecord(30.0, 1795344800.0, (1.0, 2.0, 3.0))
    pairs = memory_pairs(RulesMemory(demand=DemandMemory(cycle=record)))
    edited = [(k, float("nan") if k == "met.demand_d:1" else v) for k, v in pairs
              if k != "met.demand_d:2"]
    # a step that is no demand is a step not seen; the steps stop at the first one missing
    assert read_memory(edited).demand.cycle == DemandRecord(30.0, 1795344800.0, (1.0, MISSING))
    no_step = [(k, v) for k, v in pairs if k != "met.demand_step_s"]
    assert read_memory(no_step).demand.cycle == DemandRecord()
    assert not [k for k, _ in read_memory(no_step).kept if k.startswith("met.demand")]


def test_warm_up_runs_from_the_end_of_the_plan_not_from_the_decision():
    # a scale-out decided at 100 s whose plan ended at 700 s (boot and moves): caches are cold
    # until 700 + warmup, not 100 + warmup
    base = DecisionMemory(history=(("loop.plan_ended_at", 700.0),))
    assert warming_up(base, 100.0, 900.0, warmup_s=300.0)
    assert not warming_up(base, 100.0, 1000.0, warmup_s=300.0)
    # nothing decided yet: nothing to warm up from
    assert not warming_up(base, None, 900.0, warmup_s=300.0)
    # the loop has not recorded the plan's end: from the decision
    assert not warming_up(DecisionMemory(), 100.0, 400.0, warmup_s=300.0)
    assert warming_up(DecisionMemory(), 100.0, 399.0, warmup_s=300.0)
