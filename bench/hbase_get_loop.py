"""Rows to read and a loop of gets that records what each one waited: the client's side of the
region benches (measure_split_hbase, measure_move_hbase). A get's time includes the HBase
client's retries (NotServingRegionException, then `hbase.client.pause` x its backoff), which is
what a tenant waits while a region is closed."""
from __future__ import annotations

import random
import threading
import time
from typing import Any

FAMILY = b"f"
VALUE = b"v" * 1024  # one 1 KiB field: YCSB's record size (simulator.costs.record_kb)


def row_key(i: int) -> bytes:
    return f"user{i:08d}".encode()


def load(gw: Any, table: Any, first: int, count: int, batch: int = 500) -> None:
    hb = gw.jvm.org.apache.hadoop.hbase
    for start in range(first, first + count, batch):
        puts = []
        for i in range(start, min(start + batch, first + count)):
            p = hb.client.Put(row_key(i))
            p.addColumn(FAMILY, b"field0", VALUE)
            puts.append(p)
        table.put(puts)


class GetLoop:
    """`threads` threads read random rows of [0, rows) from `table_name`, together at most
    `rate` operations/s (0: as fast as they can); a share `update_share` of them write the row
    instead (YCSB's update: one 1 KiB field). `gets` holds (start, seconds, row) of each get;
    `puts` counts the writes."""

    def __init__(self, gw: Any, table_name: str, rows: int, *, threads: int = 1, rate: float = 0,
                 update_share: float = 0.0, seed: int = 1):
        self.gw, self.table_name, self.rows = gw, table_name, rows
        self.threads, self.rate, self.seed = threads, rate, seed
        self.update_share = update_share
        self.gets: list[tuple[float, float, int]] = []  # list.append is atomic: threads share it
        self._puts: list[int] = [0] * threads  # one count per thread (no lock on the hot path)
        self._stop = threading.Event()
        self._workers: list[threading.Thread] = []

    def _run(self, n: int) -> None:
        hb = self.gw.jvm.org.apache.hadoop.hbase
        table = self.gw.connection.getTable(hb.TableName.valueOf(self.table_name))
        rng = random.Random(self.seed * 1000 + n)
        every = self.threads / self.rate if self.rate > 0 else 0.0
        due = time.monotonic()
        while not self._stop.is_set():
            if every:
                due += every
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
            row = rng.randrange(self.rows)
            if self.update_share and rng.random() < self.update_share:
                put = hb.client.Put(row_key(row))
                put.addColumn(FAMILY, b"field0", VALUE)
                table.put(put)
                self._puts[n] += 1
                continue
            a = time.monotonic()
            table.get(hb.client.Get(row_key(row)))
            self.gets.append((a, time.monotonic() - a, row))

    @property
    def puts(self) -> int:
        return sum(self._puts)

    def start(self) -> "GetLoop":
        for n in range(self.threads):
            th = threading.Thread(target=self._run, args=(n,), daemon=True)
            th.start()
            self._workers.append(th)
        return self

    def stop(self) -> None:
        self._stop.set()
        for th in self._workers:
            th.join(timeout=120)
