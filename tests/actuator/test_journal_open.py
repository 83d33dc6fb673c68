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
