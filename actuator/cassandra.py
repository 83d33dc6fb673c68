"""CassandraDriver: the DataStoreDriver Protocol for Apache Cassandra 5.0.

Cassandra places data by token, not by assignment: a node's share arrives when it joins
(bootstrap streams its ranges) and leaves when it is decommissioned (streams them to the new
owners). So there is no individually movable partition: `partitions()` is empty, the executor's
drain goes straight to `decommission`, and scale-out is "launch a node" (it bootstraps itself).
The monitor still reports each table on each node as a partition (monitor/cassandra_views.py):
that is what MET's classification looks at (docs/cassandra.md says why).

Every call starts an operation and returns (NodeTool runs in the background); completion is
observed on later ticks through `servers()` (gossip: NORMAL -> active, BOOT -> starting,
LEAVING -> draining, LEFT -> gone), the way the executor watches every driver.

Admin goes through NodeTool (a subprocess with an argument list, never a shell) behind the small
`NodeAdmin` Protocol: `CommandNodeTool` runs the configured argv templates
(`datastore.cassandra.nodetool_command` / `restart_command`, what `metctl run` uses);
`LocalNodeTool` drives a deploy/local_cassandra/ cluster object directly (tests, demo).
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from common.files import write_atomic
from actuator.drivers import DriverError, PartitionLocation, ServerInfo

log = logging.getLogger(__name__)

# gossip STATUS -> ServerInfo.state (LEFT / REMOVED: no longer a member, not reported)
GOSSIP_STATES = {"NORMAL": "active", "BOOT": "starting", "BOOT_REPLACE": "starting",
                 "LEAVING": "draining", "MOVING": "draining", "shutdown": "stopped"}
GONE_STATES = frozenset({"LEFT", "REMOVED", "removed", "REMOVING"})
USER_KEYSPACE_EXCLUDE = frozenset({"system", "system_auth", "system_schema", "system_distributed",
                                   "system_traces", "system_views", "system_virtual_schema", "system_cluster_metadata"})

# Per-table compaction strategy per MET class (docs/cassandra.md): read-heavy tables want few
# SSTables per read (leveled), write-heavy ones cheap writes (size-tiered); unified (UCS, new in
# 5.0) is the balanced default for mixed tables.
COMPACTION_FOR_CLASS = {
    "read": {"class": "LeveledCompactionStrategy"},
    "write": {"class": "SizeTieredCompactionStrategy"},
    "read_write": {"class": "UnifiedCompactionStrategy"},
    "scan": {"class": "LeveledCompactionStrategy"},
}

# Node profiles as cassandra.yaml settings (applied by a rolling restart). Sizes fit the local
# 512 MB-heap nodes; an operator's config overrides them.
PROFILE_SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "read": {"key_cache_size": "48MiB", "row_cache_size": "32MiB", "memtable_heap_space": "32MiB"},
    "write": {"key_cache_size": "8MiB", "memtable_heap_space": "128MiB", "concurrent_writes": 16},
    "scan": {"key_cache_size": "8MiB", "memtable_heap_space": "64MiB", "concurrent_reads": 4},
    "read_write": {"key_cache_size": "24MiB", "memtable_heap_space": "64MiB"},
}


def connect(contact_points: Sequence[str], port: int = 9042, connect_timeout_s: float = 10,
            **kw: Any) -> tuple[Any, Any]:
    """(Cluster, Session) of the python cassandra-driver; imported here so the rest of metctl runs
    without the optional `cassandra` extra."""
    os.environ.setdefault("CASS_DRIVER_NO_EXTENSIONS", "1")
    try:
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy
    except ImportError as err:
        raise DriverError("the Cassandra client is not installed: pip install 'metctl[cassandra]'",
                          retryable=False) from err

    profile = ExecutionProfile(load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy()),
                               request_timeout=10)
    cluster = Cluster(list(contact_points), port=port, connect_timeout=connect_timeout_s,
                      control_connection_timeout=connect_timeout_s,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, **kw)
    try:
        return cluster, cluster.connect()
    except Exception as err:  # noqa: BLE001 — NoHostAvailable and friends
        cluster.shutdown()
        raise DriverError(f"cannot connect to Cassandra at {list(contact_points)}:{port}: {err}") from err


class NodeAdmin(Protocol):
    def start(self, address: str, *args: str) -> subprocess.Popen:
        """Start `nodetool <args>` against the node at `address`; return at once."""

    def restart(self, address: str, profile: str, settings: Mapping[str, Any]) -> None:
        """Stop the node and start it again with `settings` in its cassandra.yaml (no waiting)."""

    def profile_of(self, address: str) -> str | None:
        """The profile the node was last (re)started with, when known."""


class LocalNodeTool:
    """NodeAdmin for a deploy/local_cassandra/ cluster (LocalCassandra object)."""

    def __init__(self, cluster: Any):
        self.cluster = cluster

    def start(self, address: str, *args: str) -> subprocess.Popen:
        n = self.cluster.node(address)
        logf = open(os.path.join(os.path.dirname(n.log), f"nodetool-{n.name}.log"), "ab")
        try:
            return subprocess.Popen(self.cluster.nodetool_cmd(n.name, *args), stdout=logf,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            logf.close()

    def restart(self, address: str, profile: str, settings: Mapping[str, Any]) -> None:
        n = self.cluster.node(address)
        self.cluster.stop_node(n.name)
        self.cluster.write_conf(n, settings)
        # cassandra.yaml rejects unknown keys: the profile's name is kept beside it
        with open(os.path.join(n.conf_dir, "profile"), "w") as f:
            f.write(profile + "\n")
        self.cluster.spawn(n.name)

    def profile_of(self, address: str) -> str | None:
        try:
            n = self.cluster.node(address)
            with open(os.path.join(n.conf_dir, "profile")) as f:
                return f.read().strip() or None
        except (OSError, Exception):  # noqa: BLE001 — unknown node or never restarted
            return None


def fill(template: Sequence[str], **values: str) -> list[str]:
    """An argv template with its {placeholders} replaced (plain replacement: no other brace in
    an argument is touched, the way the HBase restart command is filled)."""
    out = []
    for arg in template:
        for k, v in values.items():
            arg = arg.replace("{" + k + "}", v)
        out.append(arg)
    return out


class CommandNodeTool:
    """NodeAdmin from the config's argv templates (datastore.cassandra): `nodetool` with
    {address}, NodeTool's own arguments appended; `restart` with {address} {profile} {settings}.
    Each NodeTool run's output goes to `log_dir/nodetool-<address>.log` (operators read why a
    decommission failed there). The profile each node was last restarted with is kept in
    `profiles_file` (JSON, address -> profile), so a restarted metctl still knows it."""

    def __init__(self, nodetool: Sequence[str], restart: Sequence[str] = (), *, log_dir: str | Path,
                 profiles_file: str | Path | None = None, restart_timeout_s: float = 300):
        self.nodetool = list(nodetool)
        self.restart_template = list(restart)
        self.log_dir = Path(log_dir)
        self.profiles_file = Path(profiles_file) if profiles_file else self.log_dir / "cassandra-profiles.json"
        self.restart_timeout_s = restart_timeout_s

    def start(self, address: str, *args: str) -> subprocess.Popen:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_dir / f"nodetool-{address}.log", "ab") as logf:
            return subprocess.Popen(fill(self.nodetool, address=address) + list(args), stdout=logf,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def restart(self, address: str, profile: str, settings: Mapping[str, Any]) -> None:
        if not self.restart_template:
            raise DriverError(f"cannot restart {address} with profile {profile!r}: no "
                              "datastore.cassandra.restart_command is configured", retryable=False)
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="metctl-cassandra-profile-") as f:
            json.dump(dict(settings), f)
            f.flush()
            cmd = fill(self.restart_template, address=address, profile=profile, settings=f.name)
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.restart_timeout_s,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired as err:
                raise DriverError(f"restart of {address} took over {self.restart_timeout_s:.0f} s") from err
        if proc.returncode != 0:
            raise DriverError(f"restart of {address} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
        known = self._profiles()
        known[address] = profile
        self.profiles_file.parent.mkdir(parents=True, exist_ok=True)
        # atomic: a reader never sees half a file
        write_atomic(self.profiles_file, json.dumps(known, indent=2, sort_keys=True))

    def _profiles(self) -> dict[str, str]:
        try:
            return dict(json.loads(self.profiles_file.read_text()))
        except (OSError, ValueError):
            return {}

    def profile_of(self, address: str) -> str | None:
        return self._profiles().get(address)


class CassandraDriver:
    """DataStoreDriver over a CQL session (python cassandra-driver) and a NodeAdmin."""

    def __init__(self, session: Any, admin: NodeAdmin, *, profiles: Mapping[str, Mapping[str, Any]] | None = None,
                 query_timeout_s: float = 10.0, connection: Any = None):
        self.session = session
        self.connection = connection  # the driver's Cluster when this driver opened it (shut on close)
        self.admin = admin
        self.profiles = dict(profiles or PROFILE_SETTINGS)
        self.timeout = query_timeout_s
        self._ops: dict[tuple[str, str], subprocess.Popen] = {}  # (address, op) -> running nodetool

    # -- observation ------------------------------------------------------------------------

    def _query(self, cql: str, host: Any = None) -> list[Any]:
        from cassandra.query import SimpleStatement

        try:
            return list(self.session.execute(SimpleStatement(cql), timeout=self.timeout, host=host))
        except Exception as err:  # noqa: BLE001 — driver errors are many; all are retryable here
            raise DriverError(f"CQL {cql!r} failed: {type(err).__name__}: {err}") from err

    def _host(self, address: str) -> Any:
        return next((h for h in self.session.cluster.metadata.all_hosts()
                     if h.address == address and h.is_up is not False), None)

    def gossip(self, ask: str | None = None) -> dict[str, str]:
        """address -> gossip STATUS word (NORMAL, BOOT, LEAVING, LEFT, shutdown, …), as any
        coordinator sees it, or as the node at `ask` does (a node knows its own state first)."""
        out = {}
        host = self._host(ask) if ask else None
        for r in self._query("SELECT address, status, status_with_port FROM system_views.gossip_info", host=host):
            status = (r.status_with_port or r.status or "").split(",")[0]
            out[r.address] = status
        return out

    def _up(self) -> dict[str, bool | None]:
        return {h.address: h.is_up for h in self.session.cluster.metadata.all_hosts()}

    def servers(self) -> list[ServerInfo]:
        up = self._up()
        out = []
        for addr, status in sorted(self.gossip().items()):
            if status in GONE_STATES:
                continue
            state = GOSSIP_STATES.get(status, "starting")
            if state == "active" and up.get(addr) is False:
                state = "stopped"  # crashed: gossip still says NORMAL, the driver sees it down
            out.append(ServerInfo(id=addr, host=addr, profile=self.admin.profile_of(addr) or "default", state=state))
        return out

    def partitions(self) -> list[PartitionLocation]:
        """None is individually movable (token placement): see the module docstring."""
        return []

    def user_tables(self) -> list[str]:
        rows = self._query("SELECT keyspace_name, table_name FROM system_schema.tables")
        return sorted(f"{r.keyspace_name}.{r.table_name}" for r in rows
                      if r.keyspace_name not in USER_KEYSPACE_EXCLUDE)

    # -- actions (each starts and returns) --------------------------------------------------

    def _start_op(self, address: str, op: str, *args: str) -> None:
        running = self._ops.get((address, op))
        if running is not None and running.poll() is None:
            return  # already under way: idempotent
        try:
            self._ops[(address, op)] = self.admin.start(address, *args)
        except (OSError, Exception) as err:  # noqa: BLE001 — unknown node, no java, …
            raise DriverError(f"nodetool {' '.join(args)} on {address}: {err}") from err

    def op_result(self, address: str, op: str) -> int | None:
        """Exit code of the last `op` started on `address`; None while running or never started."""
        p = self._ops.get((address, op))
        return None if p is None else p.poll()

    def move_partition(self, partition_id: str, target_server: str) -> None:
        """Cassandra cannot place one table's data on a chosen node; data follows tokens."""
        raise DriverError(f"Cassandra places {partition_id} by token; scale by join/decommission",
                          retryable=False)

    def decommission(self, server_id: str) -> None:
        """Start `nodetool decommission` on the node; done when gossip says LEFT (the node then
        leaves servers()). Idempotent: a leaving or gone node is left alone."""
        status = self.gossip(ask=server_id).get(server_id)
        if status is None or status in GONE_STATES or status == "LEAVING":
            return
        if status != "NORMAL":
            raise DriverError(f"{server_id} is {status}, not NORMAL: not decommissioning it now")
        self._start_op(server_id, "decommission", "decommission")

    def cleanup(self, server_id: str) -> None:
        """After a join: drop the ranges this node no longer owns (nodetool cleanup)."""
        self._start_op(server_id, "cleanup", "cleanup")

    def cleanup_all(self, except_server: str | None = None) -> None:
        for s in self.servers():
            if s.state == "active" and s.id != except_server:
                self.cleanup(s.id)

    def set_stream_throughput(self, mib_per_s: float) -> None:
        """Throttle bootstrap / decommission streaming on every live node (0 = unthrottled):
        the outbound limit of partial-SSTable streams and (`-e`) of whole-SSTable ones."""
        for s in self.servers():
            if s.state in ("active", "draining", "starting"):
                self._start_op(s.id, "setstreamthroughput", "setstreamthroughput", "-m", f"{mib_per_s:g}")
                self._start_op(s.id, "setstreamthroughput-e", "setstreamthroughput", "-e", f"{mib_per_s:g}")

    def restart_server(self, server_id: str, profile: str) -> None:
        """Restart the node with `profile`'s cassandra.yaml settings; back when servers() shows
        it active again. One node at a time is the executor's rule (a rolling restart)."""
        if profile not in self.profiles:
            raise DriverError(f"unknown Cassandra profile {profile!r} (known: {', '.join(sorted(self.profiles))})",
                              retryable=False)
        try:
            self.admin.restart(server_id, profile, self.profiles[profile])
        except DriverError:
            raise
        except Exception as err:  # noqa: BLE001
            raise DriverError(f"restart of {server_id} failed: {err}") from err

    def compact(self, partition_id: str) -> None:
        """`ks.table@address`: a major compaction of that table on that node."""
        table, addr = _split(partition_id)
        ks, tbl = table.split(".", 1)
        self._start_op(addr, f"compact {table}", "compact", ks, tbl)

    def compaction_running(self, partition_id: str) -> bool:
        table, addr = _split(partition_id)
        if self.op_result(addr, f"compact {table}") is None and (addr, f"compact {table}") in self._ops:
            return True
        ks, tbl = table.split(".", 1)
        rows = self._query("SELECT keyspace_name, table_name, kind FROM system_views.sstable_tasks",
                           host=self._host(addr))
        return any(r.keyspace_name == ks and r.table_name == tbl and r.kind == "compaction" for r in rows)

    def split_partition(self, partition_id: str) -> None:
        """Cassandra spreads a table by token ranges, not regions: a partition here is a table on
        one node, and there is nothing to split."""
        raise DriverError(f"{partition_id}: Cassandra has no partition split (a partition here "
                          "is a table's data on one node)", retryable=False)

    def compaction_cql(self, table: str, klass: str) -> str:
        """The ALTER TABLE that gives `table` the compaction strategy for MET class `klass`."""
        opts = COMPACTION_FOR_CLASS[klass]
        body = ", ".join(f"'{k}': '{v}'" for k, v in opts.items())
        return f"ALTER TABLE {table} WITH compaction = {{{body}}}"

    def set_compaction_strategy(self, table: str, klass: str) -> None:
        """Action form of the per-table advisory (schema change, applies on every node)."""
        if table.split(".", 1)[0] in USER_KEYSPACE_EXCLUDE:
            raise DriverError(f"{table} is a system table", retryable=False)
        self._query(self.compaction_cql(table, klass))

    def compaction_strategy(self, table: str) -> str:
        ks, tbl = table.split(".", 1)
        rows = self._query(f"SELECT compaction FROM system_schema.tables WHERE keyspace_name = '{ks}' "
                           f"AND table_name = '{tbl}'")
        return rows[0].compaction["class"].rsplit(".", 1)[-1] if rows else ""

    def set_balancer(self, enabled: bool) -> bool:
        """Cassandra has no balancer that moves data behind metctl's back."""
        return False

    def close(self, wait: bool = True) -> None:
        """Wait for the NodeTool runs this driver started (wait=False: leave them running — a
        stopping daemon must not block on a decommission, which goes on inside Cassandra and is
        watched again by the next start), then close the connection if this driver opened it."""
        if wait:
            for p in self._ops.values():
                if p.poll() is None:
                    p.wait(timeout=600)
        if self.connection is not None:
            self.connection.shutdown()
            self.connection = None


def open_cassandra_driver(settings: Any, state_dir: str | Path, restart_timeout_s: float = 300) -> CassandraDriver:
    """The driver `metctl run` / `metctl snapshot` use, from a CassandraStoreSettings: a CQL
    connection to the contact points and NodeTool through the configured commands, its logs and
    the nodes' profiles kept in `state_dir` (beside the journal). Unreachable: DriverError."""
    cluster, session = connect(settings.contact_points, settings.native_port,
                               connect_timeout_s=settings.query_timeout_s)
    admin = CommandNodeTool(settings.nodetool_command, settings.restart_command, log_dir=state_dir,
                            profiles_file=Path(state_dir) / "cassandra-profiles.json",
                            restart_timeout_s=restart_timeout_s)
    return CassandraDriver(session, admin, query_timeout_s=settings.query_timeout_s, connection=cluster)


def _split(partition_id: str) -> tuple[str, str]:
    if "@" not in partition_id or "." not in partition_id.split("@", 1)[0]:
        raise DriverError(f"not a Cassandra partition id (keyspace.table@address): {partition_id!r}",
                          retryable=False)
    table, addr = partition_id.rsplit("@", 1)
    return table, addr
