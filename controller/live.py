"""A live cluster as the daemon's backend (controller.assembly): the configured infrastructure
driver (EC2, OpenStack, local processes), the data-store driver (HBase through its py4j gateway,
Cassandra through CQL and NodeTool), their metric sources, the journal on disk and real time.

- hbase: Ganglia + RegionServer /jmx + the HBase driver's server list as sources; under a
  policy that places regions itself HBase's balancer is off from `open_live_backend` until
  `close()` (restored if metctl found it on); under the others it is left as it is.
- cassandra: Ganglia + each node's system_views (CQL) + gossip's server list as sources.

A cluster that cannot be reached is BadInput naming the setting (exit 2), never the Java or
driver exception text.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from actuator.cassandra import CassandraDriver
from actuator.drivers import DataStoreDriver, DriverError, InfrastructureDriver
from actuator.factory import make_cassandra_driver, make_infrastructure
from actuator.hbase import CommandRestarter, HBaseDriver, open_hbase_driver
from actuator.hbase.restart import Restarter
from actuator.journal import Journal
from actuator.local import LocalDriver, LocalRestarter
from actuator.settings import CassandraStoreSettings
from common.errors import BadInput
from common.redact import redact
from controller.clock import RealClock
from controller.config import MetctlConfig
from decision.policies import policy_of
from monitor.live import cassandra_sources, live_sources
from monitor.source import MetricsSource


class LiveBackend:
    """What `open_live_backend` opened; `close()` gives the data store back (HBase's balancer
    restored, the gateway stopped; Cassandra's session closed without waiting for a NodeTool
    run in flight: a decommission goes on inside Cassandra and the next start watches it from
    the journal)."""

    def __init__(self, infrastructure: InfrastructureDriver, datastore: DataStoreDriver,
                 sources: list[MetricsSource], journal: Journal, close: Callable[[], None]):
        self.clock = RealClock()
        self.tenants: Callable[[], dict[str, float]] | None = None  # tenants are the store's
        self.slo_ms: float | None = None
        self.infrastructure, self.datastore = infrastructure, datastore
        self.sources, self.journal = sources, journal
        self._close = close

    def close(self) -> None:
        try:
            self._close()
        finally:
            self.journal.close()


def open_live_backend(config: MetctlConfig, path: str) -> LiveBackend:
    """The live cluster of a config that passed validation (see controller.config)."""
    infra = make_infrastructure(config.infrastructure, config.cluster,
                                profile_settings=config.profile_fields())
    journal_path = Path(config.executor.journal_path)
    if not str(journal_path).startswith("file:"):
        journal_path.parent.mkdir(parents=True, exist_ok=True)
    if config.datastore.driver == "cassandra":
        cassandra = open_cassandra(config, path, journal_path.parent)
        sources = cassandra_sources(config.monitor, cassandra.session, cassandra,
                                    keyspaces=config.datastore.cassandra.keyspaces,
                                    timeout_s=config.datastore.cassandra.query_timeout_s)
        journal = Journal(config.executor.journal_path)
        return LiveBackend(infra, cassandra, sources, journal,
                           lambda: cassandra.close(wait=False))
    hbase = _open_hbase(config, path, infra, journal_path)
    try:
        journal = Journal(config.executor.journal_path)
    except BaseException:
        hbase.close()
        raise
    return LiveBackend(infra, hbase, live_sources(config.monitor, admin=hbase), journal,
                       hbase.close)


def _unreachable(path: str, quorum: str, err: BaseException) -> BadInput:
    """A config that cannot reach its cluster: one plain line naming the setting, exit 2
    (README), never the Java exception text."""
    text = str(err)
    if "Exception:" in text:  # py4j: "An error occurred while calling o2.x. : org...Exception: why"
        text = text.split("Exception:", 1)[1]
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(err).__name__)
    first = re.split(r"\s+at (?:org|java|jdk|sun|com)\.", first)[0]  # no Java stack frames
    return BadInput(path, "datastore.hbase.zookeeper_quorum",
                    f"a reachable HBase cluster at {quorum} ({redact(first)[:200]})")


def cassandra_unreachable(path: str, settings: CassandraStoreSettings,
                          err: BaseException) -> BadInput:
    """The Cassandra form of `_unreachable`: the contact points named, the client's first line."""
    first = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
    return BadInput(path, "datastore.cassandra.contact_points",
                    f"reachable Cassandra nodes at {', '.join(settings.contact_points)} port "
                    f"{settings.native_port} ({redact(first)[:200]})")


def open_cassandra(config: MetctlConfig, path: str, state_dir: Path) -> CassandraDriver:
    """The Cassandra driver of a live config; an unreachable cluster is BadInput (exit 2)."""
    try:
        return make_cassandra_driver(config.datastore.cassandra, state_dir,
                                     restart_timeout_s=config.executor.restart_timeout_s)
    except DriverError as err:
        raise cassandra_unreachable(path, config.datastore.cassandra, err) from None


def _open_hbase(config: MetctlConfig, path: str, infra: InfrastructureDriver,
                journal_path: Path) -> HBaseDriver:
    """The HBase driver (py4j gateway) with its restarter; under a policy that places regions
    itself the balancer is off from here until the driver is closed (restored if metctl found
    it on)."""
    hb = config.datastore.hbase
    restarter: Restarter | None = (
        CommandRestarter(list(hb.restart_command), timeout_s=config.executor.restart_timeout_s)
        if hb.restart_command else None)
    if isinstance(infra, LocalDriver):
        # RegionServers metctl launched restart through the local driver (it records their new
        # PID); the others through the restart command
        restarter = LocalRestarter(infra, fallback=restarter, host_format=hb.host_format)
    # The gateway opens here: an unreachable cluster is an error (exit 1), not bad input.
    try:
        driver = open_hbase_driver(hb, restarter=restarter, host_format=hb.host_format,
                                   log_file=str(journal_path.with_name("hbase-gateway.log")),
                                   settings_for=config.hbase_settings())
    except Exception as err:  # noqa: BLE001 — Java exception text is not for the operator
        raise _unreachable(path, hb.zookeeper_quorum, err) from None
    # A policy that places regions itself (met, met-paper: decision/policies.py) runs with
    # HBase's balancer off, which would undo its moves (restored on exit); the others leave it
    # as it is, to give new RegionServers regions (tiramola, target-tracking; static is plain
    # HBase). The first call that reaches the cluster: the gateway connects lazily.
    try:
        if policy_of(config.policy).places_partitions:
            driver.set_balancer(False)
        else:
            driver.servers()
    except Exception as err:  # noqa: BLE001
        driver.close()
        raise _unreachable(path, hb.zookeeper_quorum, err) from None
    return driver


__all__ = ["LiveBackend", "open_live_backend", "open_cassandra", "cassandra_unreachable"]
