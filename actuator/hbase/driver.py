"""The HBase data-store driver: metctl's `DataStoreDriver` over HBase's own Admin API, reached
through a py4j gateway (actuator/hbase_gateway.py). What it observes (servers, partitions,
region metrics) is actuator/hbase/topology.py's; this module starts the operations.

START AND OBSERVE: move_partition, restart_server, decommission, compact and split_partition
check their arguments, START the operation and return at once; the operation runs on the
driver's worker threads (HBase's Admin.move and decommissionRegionServers wait on the master's
procedure). The caller observes completion through servers() / partitions() on later calls, and
decides how long is too long (metctl's executor: its one timeout table). The driver has no
timeouts of its own; a failed operation is logged and shows as "not done" to the observer.

- move_partition: `Admin.move(encodedName, ServerName)`; a move to where it already is does
  nothing; a target not live or a region that does not exist is refused at once.
- restart_server: renders the profile's hbase-site.xml settings (profiles.render_hbase_settings)
  and hands them to a `Restarter` (block cache and global memstore size only change on restart);
  the local-process one runs deploy/local_hbase/cluster.py restart-rs. Done when servers() shows
  it active with the new profile.
- compact / compaction_running: major compaction of one region and its state.
- split_partition: `Admin.splitRegionAsync(encodedName)` at HBase's split point; refused at once
  if HBase will not split it; done when partitions() lists its two daughters instead of it.
- decommission: `decommissionRegionServers(offload=true)` (regions move off, nothing new lands
  there), once it serves nothing a graceful `stopRegionServer`. Done when servers() no longer
  lists it.
- set_balancer: `balancerSwitch`; `close()` switches it back on if metctl found it on.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Mapping

from actuator.drivers import DriverError
from actuator.hbase.errors import java_reason, split_refusal
from actuator.hbase.restart import PROFILE_KEY, Restarter, default_settings_for
from actuator.hbase.topology import HBaseTopology, host_port
from actuator.hbase_gateway import HBaseGateway
from actuator.settings import quorum_hosts_and_port

log = logging.getLogger("actuator.hbase")


class HBaseDriver(HBaseTopology):
    """DataStoreDriver for HBase 2.x. `gateway` must be open (or is opened on first use)."""

    def __init__(self, gateway: HBaseGateway, *, restarter: Restarter | None = None,
                 settings_for: Callable[[str], Mapping[str, str]] = default_settings_for,
                 poll_s: float = 0.3, host_format: str = "{host}", conf_timeout_s: float = 10.0,
                 workers: int = 4, move_issues: int = 10, confirm_looks: int = 15):
        super().__init__(gateway, host_format=host_format, conf_timeout_s=conf_timeout_s)
        self.restarter = restarter
        self.settings_for = settings_for
        self.poll_s = poll_s  # how often a background operation looks at its progress
        # a move is issued at most move_issues times, each followed by confirm_looks looks at
        # hbase:meta (poll_s apart); counts, not deadlines: the caller's timeout decides when
        # a move is late, and a newer move of the same region ends this one
        self.move_issues, self.confirm_looks = move_issues, confirm_looks
        # operations started and not yet ended, by key ("move <region>", "decommission <server>");
        # a newer start of the same key supersedes the older one (it ends at its next look)
        self._ops: dict[str, object] = {}
        self._ops_lock = threading.Lock()
        self._closing = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hbase-op")
        self._balancer_was_on: bool | None = None  # what metctl found, to restore on close
        # regions this driver split: minutes after a split HBase's catalog janitor purges the
        # parent from hbase:meta, and a region HBase no longer knows must still count as split
        self._split_started: set[str] = set()

    # -- operations: started here, run on the worker threads, observed by the caller ---------

    def _start(self, key: str, fn: Callable[[Callable[[], bool]], None]) -> None:
        """Run `fn(current)` on a worker thread; `current()` turns False once the operation is
        superseded by a newer start of the same key or the driver closes."""
        token = object()
        with self._ops_lock:
            self._ops[key] = token

        def current() -> bool:
            return not self._closing.is_set() and self._ops.get(key) is token

        def run() -> None:
            try:
                fn(current)
            except Exception as e:  # noqa: BLE001 - the caller observes "not done"; say why here
                log.warning("HBase %s failed: %s", key, e)
            finally:
                with self._ops_lock:
                    if self._ops.get(key) is token:
                        del self._ops[key]

        self._pool.submit(run)

    def in_progress(self) -> list[str]:
        """Operations started and not ended yet (for logs and tests)."""
        with self._ops_lock:
            return sorted(self._ops)

    def _wait(self, current: Callable[[], bool], done: Callable[[], bool]) -> bool:
        """Look at `done()` every poll_s while the operation is current; False once it is not."""
        while current():
            if done():
                return True
            time.sleep(self.poll_s)
        return False

    def move_partition(self, partition_id: str, target_server: str) -> None:
        """Start a move and return. Refused at once (DriverError): a target that is not live, a
        region that does not exist (not retryable)."""
        target = host_port(target_server)
        seen = self._seen.get(partition_id)
        where = seen[1] if seen is not None else self._where(partition_id)
        if where == target:  # (a stale "elsewhere" is harmless: the master skips a no-op move)
            return
        sn = self._server_name(target)

        def move(current: Callable[[], bool]) -> None:
            for _ in range(self.move_issues):
                if not current():
                    return
                try:
                    self._call(f"move {partition_id} -> {target}", lambda: self.admin.move(partition_id.encode(), sn))
                except DriverError as e:
                    # a RegionServer the master already counts may still be opening its RPC
                    # services: try again
                    if "ServerNotRunningYet" not in str(e):
                        raise
                    time.sleep(self.poll_s)
                    continue
                # Admin.move returns when the master's procedure ends; a server still starting
                # may have been passed over (the region stays or goes elsewhere): look a few
                # times, then issue the move again
                for _look in range(self.confirm_looks):
                    if self._where(partition_id) == target or not current():
                        return
                    time.sleep(self.poll_s)
                log.info("region %s is not on %s after the move: moving it again", partition_id, target)

        self._start(f"move {partition_id}", move)

    def restart_server(self, server_id: str, profile: str) -> None:
        """Start a restart with `profile` and return; done when servers() shows it active with
        that profile."""
        if self.restarter is None:
            raise DriverError("no restarter configured for RegionServer restarts", retryable=False)
        settings = {**self.settings_for(profile), PROFILE_KEY: profile}
        sid = host_port(server_id)
        restarter = self.restarter
        self._start(f"restart {sid}", lambda current: restarter(sid, settings))

    def compact(self, partition_id: str) -> None:
        self._call(f"majorCompactRegion {partition_id}",
                   lambda: self.admin.majorCompactRegion(partition_id.encode()))

    def compaction_running(self, partition_id: str) -> bool:
        state = self._call(f"getCompactionStateForRegion {partition_id}",
                           lambda: self.admin.getCompactionStateForRegion(partition_id.encode()))
        return str(state.name()) != "NONE"

    def split_partition(self, partition_id: str) -> None:
        """Start splitting a region at HBase's own split point and return once the master has
        taken the request (its procedure then runs for a second or two). Refused at once
        (DriverError naming HBase's reason): a region that does not exist or that HBase finds
        no split point in (not retryable), one in transition or still holding references to
        its own parent's files (retryable). A region already split is left alone."""
        key = f"split {partition_id}"
        if key in self.in_progress():
            return
        try:
            future = self._call(key, lambda: self.admin.splitRegionAsync(partition_id.encode()))
        except DriverError as e:
            java_class, reason = java_reason(e)
            if not java_class:  # the gateway itself failed, not HBase
                raise
            if java_class.endswith(".UnknownRegionException"):
                if partition_id in self._split_started:
                    return
                raise DriverError(f"no region {partition_id}", retryable=False) from e
            refusal = split_refusal(partition_id, reason)
            if refusal is None:
                return
            raise refusal from e
        self._split_started.add(partition_id)

        def finish(current: Callable[[], bool]) -> None:
            # the procedure can still fail after the master took it (a RegionServer dying
            # mid-split rolls it back): wait on its future so that the failure is logged
            unit = self.jvm.java.util.concurrent.TimeUnit.MILLISECONDS
            while current():
                try:
                    self._call(key, lambda: future.get(int(self.poll_s * 1000), unit))
                    return
                except DriverError as e:
                    if java_reason(e)[0] != "java.util.concurrent.TimeoutException":
                        raise

        self._start(key, finish)

    def decommission(self, server_id: str) -> None:
        """Start draining `server_id` (HBase picks the targets; nothing new lands there), then,
        once it serves nothing, stop it gracefully; return at once. Done when servers() no
        longer lists it. Idempotent: a server that is already gone is left alone."""
        sid = host_port(server_id)
        sn = self._server_names().get(sid)
        if sn is None:
            return

        def drain(current: Callable[[], bool]) -> None:
            self._call(f"decommission {sid}",
                       lambda: self.admin.decommissionRegionServers([sn], True))  # list -> java List
            if not self._wait(current, lambda: self._call(
                    "getRegions", lambda: self.admin.getRegions(sn)).size() == 0):
                return
            self._call(f"stopRegionServer {sid}",
                       lambda: self.admin.stopRegionServer(f"{sn.getHostname()}:{sn.getPort()}"))
            if not self._wait(current, lambda: sid not in self._server_names()):
                return
            # The draining mark names the old start code; clear it so a later server on the same
            # host:port is not born decommissioned.
            self._call("recommission", lambda: self.admin.recommissionRegionServer(sn, []))

        self._start(f"decommission {sid}", drain)

    def set_balancer(self, enabled: bool) -> bool:
        was_on = bool(self._call("balancerSwitch", lambda: self.admin.balancerSwitch(enabled, True)))
        if self._balancer_was_on is None:
            self._balancer_was_on = was_on
        return was_on

    def restore_balancer(self) -> None:
        """Give HBase its balancer back if it was on when metctl first switched it."""
        if self._balancer_was_on and self.gateway.admin is not None:
            try:
                self.admin.balancerSwitch(True, False)
            except Exception as e:  # noqa: BLE001 - best effort on the way out, logged
                log.warning("could not switch the HBase balancer back on: %s", e)
        self._balancer_was_on = None

    def close(self) -> None:
        """End the background operations, restore_balancer(), then close the gateway."""
        self._closing.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.restore_balancer()
        self.gateway.close()


def client_settings_from(zookeeper_quorum: str, znode_parent: str = "/hbase") -> dict[str, str]:
    """HBase client settings from metctl's `datastore.hbase` fields: "h1:2181,h2:2181" becomes
    hbase.zookeeper.quorum "h1,h2" and clientPort 2181 (HBase's client takes one port for all)."""
    try:
        hosts, port = quorum_hosts_and_port(zookeeper_quorum)
    except ValueError as err:
        raise DriverError(f"datastore.hbase.zookeeper_quorum: {err}", retryable=False) from None
    return {"hbase.zookeeper.quorum": ",".join(hosts),
            "hbase.zookeeper.property.clientPort": port, "zookeeper.znode.parent": znode_parent}


def open_hbase_driver(settings: Any, *, restarter: Restarter | None = None, host_format: str = "{host}",
                      log_file: str | None = None,
                      settings_for: Callable[[str], Mapping[str, str]] = default_settings_for
                      ) -> HBaseDriver:
    """An HBaseDriver (gateway opened) from metctl's `datastore.hbase` settings
    (actuator.settings.HBaseStoreSettings): the controller's one call to wire HBase in."""
    from actuator.hbase_gateway import default_client_jars_dir

    gw = HBaseGateway(settings.client_jars_dir or default_client_jars_dir(),
                      client_settings_from(settings.zookeeper_quorum, settings.znode_parent),
                      log_file=log_file, rpc_timeout_ms=int(settings.rpc_timeout_s * 1000))
    gw.open()
    return HBaseDriver(gw, restarter=restarter, host_format=host_format, settings_for=settings_for)
