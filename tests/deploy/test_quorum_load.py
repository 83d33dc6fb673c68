"""The Cassandra load's durability check (deploy/local_cassandra/load.py): a write that failed
after the key's last acknowledged one has an unknown outcome (a coordinator's WriteTimeout comes
after some replicas applied it), so reading its value back is not a lost write; losing the
acknowledged value still is. A table kept in memory stands in for the replicas."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from deploy.local_cassandra.load import QuorumLoad


class Replicas:
    """Rows in memory; the writes numbered in `time_out` are applied, then reported as timed out."""

    def __init__(self, time_out: set[int]):
        self.rows: dict[str, str] = {}
        self.time_out, self.writes = time_out, 0

    def prepare(self, cql: str) -> Any:
        return SimpleNamespace(cql=cql, consistency_level=None)

    def execute(self, statement: Any, args: tuple, timeout: float) -> Any:
        if statement.cql.startswith("INSERT"):
            self.writes += 1
            self.rows[args[0]] = args[1]
            if self.writes in self.time_out:
                raise TimeoutError("Operation timed out - received only 2 responses.")
            return None
        value = self.rows.get(args[0])
        return SimpleNamespace(one=lambda: None if value is None else SimpleNamespace(field0=value))


def test_a_timed_out_write_read_back_is_not_a_lost_write() -> None:
    replicas = Replicas(time_out={2})
    load = QuorumLoad(replicas, "demo.usertable", keys=1)  # every write to user0
    load.write()
    acked = replicas.rows["user0"]
    load.write()  # timed out, but applied
    assert load.failed == 1 and replicas.rows["user0"] != acked
    assert load.verify() == []
    del replicas.rows["user0"]  # the acknowledged value gone: lost
    assert load.verify() == ["user0"]


def test_an_acknowledged_write_supersedes_the_unknown_ones_before_it() -> None:
    replicas = Replicas(time_out={2})
    load = QuorumLoad(replicas, "demo.usertable", keys=1)
    load.write()
    load.write()  # timed out
    unknown = replicas.rows["user0"]
    load.write()  # acknowledged: the value a read must find from now on
    replicas.rows["user0"] = unknown
    assert load.verify() == ["user0"]
