"""Several controllers opening one shared journal at the same moment (HA fail-over, restarts):
every one of them must get a working journal, none may die with "database is locked"."""
import multiprocessing as mp

from actuator.journal import Journal


def _open_and_report(path, barrier, results):
    barrier.wait()
    try:
        Journal(path).close()
        results.put("ok")
    except Exception as err:  # noqa: BLE001 — reported to the parent, which asserts on it
        results.put(repr(err))


def test_concurrent_openers_of_a_new_shared_journal_all_succeed(tmp_path):
    ctx = mp.get_context("fork")
    outcomes = []
    for trial in range(8):  # the race was lost ~1 time in 8 openers on this machine
        path = str(tmp_path / f"journal-{trial}.sqlite")
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_and_report, args=(path, barrier, results)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        outcomes += [results.get(timeout=10) for _ in procs]
    assert outcomes == ["ok"] * len(outcomes)


def test_a_journal_that_is_a_symbolic_link_is_refused_and_its_target_untouched(tmp_path):
    """Issue 24 item 21: the journal followed symlinks (creating, chmod-ing the target)."""
    import os
    import stat

    import pytest

    from common.errors import BadInput

    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"someone else's file")
    target.chmod(0o644)
    link = tmp_path / "state" / "journal.sqlite"
    link.parent.mkdir()
    link.symlink_to(target)
    with pytest.raises(BadInput, match="symbolic link"):
        Journal(link)
    assert target.read_bytes() == b"someone else's file"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    # a dangling link is not created through either
    dangling = tmp_path / "state" / "other.sqlite"
    dangling.symlink_to(tmp_path / "nowhere.db")
    with pytest.raises(BadInput, match="symbolic link"):
        Journal(dangling)
    assert not (tmp_path / "nowhere.db").exists()
