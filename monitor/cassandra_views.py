"""Cassandra 5 as a metrics source: per-table, per-node request counters from the `system_views`
virtual tables over CQL (no JMX needed).

Virtual tables are node-local, so each live node is asked itself (the python driver's
`execute(..., host=)`). Per node and user table:

    local_read_latency.count   -> PartitionSample.reads   (every replica read, data and digest)
    local_write_latency.count  -> PartitionSample.writes  (every replica write: RF per client write)
    local_scan_latency.count   -> PartitionSample.scans   (range reads)
    disk_usage.mebibytes       -> PartitionSample.size_mb

The counts are cumulative since the node started; the collector turns them into rates and treats
a drop (a restarted node) as a reset, as for HBase regions. A partition is `keyspace.table@node
address` (docs/cassandra.md); `keyspaces` limits it to the configured ones
(datastore.cassandra.keyspaces). Host CPU comes from Ganglia as for HBase.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterable

from monitor.source import PartitionSample, Sample

log = logging.getLogger(__name__)

SYSTEM_KEYSPACES = frozenset({"system", "system_auth", "system_schema", "system_distributed",
                              "system_traces", "system_views", "system_virtual_schema",
                              "system_cluster_metadata"})
COUNTERS = (("reads", "local_read_latency"), ("writes", "local_write_latency"),
            ("scans", "local_scan_latency"))


def partition_id(table: str, address: str) -> str:
    return f"{table}@{address}"


class CassandraViewsSource:
    """A MetricsSource over a python cassandra-driver Session."""

    def __init__(self, session: Any, clock: Callable[[], float] = time.time, timeout_s: float = 5.0,
                 keyspaces: Iterable[str] = ()):
        self.session = session
        self.clock = clock
        self.timeout = timeout_s
        self.keyspaces = frozenset(keyspaces)  # empty: every keyspace but the system ones

    def _watched(self, keyspace: str) -> bool:
        return keyspace not in SYSTEM_KEYSPACES and (not self.keyspaces or keyspace in self.keyspaces)

    def _rows(self, view: str, columns: str, host: Any) -> list[Any]:
        from cassandra.query import SimpleStatement

        return list(self.session.execute(SimpleStatement(f"SELECT {columns} FROM system_views.{view}"),
                                         timeout=self.timeout, host=host))

    def sample_host(self, host: Any) -> list[PartitionSample]:
        per: dict[str, dict[str, float]] = {}
        for field, view in COUNTERS:
            for r in self._rows(view, "keyspace_name, table_name, count", host):
                if not self._watched(r.keyspace_name):
                    continue
                per.setdefault(f"{r.keyspace_name}.{r.table_name}", {})[field] = float(r.count)
        sizes = {f"{r.keyspace_name}.{r.table_name}": float(r.mebibytes)
                 for r in self._rows("disk_usage", "keyspace_name, table_name, mebibytes", host)
                 if self._watched(r.keyspace_name)}
        addr = host.address
        return [PartitionSample(id=partition_id(t, addr), table=t, server=addr,
                                reads=c.get("reads", 0.0), writes=c.get("writes", 0.0),
                                scans=c.get("scans", 0.0), size_mb=sizes.get(t))
                for t, c in sorted(per.items()) if len(c) == len(COUNTERS)]

    def sample(self) -> Sample:
        taken_at = self.clock()
        parts: list[PartitionSample] = []
        errors: list[str] = []
        seen: list[str] = []
        for host in sorted(self.session.cluster.metadata.all_hosts(), key=lambda h: h.address):
            if host.is_up is False:
                errors.append(f"cassandra {host.address}: down")
                continue
            try:
                parts += self.sample_host(host)
                seen.append(host.address)
            except Exception as err:  # noqa: BLE001 — reported, never raised (MetricsSource contract)
                msg = f"cassandra {host.address}: system_views unavailable ({type(err).__name__}: {err})"
                log.warning("%s", msg)
                errors.append(msg)
        return Sample(taken_at=taken_at, partitions=tuple(parts), servers=tuple(seen), errors=tuple(errors))
