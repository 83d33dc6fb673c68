"""The decision memory file: fresh when absent, exact round trip, atomic replace, corrupt = BadInput."""
from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.errors import BadInput
from controller.state import read_memory, write_memory
from decision.model import DecisionMemory
from decision.rules.memory import PendingScaleOut, SplitRecord
from decision.rules.memory import read_memory as read_rules_memory

FIXTURES = Path(__file__).parents[1] / "fixtures" / "data"


def test_a_missing_file_is_a_fresh_memory(tmp_path):
    assert read_memory(tmp_path / "state.json") == DecisionMemory()


memories = st.builds(
    DecisionMemory,
    step=st.integers(1, 2**40),
    first_decision_done=st.booleans(),
    history=st.lists(st.tuples(st.text(min_size=1, max_size=20),
                               # metctl refuses numbers beyond ±1e15 in every document it reads
                               st.floats(-1e15, 1e15)),
                     max_size=8).map(tuple),
)


@settings(max_examples=80, deadline=None)
@given(memory=memories)
def test_write_then_read_gives_the_same_memory(tmp_path_factory, memory):
    path = tmp_path_factory.mktemp("state") / "state.json"
    write_memory(path, memory)
    assert read_memory(path) == memory


def test_write_replaces_and_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "state.json"
    write_memory(path, DecisionMemory(step=2, first_decision_done=True))
    write_memory(path, DecisionMemory(step=4, first_decision_done=True))
    assert read_memory(path) == DecisionMemory(step=4, first_decision_done=True)
    assert os.listdir(tmp_path) == ["state.json"]


def test_a_failed_write_keeps_the_old_file_and_cleans_up(tmp_path):
    # The target is a non-empty directory: os.replace fails after the temp file is written.
    target = tmp_path / "state.json"
    target.mkdir()
    (target / "keep").write_text("x")
    with pytest.raises(OSError):
        write_memory(target, DecisionMemory(step=8))
    assert sorted(os.listdir(tmp_path)) == ["state.json"]
    assert (target / "keep").read_text() == "x"


def test_a_missing_directory_is_created(tmp_path):
    path = tmp_path / "metctl-state" / "deeper" / "memory.json"
    write_memory(path, DecisionMemory(step=2))
    assert read_memory(path) == DecisionMemory(step=2)


def test_a_directory_that_cannot_be_made_is_bad_input(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadInput) as info:
        write_memory(tmp_path / "file" / "memory.json", DecisionMemory())
    assert info.value.file == str(tmp_path / "file" / "memory.json")
    assert "directory" in info.value.expected


@pytest.mark.parametrize("text, field, words", [
    ("", "", "empty"),
    ("   \n", "", "empty"),
    ("{\"step\": 2,", "line 1, column 12", "JSON"),
    ("step: 2\n", "line 1, column 1", "JSON"),
    ("[1, 2]", "", "mapping"),
    ('{"step": 0}', "step", "greater than or equal to 1"),
    ('{"step": "2"}', "step", "integer"),
    ('{"step": 2.5}', "step", "integer"),
    ('{"first_decision_done": "yes"}', "first_decision_done", "boolean"),
    ('{"history": [["cpu", NaN]]}', "history[0][1]", "finite"),
    ('{"history": [["cpu"]]}', "history[0][1]", "required"),
    ('{"history": [["", 0.3]]}', "history[0][0]", "at least 1 character"),
    ('{"version": 2}', "version", "1"),
    ('{"stepp": 2}', "stepp", "unknown key"),
])
def test_a_corrupt_file_is_bad_input(tmp_path, text, field, words):
    path = tmp_path / "state.json"
    path.write_text(text)
    with pytest.raises(BadInput) as info:
        read_memory(path)
    err = info.value
    assert err.file == str(path) and err.field == field and words in err.expected
    assert "\n" not in err.line()


def test_the_file_is_plain_json_with_a_version(tmp_path):
    path = tmp_path / "state.json"
    write_memory(path, DecisionMemory(step=2, first_decision_done=True, history=(("cpu", 0.5),)))
    assert json.loads(path.read_text()) == {
        "version": 1, "step": 2, "first_decision_done": True, "history": [["cpu", 0.5]]}


def test_a_directory_is_not_a_state_file(tmp_path):
    with pytest.raises(BadInput) as info:
        read_memory(tmp_path)
    assert "directory" in info.value.expected


def test_leftovers_of_a_killed_writer_are_removed_but_young_ones_kept(tmp_path):
    import os
    import time as _time

    from common.files import STALE_TMP_S
    state = tmp_path / "m.json"
    old = tmp_path / ".m.json.abc123.tmp"
    young = tmp_path / ".m.json.def456.tmp"
    for f in (old, young):
        f.write_text("{")
    past = _time.time() - STALE_TMP_S - 5
    os.utime(old, (past, past))
    write_memory(state, DecisionMemory(step=3))
    assert not old.exists() and young.exists() and read_memory(state).step == 3


@pytest.mark.parametrize("text", ["null", '{"version": 1, "step": 2, "step": 5}', "[]", '"x"'])
def test_null_duplicates_and_non_objects_are_refused_never_a_reset(tmp_path, text):
    state = tmp_path / "m.json"
    state.write_text(text)
    with pytest.raises(BadInput, match="m.json"):
        read_memory(state)


def test_a_daemon_upgraded_in_place_starts_on_the_memory_file_of_the_version_before(
        tmp_path, sim_stack):
    """A state file written by metctl before the default policy became rules (commit
    da10472, every kind of key it wrote): the daemon reads it, decides on it and writes it
    back, keeping what it does not own."""
    before = Path(__file__).parents[1] / "fixtures" / "data" / "memory-before-rules.json"
    path = tmp_path / "memory.json"
    shutil.copy(before, path)
    old = read_memory(path)
    run = sim_stack(memory_path=str(path))
    assert run.loop.memory == old  # started where the old daemon stopped
    run.run(rounds=2)
    assert not run.recorder.errors and run.loop.counters.decisions + run.loop.counters.holds >= 2
    new = read_memory(path)
    assert new == run.loop.memory and new != old
    keys = dict(new.history)
    assert keys["elsewhere.key"] == 1.5 and keys["met.some_future_key"] == 2.0


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def assembly_log():
    """What the assembly says while a daemon is built (metctl's logger may not propagate)."""
    handler, logger = _Lines(), logging.getLogger("metctl.assembly")
    logger.addHandler(handler)
    yield handler.lines
    logger.removeHandler(handler)


def test_keys_no_policy_reads_are_said_once_at_start_kept_and_never_a_crash(
        tmp_path, sim_stack, assembly_log):
    path = tmp_path / "memory.json"
    shutil.copy(FIXTURES / "memory-before-rules.json", path)
    run = sim_stack(memory_path=str(path))
    said = [line for line in assembly_log if "no policy of this version reads" in line]
    assert len(said) == 1 and "elsewhere.key, met.some_future_key" in said[0]
    assert "met.split_load" not in said[0] and "met.reclassify" not in said[0]
    run.run(rounds=2)
    assert not run.recorder.errors and len(assembly_log) == len(said)
    keys = dict(read_memory(path).history)
    assert keys["elsewhere.key"] == 1.5 and keys["met.some_future_key"] == 2.0


def test_a_daemon_upgraded_from_before_split_streaks_keeps_its_split_and_scale_out(
        tmp_path, sim_stack, assembly_log):
    """A state file of the version between commits 2d4396c and bb940e0 (a split recorded
    without its streak, a scale-out without its size): every key is read, as that version
    meant it; the daemon decides on it and writes the split back with its streak."""
    path = tmp_path / "memory.json"
    shutil.copy(FIXTURES / "memory-before-split-streak.json", path)
    old = read_rules_memory(read_memory(path).history)
    assert old.splits == {"usertable": SplitRecord(5000.0, 1795341000.0, 0)}
    assert old.scale_out == PendingScaleOut(1795341600.0, 2400.0, None)
    assert old.no_gain_requests == 1800.0 and old.kept == ()
    run = sim_stack(memory_path=str(path))
    assert run.loop.memory.step == 2 and not assembly_log  # every key read: nothing to say
    run.run(rounds=2)
    assert not run.recorder.errors and run.loop.counters.decisions + run.loop.counters.holds >= 2
    new = read_rules_memory(read_memory(path).history)
    assert new.splits["usertable"] == SplitRecord(5000.0, 1795341000.0, 0)
