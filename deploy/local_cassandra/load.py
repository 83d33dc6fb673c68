"""A small QUORUM read/write load over the python cassandra-driver (the stand-in for YCSB in the
Cassandra tests and `make demo-cassandra`): counts what succeeded and what failed per second, and
remembers every acknowledged write so it can be read back afterwards (and every write that
failed after it: its outcome is unknown, so it may be what a later read finds)."""
from __future__ import annotations

import random
import threading
import time
from collections import defaultdict
from typing import Any


class QuorumLoad:
    def __init__(self, session: Any, table: str, keys: int = 2000, seed: int = 15):
        from cassandra import ConsistencyLevel

        self.session, self.table = session, table
        self.insert = session.prepare(f"INSERT INTO {table} (y_id, field0) VALUES (?, ?)")
        self.select = session.prepare(f"SELECT field0 FROM {table} WHERE y_id = ?")
        for st in (self.insert, self.select):
            st.consistency_level = ConsistencyLevel.QUORUM
        self.keys = keys
        self.rng = random.Random(seed)
        self.ok_writes = self.ok_reads = self.failed = 0
        self.errors: list[str] = []
        self.written: dict[str, str] = {}
        # values of writes that failed since the key's last acknowledged one: a timed-out write
        # may still have reached replicas (WriteTimeout: "received only 2 responses"), and its
        # client timestamp is later than the acknowledged one's, so a read may rightly return it
        self.unknown: dict[str, set[str]] = defaultdict(set)
        self.timeline: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # epoch second -> [ok, failed]
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def availability(self) -> float:
        total = self.ok_writes + self.ok_reads + self.failed
        return 1.0 if total == 0 else (self.ok_writes + self.ok_reads) / total

    def write(self) -> None:
        k, v = f"user{self.rng.randrange(self.keys)}", f"{self.rng.getrandbits(64):x}" * 6
        try:
            self.session.execute(self.insert, (k, v), timeout=10)
            self.written[k] = v
            self.unknown.pop(k, None)
            self.ok_writes += 1
            self.timeline[int(time.time())][0] += 1
        except Exception as err:  # noqa: BLE001 — any failure counts against availability
            self.unknown[k].add(v)
            self.failed += 1
            self.timeline[int(time.time())][1] += 1
            self.errors.append(f"write {k}: {type(err).__name__}: {err}")

    def read(self) -> None:
        k = f"user{self.rng.randrange(self.keys)}"
        try:
            self.session.execute(self.select, (k,), timeout=10)
            self.ok_reads += 1
            self.timeline[int(time.time())][0] += 1
        except Exception as err:  # noqa: BLE001
            self.failed += 1
            self.timeline[int(time.time())][1] += 1
            self.errors.append(f"read {k}: {type(err).__name__}: {err}")

    def window(self, t0: float, t1: float) -> tuple[int, int]:
        """(ok, failed) operations in the whole seconds from t0 to t1."""
        ok = failed = 0
        for sec, (o, f) in list(self.timeline.items()):
            if t0 <= sec < t1:
                ok, failed = ok + o, failed + f
        return ok, failed

    def run_ops(self, writes: int, reads: int) -> None:
        for _ in range(writes):
            self.write()
        for _ in range(reads):
            self.read()

    def start(self, pause_s: float = 0.0) -> None:
        """Write and read in a loop, `pause_s` between iterations (a light probe beside a
        measured load when above 0)."""
        def loop() -> None:
            while not self._stop.is_set():
                self.write()
                self.read()
                if pause_s:
                    self._stop.wait(pause_s)
        self._thread = threading.Thread(target=loop, daemon=True, name="quorum-load")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=30)

    def verify(self, tries: int = 3) -> list[str]:
        """Keys whose last acknowledged write does not read back at QUORUM (nor a write that
        failed after it, whose outcome is unknown: not acknowledged, so not lost). A read that times
        out is asked again (up to `tries` times): verify judges durability, and availability is
        counted by the load itself (a replica answering late right after a node left once failed
        a CI run here). A read that still fails raises."""
        from cassandra import OperationTimedOut, ReadTimeout

        bad = []
        for k, v in self.written.items():
            for attempt in range(tries):
                try:
                    row = self.session.execute(self.select, (k,), timeout=10).one()
                    break
                except (ReadTimeout, OperationTimedOut):
                    if attempt == tries - 1:
                        raise
                    time.sleep(1)
            if row is None or (row.field0 != v and row.field0 not in self.unknown.get(k, ())):
                bad.append(k)
        return bad
