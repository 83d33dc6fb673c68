"""`metctl status` on journals written by the real executor: the plan in flight or the latest,
each action's state, the last errors; JSON and table; bad input is one line and exit 2."""
from __future__ import annotations

import json

import pytest

from tests.fakes.plans import write_journal
from controller.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_status_json_shows_the_stopped_plan_its_actions_and_errors(tmp_path, capsys):
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=True)
    code, out, err = run(capsys, "status", "--journal", str(path), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["plan"]["plan_id"] == "plan-7" and doc["plan"]["state"] == "failed"
    assert "p6" in doc["plan"]["error"] and doc["plan"]["committed"] is False
    move = next(a for a in doc["actions"] if a.get("partition") == "p6" and "parent" not in a)
    assert move["state"] == "failed" and move["attempts"] == 2
    assert any("p6" in e["message"] for e in doc["errors"])
    assert doc["in_flight"] is None and doc["recent_plans"][0]["plan_id"] == "plan-7"


def test_status_shows_a_plan_in_flight_as_a_table(tmp_path, capsys):
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=False, finish=False)
    code, out, err = run(capsys, "status", "--journal", str(path))
    assert code == 0, err
    assert "plan plan-7" in out and "running" in out and "launch" in out and "new-1" in out


def test_status_reads_the_journal_named_by_the_config(tmp_path, capsys):
    path = tmp_path / "state" / "journal.sqlite"
    write_journal(path, fail_move=False)
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text(f"cluster: demo\ndatastore: {{driver: sim}}\nexecutor:\n  journal_path: {path}\n")
    code, out, err = run(capsys, "status", "--config", str(cfg), "--format", "json")
    assert code == 0, err
    assert json.loads(out)["plan"]["state"] == "done"


def test_missing_or_foreign_journal_is_bad_input(tmp_path, capsys):
    code, out, err = run(capsys, "status", "--journal", str(tmp_path / "nope.sqlite"))
    assert code == 2 and len(err.splitlines()) == 1 and "no such journal file" in err
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all, just text" * 10)
    code, out, err = run(capsys, "status", "--journal", str(junk))
    assert code == 2 and len(err.splitlines()) == 1 and "not a metctl journal" in err
    assert not (tmp_path / "nope.sqlite").exists()


def test_unknown_plan_id_is_bad_input(tmp_path, capsys):
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=False)
    code, out, err = run(capsys, "status", "--journal", str(path), "--plan", "nope")
    assert code == 2 and "no plan 'nope'" in err


def _tamper(path, sql: str, *args) -> None:
    import sqlite3
    con = sqlite3.connect(path)
    con.execute(sql, args)
    con.commit()
    con.close()


def _set_reason(path, reason: str) -> None:
    import sqlite3
    con = sqlite3.connect(path)
    doc = json.loads(con.execute("SELECT plan_json FROM plans").fetchone()[0])
    doc["reason"] = reason
    con.execute("UPDATE plans SET plan_json = ?", (json.dumps(doc),))
    con.commit()
    con.close()


def test_markup_and_escapes_from_the_journal_are_shown_literally(tmp_path, capsys):
    # `rs1[/],16020` crashed the table; `[bold red]rs1[/bold red]` showed as `rs1`; raw ESC
    # sequences from stored errors reached the terminal.
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=True)
    _tamper(path, "UPDATE plans SET error = ?", "[bold red]rs1[/bold red] \x1b[2J gone")
    _set_reason(path, "rs1[/],16020")
    _tamper(path, "UPDATE steps SET error = ? WHERE error IS NOT NULL", "[/] \x1b]0;title\x07")
    _tamper(path, "UPDATE events SET message = ?", "[link=http://x]y[/link] \x1b[31mred")
    code, out, err = run(capsys, "status", "--journal", str(path))
    assert code == 0, err
    assert "[bold red]rs1[/bold red]" in out and "rs1[/],16020" in out
    assert "[link=http://x]y[/link]" in out and "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J" in out


def test_a_huge_reason_is_cut_in_the_table_and_whole_in_json(tmp_path, capsys):
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=False)
    _set_reason(path, "x" * 1_000_000)
    code, out, err = run(capsys, "status", "--journal", str(path))
    assert code == 0 and "more characters; --format json shows all" in out and len(out) < 100_000
    code, out, err = run(capsys, "status", "--journal", str(path), "--format", "json")
    assert code == 0 and len(json.loads(out)["plan"]["reason"]) == 1_000_000


def test_status_json_is_strict_json(tmp_path, capsys):
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=False)
    _tamper(path, "UPDATE plans SET plan_json = ?", '{"summary": {"max_load_ratio": NaN}, "x": Infinity}')
    code, out, err = run(capsys, "status", "--journal", str(path), "--format", "json")
    assert code == 0, err

    def refuse(name):
        raise ValueError(name)
    json.loads(out, parse_constant=refuse)
    assert "NaN" not in out and "Infinity" not in out


CORRUPTIONS = [
    ("UPDATE plans SET plan_json = 'null'", ()),
    ("UPDATE plans SET plan_json = '[1'", ()),
    ("UPDATE plans SET state = 'exploded'", ()),
    ("UPDATE events SET at = 'yesterday'", ()),
    ("UPDATE steps SET idx = 'first' WHERE idx = 1", ()),
    ("ALTER TABLE steps DROP COLUMN note", ()),
    ("ALTER TABLE events DROP COLUMN message", ()),
    ("UPDATE plans SET created_at = 'x', updated_at = 'y'", ()),
]


def test_a_corrupted_journal_is_bad_input_naming_it(tmp_path, capsys):
    outcomes = []
    for i, (sql, args) in enumerate(CORRUPTIONS):
        path = tmp_path / f"j{i}.sqlite"
        write_journal(path, fail_move=True)
        _tamper(path, sql, *args)
        for fmt in ("table", "json"):
            code, out, err = run(capsys, "status", "--journal", str(path), "--format", fmt)
            outcomes.append(code)
            # the last line: an earlier test's logging handler on a closed stream may complain
            # above it when write_journal's executor logs (test pollution, not metctl output)
            last = err.strip().splitlines()[-1] if err.strip() else ""
            assert code in (0, 2) and (code == 0 or (str(path) in last and last.startswith("metctl: "))), (sql, err)
    path = tmp_path / "bytes.sqlite"
    write_journal(path, fail_move=True)
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xff" * 4096  # a malformed page
    path.write_bytes(bytes(data))
    code, out, err = run(capsys, "status", "--journal", str(path))
    assert code == 2 and str(path) in err.strip().splitlines()[-1], err
    assert outcomes.count(2) >= 6


def test_an_unknown_plan_state_is_refused_loudly(tmp_path, capsys):
    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=False)
    _tamper(path, "UPDATE plans SET state = 'exploded'")
    code, out, err = run(capsys, "status", "--journal", str(path))
    assert code == 2 and "exploded" in err and "plans.state" in err


@pytest.mark.parametrize("sql, field", [
    ("UPDATE plans SET state = 'exploded'", "plans.state"),
    ("UPDATE plans SET phase = 'limbo'", "plans.phase"),
    ("UPDATE steps SET idx = 'first' WHERE idx = 1", "steps.idx"),
    ("UPDATE steps SET state = 'weird' WHERE idx = 1", "steps.state"),
    ("UPDATE steps SET since = 'noon' WHERE idx = 1", "steps.since"),
])
def test_resuming_a_tampered_journal_is_refused_naming_journal_and_field(tmp_path, sql, field):
    """The executor never resumes a plan it cannot read as it wrote it: no silent drop of an
    unknown state, no TypeError inside a tick later."""
    from actuator.executor import Executor
    from tests.fakes.cluster import FakeCluster, FakeDataStore, FakeInfrastructure
    from actuator.journal import Journal
    from actuator.settings import ExecutorSettings
    from common.errors import BadInput

    path = tmp_path / "j.sqlite"
    write_journal(path, fail_move=False)
    _tamper(path, sql)
    cluster = FakeCluster()
    executor = Executor(FakeInfrastructure(cluster), FakeDataStore(cluster), ExecutorSettings(),
                        lambda: 0.0, "demo", journal=Journal(path))
    with pytest.raises(BadInput) as err:
        executor.resume()
    assert str(path) in str(err.value) and field in str(err.value)
