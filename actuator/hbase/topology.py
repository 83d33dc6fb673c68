"""What is where in an HBase cluster, read through the admin API (a py4j gateway): the live
RegionServers (id "host,port", no start code) with their profile and state, and the regions of
every user table (encoded name -> server; None while in transition or offline), per-region
size, locality and request counters. System tables (namespace `hbase`) are never listed, so
metctl never moves hbase:meta. Read only: the operations are actuator/hbase/driver.py's."""
from __future__ import annotations

import json
import logging
import re
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable

from actuator.drivers import DriverError, PartitionLocation, ServerInfo
from actuator.hbase.errors import call
from actuator.hbase.restart import PROFILE_KEY
from actuator.hbase_gateway import HBaseGateway

log = logging.getLogger("actuator.hbase")

SYSTEM_NAMESPACE = "hbase"
UNKNOWN_PROFILE = "unknown"  # a server too new to have reported where its /conf is


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


def host_port(server_id: str) -> str:
    """"host,port" from "host,port" or "host,port,startcode"."""
    parts = server_id.split(",")
    if len(parts) < 2:
        raise DriverError(f"not a RegionServer id (host,port): {server_id!r}", retryable=False)
    return ",".join(parts[:2])


class HBaseTopology:
    """The read side of the HBase driver. `gateway` must be open (or is opened on first use)."""

    def __init__(self, gateway: HBaseGateway, *, host_format: str = "{host}",
                 conf_timeout_s: float = 10.0):
        self.gateway = gateway
        self.conf_timeout_s = conf_timeout_s  # one HTTP read of a RegionServer's /conf
        # the locations last read (partitions()): a caller that just observed them (the
        # executor, in the same tick) starts a move without a second scan of hbase:meta
        self._seen: dict[str, tuple[str, str | None]] = {}
        # ServerInfo.host must equal the infrastructure's node address: "{host}" for one
        # RegionServer per machine, "{host}:{port}" for several on one (the local cluster)
        self.host_format = host_format
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
        return call(what, fn)

    def _server_names(self) -> dict[str, Any]:
        """server id "host,port" -> current ServerName (with start code) of live servers."""
        return {server_id_of(sn): sn for sn in self._call("getRegionServers", self.admin.getRegionServers)}

    def _server_name(self, server_id: str) -> Any:
        sn = self._server_names().get(host_port(server_id))
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
