"""The HBase data-store driver: metctl's `DataStoreDriver` over HBase's own Admin API, reached
through a py4j gateway (actuator/hbase_gateway.py).

- servers / partitions: live RegionServers (id "host,port", no start code) and the regions of
  every user table (encoded name -> server; None while in transition or offline). System
  tables (namespace `hbase`) are never listed, so metctl never moves hbase:meta.
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
  the local-process one runs deploy/local-hbase/cluster.py restart-rs. Done when servers() shows
  it active with the new profile.
- compact / compaction_running: major compaction of one region and its state.
- split_partition: `Admin.splitRegionAsync(encodedName)` at HBase's split point; refused at once
  if HBase will not split it; done when partitions() lists its two daughters instead of it.
- decommission: `decommissionRegionServers(offload=true)` (regions move off, nothing new lands
  there), once it serves nothing a graceful `stopRegionServer`. Done when servers() no longer
  lists it.
- set_balancer: `balancerSwitch`; `close()` switches it back on if metctl found it on.
- region_metrics: per-region size, locality and cumulative request counters from
  `getClusterMetrics`; the driver is a monitor.hbase_jmx.RegionMetricsProvider (locality is
  only available there).
"""
from __future__ import annotations

import json
import logging
import re
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

from actuator.drivers import DriverError, PartitionLocation, ServerInfo
from actuator.hbase_gateway import HBaseGateway
from actuator.settings import quorum_hosts_and_port

log = logging.getLogger(__name__)

PROFILE_KEY = "metctl.profile"  # written into a RegionServer's hbase-site.xml with its profile
SYSTEM_NAMESPACE = "hbase"
UNKNOWN_PROFILE = "unknown"  # a server too new to have reported where its /conf is


class Restarter(Protocol):
    def __call__(self, server_id: str, settings: Mapping[str, str]) -> None:
        """Stop the RegionServer `server_id` ("host,port") gracefully, start it again with
        `settings` in its hbase-site.xml, and return once it serves again."""


class CommandRestarter:
    """Runs a command template to restart a RegionServer; `{server}` is replaced by the server
    id and `{settings}` by a JSON file of the settings. The local cluster's template is
    `python deploy/local-hbase/cluster.py --workdir W restart-rs {server} --settings {settings}`."""

    def __init__(self, template: Sequence[str], timeout_s: float = 180):
        self.template = list(template)
        self.timeout_s = timeout_s

    def __call__(self, server_id: str, settings: Mapping[str, str]) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="metctl-profile-") as f:
            json.dump(dict(settings), f)
            f.flush()
            cmd = [a.replace("{server}", server_id).replace("{settings}", f.name) for a in self.template]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s)
            except subprocess.TimeoutExpired as e:
                raise DriverError(f"restart of {server_id} took over {self.timeout_s:.0f} s") from e
        if proc.returncode != 0:
            raise DriverError(f"restart of {server_id} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


def default_settings_for(profile: str) -> dict[str, str]:
    """The profile's RegionServer settings from profiles/ (the decision helper's renderer)."""
    try:
        from profiles import render_hbase_settings  # type: ignore[attr-defined]
    except ImportError as e:
        raise DriverError("profiles.render_hbase_settings is not available", retryable=False) from e
    return {str(k): str(v) for k, v in render_hbase_settings(profile).items()}


@dataclass(frozen=True)
class RegionMetricsRow:
    """One region as its RegionServer last reported it to the master (every ~3 s)."""

    id: str  # encoded name
    table: str
    server: str  # "host,port"
    read_requests: int  # cumulative since the region opened on this server
    write_requests: int
    filtered_read_requests: int
    size_mb: float  # store files on disk (the memstore is not data on disk yet)
    memstore_mb: float
    locality: float  # 0..1; 1.0 for a region with no store files yet (nothing to be remote)

    @property
    def region(self) -> str:
        """The name monitor.hbase_jmx.RegionMetricsProvider reads the encoded name under."""
        return self.id


def client_settings_from(zookeeper_quorum: str, znode_parent: str = "/hbase") -> dict[str, str]:
    """HBase client settings from metctl's `datastore.hbase` fields: "h1:2181,h2:2181" becomes
    hbase.zookeeper.quorum "h1,h2" and clientPort 2181 (HBase's client takes one port for all)."""
    try:
        hosts, port = quorum_hosts_and_port(zookeeper_quorum)
    except ValueError as err:
        raise DriverError(f"datastore.hbase.zookeeper_quorum: {err}", retryable=False) from None
    return {"hbase.zookeeper.quorum": ",".join(hosts),
            "hbase.zookeeper.property.clientPort": port, "zookeeper.znode.parent": znode_parent}


# hbase:meta's layout (HBase reference guide, "hbase:meta"): one row per region keyed by its
# region name "<table>,<start key>,<region id>.<encoded name>.", family `info` with
# `regioninfo` (the serialized RegionInfo), `server` ("host:port" of the server it is open on)
# and, on a split's parent, `splitA` / `splitB`
META_FAMILY = b"info"
META_SERVER = b"server"
META_REGIONINFO = b"regioninfo"
META_SPLIT_A = b"splitA"
META_BATCH = 500  # rows per scanner.next(): one py4j round trip and one RPC per batch
_ENCODED_SUFFIX = re.compile(rb"\.([0-9a-f]{32})\.$")


def _meta_row(row: bytes) -> tuple[str | None, str | None]:
    """(table, encoded name) from a meta row key; encoded None for an old-format region name
    (no ".<md5>." suffix: the RegionInfo names it); table None for a row that is not a region."""
    if b"," not in row:
        return None, None
    table = row.split(b",", 1)[0].decode("utf-8", "replace")
    m = _ENCODED_SUFFIX.search(row)
    return table, (m.group(1).decode() if m else None)


def _meta_server(value: Any, live: set[str]) -> str | None:
    """info:server ("host:port") as a server id "host,port" if that server is live, else None."""
    if not value:
        return None
    host, _, port = bytes(value).decode("utf-8", "replace").rpartition(":")
    sid = f"{host},{port}"
    return sid if sid in live else None


def _region_info(hb: Any, r: Any) -> Any:
    return hb.client.RegionInfo.parseFromOrNull(r.getValue(META_FAMILY, META_REGIONINFO))


def server_id_of(sn: Any) -> str:
    return f"{sn.getHostname()},{sn.getPort()}"


class HBaseDriver:
    """DataStoreDriver for HBase 2.x. `gateway` must be open (or is opened on first use)."""

    def __init__(self, gateway: HBaseGateway, *, restarter: Restarter | None = None,
                 settings_for: Callable[[str], Mapping[str, str]] = default_settings_for,
                 poll_s: float = 0.3, host_format: str = "{host}", conf_timeout_s: float = 10.0,
                 workers: int = 4, move_issues: int = 10, confirm_looks: int = 15):
        self.gateway = gateway
        self.restarter = restarter
        self.settings_for = settings_for
        self.poll_s = poll_s  # how often a background operation looks at its progress
        self.conf_timeout_s = conf_timeout_s  # one HTTP read of a RegionServer's /conf
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
        # the locations last read (partitions()): a caller that just observed them (the
        # executor, in the same tick) starts a move without a second scan of hbase:meta
        self._seen: dict[str, tuple[str, str | None]] = {}
        # ServerInfo.host must equal the infrastructure's node address: "{host}" for one
        # RegionServer per machine, "{host}:{port}" for several on one (the local cluster)
        self.host_format = host_format
        self._balancer_was_on: bool | None = None  # what metctl found, to restore on close
        # regions this driver split: minutes after a split HBase's catalog janitor purges the
        # parent from hbase:meta, and a region HBase no longer knows must still count as split
        self._split_started: set[str] = set()
        self._conf_profiles: dict[str, str] = {}  # "host,port,startcode" -> profile in its /conf

    # -- plumbing ------------------------------------------------------------------------------

    @property
    def admin(self) -> Any:
        if self.gateway.admin is None:
            self.gateway.open()
        return self.gateway.admin

    @property
    def jvm(self) -> Any:
        return self.gateway.jvm

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        """Run one admin call; Java exceptions become DriverError (retryable: HBase's are)."""
        from py4j.protocol import Py4JError

        try:
            return fn()
        except Py4JError as e:
            msg = str(e).strip().splitlines()
            raise DriverError(f"HBase {what}: {' '.join(msg[:3])[:400]}") from e

    def _server_names(self) -> dict[str, Any]:
        """server id "host,port" -> current ServerName (with start code) of live servers."""
        return {server_id_of(sn): sn for sn in self._call("getRegionServers", self.admin.getRegionServers)}

    def _server_name(self, server_id: str) -> Any:
        sn = self._server_names().get(_host_port(server_id))
        if sn is None:
            raise DriverError(f"RegionServer {server_id} is not live")
        return sn

    def _live_server_metrics(self) -> Any:
        """ServerName -> ServerMetrics of the live RegionServers: getClusterMetrics asked for
        LIVE_SERVERS only (with no option it also gathers dead servers, regions in transition,
        backup masters, … none of which the driver reads)."""
        option = self.jvm.org.apache.hadoop.hbase.ClusterMetrics.Option
        live = self.jvm.java.util.EnumSet.of(option.LIVE_SERVERS)
        return self._call("getClusterMetrics", lambda: self.admin.getClusterMetrics(live)).getLiveServerMetrics()

    def _user_tables(self) -> list[Any]:
        return [t for t in self._call("listTableNames", self.admin.listTableNames)
                if t.getNamespaceAsString() != SYSTEM_NAMESPACE]

    # -- DataStoreDriver ----------------------------------------------------------------------

    def servers(self) -> list[ServerInfo]:
        draining = {server_id_of(sn) for sn in
                    self._call("listDecommissionedRegionServers", self.admin.listDecommissionedRegionServers)}
        out = []
        metrics = self._live_server_metrics()
        for sn in metrics.keySet():
            sid = server_id_of(sn)
            host = self.host_format.format(host=sn.getHostname(), port=sn.getPort())
            info_port = int(metrics.get(sn).getInfoServerPort())
            if info_port <= 0:
                # registered, but its first load report (with its info port) has not arrived:
                # it serves nothing yet and its profile cannot be read yet
                out.append(ServerInfo(id=sid, host=host, profile=UNKNOWN_PROFILE, state="starting"))
                continue
            # a server's profile changes only with a restart, i.e. with its start code
            key = str(sn.toString())
            if key not in self._conf_profiles:
                try:
                    self._conf_profiles[key] = self._profile_from_conf(sn.getHostname(), info_port)
                except DriverError as e:
                    # a server on its way down (or not fully up) stops answering /conf while the
                    # master still lists it: not active, profile unknown (never guessed); the
                    # next observation reads it again
                    log.info("%s: %s", sid, e)
                    out.append(ServerInfo(id=sid, host=host, profile=UNKNOWN_PROFILE,
                                          state="draining" if sid in draining else "starting"))
                    continue
            out.append(ServerInfo(id=sid, host=host, profile=self._conf_profiles[key],
                                  state="draining" if sid in draining else "active",
                                  info_url=f"http://{sn.getHostname()}:{info_port}"))
        return sorted(out, key=lambda s: s.id)

    def _profile_from_conf(self, host: str, info_port: int) -> str:
        """The profile a RegionServer runs with, read from its /conf (metctl.profile; a server
        metctl never configured runs "default"). An unreadable /conf is an error, never a guess."""
        url = f"http://{host}:{info_port}/conf?format=json"
        try:
            with urllib.request.urlopen(url, timeout=self.conf_timeout_s) as r:
                conf = json.load(r)
        except (OSError, ValueError) as e:
            raise DriverError(f"cannot read the profile of the RegionServer at {url}: {e}") from e
        for prop in conf.get("properties", []):
            if prop.get("key") == PROFILE_KEY:
                return str(prop.get("value"))
        return "default"

    def region_locations(self) -> dict[str, tuple[str, str | None]]:
        """encoded region name -> (table, server id or None) for every user region, as
        hbase:meta records it: ONE scan of hbase:meta's `info` family for all tables (a
        RegionLocator per table costs one meta RPC per table, and the listing is what every
        executor tick observes), no call to a RegionServer that may still be starting. A region
        whose server is not live counts as offline (None). Primary replicas only."""
        live = set(self._server_names())
        jvm = self.jvm
        hb = jvm.org.apache.hadoop.hbase
        info = META_FAMILY
        scan = hb.client.Scan().addFamily(info).setCaching(META_BATCH)
        out: dict[str, tuple[str, str | None]] = {}

        def read() -> None:
            with_split: list[Any] = []
            meta = self.gateway.connection.getTable(hb.TableName.META_TABLE_NAME)
            scanner = meta.getScanner(scan)
            try:
                while True:
                    batch = scanner.next(META_BATCH)
                    if batch is None or len(batch) == 0:
                        break
                    for r in batch:
                        row = bytes(r.getRow())
                        table, encoded = _meta_row(row)
                        if table is None or table.startswith(SYSTEM_NAMESPACE + ":"):
                            continue
                        if r.containsColumn(info, META_SPLIT_A):
                            # a split's parent carries its daughters (info:splitA/B) until the
                            # catalog janitor purges it; decide from its RegionInfo (rare rows)
                            with_split.append(r)
                            continue
                        server = r.getValue(info, META_SERVER)
                        out[encoded or str(_region_info(hb, r).getEncodedName())] = (
                            table, _meta_server(server, live))
            finally:
                scanner.close()
                meta.close()
            for r in with_split:
                ri = _region_info(hb, r)
                if ri is None or ri.isSplitParent():  # offline parent: not a partition any more
                    continue
                table, encoded = _meta_row(bytes(r.getRow()))
                out[encoded or str(ri.getEncodedName())] = (
                    str(table), _meta_server(r.getValue(info, META_SERVER), live))

        self._call("scan of hbase:meta", read)
        self._seen = out
        return out

    def partitions(self) -> list[PartitionLocation]:
        return sorted((PartitionLocation(id=rid, table=table, server=server)
                       for rid, (table, server) in self.region_locations().items()),
                      key=lambda p: (p.table, p.id))

    def _where(self, partition_id: str) -> str | None:
        loc = self.region_locations().get(partition_id)
        if loc is None:
            raise DriverError(f"no region {partition_id}", retryable=False)
        return loc[1]

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
        target = _host_port(target_server)
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
        sid = _host_port(server_id)
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
            java_class, reason = _java_reason(e)
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
                    if _java_reason(e)[0] != "java.util.concurrent.TimeoutException":
                        raise

        self._start(key, finish)

    def decommission(self, server_id: str) -> None:
        """Start draining `server_id` (HBase picks the targets; nothing new lands there), then,
        once it serves nothing, stop it gracefully; return at once. Done when servers() no
        longer lists it. Idempotent: a server that is already gone is left alone."""
        sid = _host_port(server_id)
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

    # -- metrics for the monitor -----------------------------------------------------------

    def region_metrics(self) -> list[RegionMetricsRow]:
        """Per-region load, size and locality of every user region, from getClusterMetrics."""
        jvm = self.jvm
        mb = jvm.org.apache.hadoop.hbase.Size.Unit.MEGABYTE
        encode = jvm.org.apache.hadoop.hbase.client.RegionInfo.encodeRegionName
        metrics = self._live_server_metrics()
        rows = []
        for sn in metrics.keySet():
            regions = metrics.get(sn).getRegionMetrics()
            for name in regions.keySet():
                rm = regions.get(name)
                table = rm.getNameAsString().split(",", 1)[0]
                if table.startswith(SYSTEM_NAMESPACE + ":"):
                    continue
                store = float(rm.getStoreFileSize().get(mb))
                mem = float(rm.getMemStoreSize().get(mb))
                rows.append(RegionMetricsRow(
                    id=str(encode(name)), table=table, server=server_id_of(sn),
                    read_requests=int(rm.getReadRequestCount()),
                    write_requests=int(rm.getWriteRequestCount()),
                    filtered_read_requests=int(rm.getFilteredReadRequestCount()),
                    size_mb=store, memstore_mb=mem,
                    locality=float(rm.getDataLocality()) if store > 0 else 1.0))
        return sorted(rows, key=lambda r: (r.table, r.id))

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


def _java_reason(e: DriverError) -> tuple[str, str]:
    """(Java exception class, first line of its message without class-name prefixes) of a
    DriverError raised by HBaseDriver._call; ("", str(e)) when Java did not raise it."""
    from py4j.protocol import Py4JJavaError

    cause = e.__cause__
    if not isinstance(cause, Py4JJavaError):
        return "", str(e)
    java = cause.java_exception
    lines = str(java.getMessage() or "").strip().splitlines()
    # a remote exception arrives as "<class>: <class>: text"
    first = lines[0] if lines else ""
    return str(java.getClass().getName()), re.sub(r"^(?:[\w.$]+(?:Exception|Error): )+", "", first)


def split_refusal(partition_id: str, reason: str) -> DriverError | None:
    """What the master's refusal to split a region means (its messages in HBase 2.6): the error
    to raise, or None when the region is already split."""
    state = re.search(r"is not OPEN; state=(\w+)", reason)
    if state and state.group(1) in ("SPLIT", "SPLITTING"):
        return None
    if state and state.group(1) in ("MERGED", "MERGING"):
        meaning, retryable = "it was merged into another region", False
    elif state:
        meaning, retryable = "it is in transition (HBase splits only an open region)", True
    elif "bestSplitPoint = null" in reason:
        # no store file has a middle key apart from its first and last: too little data
        meaning, retryable = "HBase finds no split point in it (too small)", False
    elif "NOT splittable" in reason:
        # a daughter keeps references to its parent's files until they are compacted and
        # cleaned (minutes), or its RegionServer is stopping: both pass
        meaning, retryable = "not yet (a daughter of a recent split, or its server is stopping)", True
    elif "split switch off" in reason:
        meaning, retryable = "HBase's split switch is off (an operator's setting)", False
    else:
        return DriverError(f"split of region {partition_id} failed; HBase: {reason}")
    return DriverError(f"cannot split region {partition_id}: {meaning}; HBase: {reason}",
                       retryable=retryable)


def _host_port(server_id: str) -> str:
    """"host,port" from "host,port" or "host,port,startcode"."""
    parts = server_id.split(",")
    if len(parts) < 2:
        raise DriverError(f"not a RegionServer id (host,port): {server_id!r}", retryable=False)
    return ",".join(parts[:2])


def open_hbase_driver(settings: Any, *, restarter: Restarter | None = None, host_format: str = "{host}",
                      log_file: str | None = None) -> HBaseDriver:
    """An HBaseDriver (gateway opened) from metctl's `datastore.hbase` settings
    (actuator.settings.HBaseStoreSettings): the controller's one call to wire HBase in."""
    from actuator.hbase_gateway import default_client_jars_dir

    gw = HBaseGateway(settings.client_jars_dir or default_client_jars_dir(),
                      client_settings_from(settings.zookeeper_quorum, settings.znode_parent),
                      log_file=log_file, rpc_timeout_ms=int(settings.rpc_timeout_s * 1000))
    gw.open()
    return HBaseDriver(gw, restarter=restarter, host_format=host_format)
