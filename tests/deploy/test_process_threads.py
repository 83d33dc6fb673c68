"""Which threads of a process spent its CPU (deploy/localproc/process.py): a named thread that
spins is counted under its kind, its pool's numbered threads add up, an idle one costs ~0."""
from __future__ import annotations

import ctypes
import os
import threading
import time

import pytest

from deploy.localproc.process import thread_kind, threads_cpu_s

PR_SET_NAME = 15


def _named(name: str, spin_s: float, done: threading.Event) -> None:
    ctypes.CDLL(None).prctl(PR_SET_NAME, name.encode(), 0, 0, 0)
    end = time.thread_time() + spin_s
    while time.thread_time() < end:  # CPU time, not wall: the test holds on a busy machine
        pass
    done.wait()


def test_thread_kind_drops_the_pool_number():
    assert thread_kind("GC Thread#3") == thread_kind("GC Thread#11") == "GC Thread"
    assert thread_kind("RpcServer.default.FPBQ.Fifo.handler=12") == "RpcServer.default.FPBQ.Fifo.handler"
    assert thread_kind("main") == "main"


@pytest.mark.parametrize("precise", [False, True])
def test_a_spinning_pool_is_counted_under_its_kind_and_an_idle_thread_is_not(precise):
    # names of this case's own: a joined thread of the other case can linger in /proc a moment
    spinner, idler = ("spinfine", "idlefine") if precise else ("spinstat", "idlestat")
    before = threads_cpu_s(os.getpid(), precise=precise)
    done = threading.Event()
    workers = [threading.Thread(target=_named, args=(f"{spinner}-{i}", 0.3, done)) for i in (1, 2)]
    idle = threading.Thread(target=_named, args=(idler, 0.0, done))
    for t in (*workers, idle):
        t.start()
    deadline = time.monotonic() + 60
    while threads_cpu_s(os.getpid(), precise=precise).get(spinner, 0.0) < 0.5 \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    after = threads_cpu_s(os.getpid(), precise=precise)
    done.set()
    for t in (*workers, idle):
        t.join()
    assert after.get(spinner, 0.0) - before.get(spinner, 0.0) >= 0.5  # both spinners, 0.3 s each
    assert after.get(idler, 0.0) < 0.1


def test_a_process_that_is_gone_has_no_threads():
    assert threads_cpu_s(None) == {}
    assert threads_cpu_s(2 ** 22 + 12345) == {}
    assert threads_cpu_s(2 ** 22 + 12345, precise=True) == {}
