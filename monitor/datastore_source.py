"""The data store's own view of its servers as a metrics source: which servers are alive and the
profile each one runs (e.g. the HBase driver's `servers()`, which reads each RegionServer's
`/conf`). The /jmx source cannot know a server's profile, so without this source every live
snapshot would show each node as `default` and each decision would re-plan restarts already done.

`store` is anything with `servers() -> list of objects with id, profile, state` (the actuator's
`ServerInfo`; duck-typed so the monitor does not import the actuator). The collector merges this
sample with the other sources' (partitions from /jmx, host metrics from Ganglia).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Protocol, Sequence

from monitor.source import Sample

log = logging.getLogger(__name__)

# Server states that mean "up and part of the cluster" (ServerInfo.state); a stopped or starting
# server is not reported as seen, though its profile still is.
ALIVE_STATES = frozenset({"active", "draining"})


class ServerLister(Protocol):
    def servers(self) -> Sequence[Any]:
        """Each server with `id`, `profile` and `state` attributes. May raise."""


class DataStoreSource:
    """A MetricsSource reporting `servers` and `server_profiles` (nothing else) from a store."""

    def __init__(self, store: ServerLister, clock: Callable[[], float] = time.time):
        self.store = store
        self.clock = clock

    def sample(self) -> Sample:
        taken_at = self.clock()
        try:
            listed = list(self.store.servers())
        except Exception as err:  # noqa: BLE001 — a gateway may fail in many ways; reported, never raised
            msg = f"data store: server list unavailable ({type(err).__name__}: {err})"
            log.warning("%s", msg)
            return Sample(taken_at=taken_at, errors=(msg,))
        profiles = {s.id: s.profile for s in listed if getattr(s, "profile", None)}
        alive = tuple(s.id for s in listed if getattr(s, "state", "active") in ALIVE_STATES)
        return Sample(taken_at=taken_at, servers=alive, server_profiles=profiles)
