"""Settings of the actuator: the executor (timeouts, retries, throttles, journal), the
infrastructure driver (sim | ec2 | openstack | local, one sub-section each) and the data-store
driver (sim | hbase | cassandra). Every field has a default and a description with its unit;
units are in the names.

Credentials are never settings: EC2 uses the standard AWS credential chain (environment,
shared files, instance profile), OpenStack uses clouds.yaml or OS_* variables.
"""
from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from actuator.hbase_jars import HBASE_VERSION


class ExecutorSettings(BaseModel):
    """How the executor carries out a plan. Per-state launch timeouts follow Ray's autoscaler
    (a node is requested, then booting, then joining the data store; each state has its own limit)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    journal_path: str = Field(
        "metctl-state/journal.sqlite",
        description="SQLite file recording every plan and each action's state before and after it "
        "runs; `metctl status` reads it and a restarted controller resumes from it.")
    calibration: str | None = Field(
        None, description="A calibration file of the timeout table (a path, relative to this "
        "config file's directory, or calibration:NAME of a shipped one): its values replace the "
        "shipped ones (configs/calibration/executor.yaml, what null means); a *_timeout_s key "
        "written here wins over the file. Read when the config file is loaded.")
    requested_timeout_s: float = Field(
        600.0, gt=0, description="Seconds a launched node may stay 'requested' (no capacity yet) "
        "before the launch attempt counts as failed.")
    booting_timeout_s: float = Field(
        600.0, gt=0, description="Seconds a node may stay 'booting' before the attempt counts as failed.")
    joining_timeout_s: float = Field(
        300.0, gt=0, description="Seconds a running node may take to register with the data store "
        "(its address appearing as an active server) before the attempt counts as failed.")
    launch_attempts: int = Field(
        3, ge=1, description="Launch attempts per node (the failed partial node is terminated "
        "before each retry); when all fail the plan is abandoned and its new nodes terminated.")
    launch_backoff_s: float = Field(
        10.0, ge=0, description="Back-off before the 2nd launch attempt, seconds; doubles per "
        "attempt up to launch_backoff_max_s.")
    launch_backoff_max_s: float = Field(120.0, ge=0, description="Longest launch back-off, seconds.")
    max_concurrent_moves: int = Field(
        2, ge=1, description="Partition moves in flight at once (throttled migration, Parqua).")
    incremental_transfer: bool = Field(
        True, description="Fill a new node from one source node at a time so each moved partition "
        "is served by the new node at once (incremental elasticity); false = all sources in parallel.")
    scale_in_move_gap_s: float = Field(
        0.0, ge=0, description="In a scale-in (a plan that removes nodes and launches none), "
        "seconds between the starts of one table's moves, which go one at a time (other tables' "
        "meanwhile), so no tenant's SLO window takes two regions' moments offline; 0 = no pacing "
        "(the default). 20 s held more windows on the open-loop scenarios and fewer on closed-loop "
        "spikes, whose scale-out waits for the longer scale-in: docs/policy.md.")
    move_timeout_s: float = Field(
        120.0, gt=0, description="Seconds a move may take before it is re-issued (counts as a "
        "failed attempt); when the data store copies the partition's data and reports its size, "
        "plus size_mb x max_concurrent_moves / move_mb_s (its copy may wait behind the others "
        "running to the same node).")
    move_mb_s: float = Field(
        26.0, gt=0, description="The slowest rate, MiB/s, a move's data is expected to travel "
        "at when the data store copies it: one sender's streaming rate in the incremental-"
        "elasticity paper (210 Mbit/s). A 3.6 GB partition, two moves at once: 120 + 283 s.")
    datastore_attempts: int = Field(
        4, ge=1, description="Attempts per data-store action (move, restart, compact, decommission) "
        "before the plan stops at a consistent point.")
    datastore_backoff_s: float = Field(
        2.0, ge=0, description="Back-off before retrying a failed data-store action, seconds; doubles "
        "per attempt up to datastore_backoff_max_s.")
    datastore_backoff_max_s: float = Field(60.0, ge=0, description="Longest data-store back-off, seconds.")
    restart_timeout_s: float = Field(
        300.0, gt=0, description="Seconds a server restart with a new profile may take until it is "
        "active again with that profile.")
    max_concurrent_compactions: int = Field(
        1, ge=1, description="Major compactions in flight at once (each rewrites a partition's files).")
    split_timeout_s: float = Field(
        300.0, gt=0, description="Seconds a split may take until the store lists its daughters "
        "before it is issued again (counts as a failed attempt). HBase splits by reference "
        "files, without copying data: seconds on the local cluster; the margin is for a busy "
        "master (assumption).")
    compaction_timeout_s: float = Field(
        3600.0, gt=0, description="Seconds one major compaction may run (MET: about 1 minute per GB).")
    drain_timeout_s: float = Field(
        600.0, gt=0, description="Seconds a decommissioned server may take to stop.")
    terminate_timeout_s: float = Field(
        600.0, gt=0, description="Seconds a terminated node may take to leave the owned-node list.")
    disable_balancer: bool = Field(
        True, description="Switch the data store's own balancer off while a plan runs (restored "
        "afterwards if it was on), so it cannot undo the plan's moves.")
    on_resume: Literal["finish", "rollback"] = Field(
        "finish", description="What a restarted controller does with a plan in flight: 'finish' rolls "
        "forward; 'rollback' abandons it if its commit point was not reached (new nodes terminated). "
        "A plan past its commit point is always finished.")

    @model_validator(mode="after")
    def _backoff_bounds(self) -> "ExecutorSettings":
        if self.launch_backoff_max_s < self.launch_backoff_s:
            raise ValueError("launch_backoff_max_s must be >= launch_backoff_s")
        if self.datastore_backoff_max_s < self.datastore_backoff_s:
            raise ValueError("datastore_backoff_max_s must be >= datastore_backoff_s")
        return self


class Ec2Settings(BaseModel):
    """EC2 through boto3. Credentials come from the standard AWS chain and are never settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    region: str = Field("us-east-1", description="AWS region name.")
    endpoint_url: str | None = Field(
        None, description="EC2 endpoint URL override (e.g. a moto server for tests); None = AWS.")
    image_id: str = Field("", description="AMI id new nodes boot from (ami-…). Required to launch.")
    instance_type: str = Field("m5.large", description="EC2 instance type of new nodes.")
    subnet_id: str | None = Field(None, description="Subnet to launch into; None = the default VPC's.")
    security_group_ids: tuple[str, ...] = Field((), description="Security group ids for new nodes.")
    key_name: str | None = Field(None, description="EC2 key pair name for SSH; None = no key.")
    iam_instance_profile: str | None = Field(
        None, description="IAM instance profile name (or ARN) new nodes run with; None = none.")
    address: Literal["private_ip", "private_dns", "public_ip", "public_dns"] = Field(
        "private_dns", description="Which instance attribute is the node's address (must equal the "
        "host the data store reports for the node's server).")
    extra_tags: dict[str, str] = Field({}, description="Additional tags put on every node launched.")


class OpenStackSettings(BaseModel):
    """OpenStack through openstacksdk. Credentials come from clouds.yaml or OS_* variables."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cloud: str | None = Field(
        None, description="Name of the cloud in clouds.yaml; None = from OS_* environment variables.")
    image: str = Field("", description="Image name or id new servers boot from. Required to launch.")
    flavor: str = Field("m1.medium", description="Flavor name or id of new servers.")
    network: str | None = Field(None, description="Network name or id to attach; None = the cloud's default.")
    key_name: str | None = Field(None, description="Nova key pair name; None = none.")
    security_groups: tuple[str, ...] = Field((), description="Security group names for new servers.")
    auto_ip: bool = Field(False, description="Ask openstacksdk for a floating IP (needs Neutron).")
    wait_interval_s: float = Field(
        5.0, gt=0, description="Seconds between status polls when a command waits for a server.")
    name_prefix: str = Field("metctl", description="New servers are named <prefix>-<cluster>-<n>.")
    address: Literal["private", "public", "name"] = Field(
        "private", description="Which server attribute is the node's address: its first private "
        "IPv4, its public/floating IPv4, or its name.")


class LocalSettings(BaseModel):
    """Nodes as processes on this machine (real local HBase RegionServers, demos)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state_dir: str = Field(
        "metctl-state/local-nodes", description="Directory holding one sub-directory per node "
        "(its working dir, node.json with PID, profile, tags, port, address; its log).")
    command: tuple[str, ...] = Field(
        ("sleep", "infinity"), description="Command (argv template) that starts one node. Placeholders: "
        "{node_dir} {settings_file} {user_data_file} {profile} {port} {node} {cluster} {address}.")
    env: dict[str, str] = Field(
        {}, description="Extra environment for node processes (templated like `command`).")
    address_template: str = Field(
        "127.0.0.1:{port}", description="The node's address as the data store will report its "
        "host; placeholders {port} {node} {host}.")
    host: str = Field("127.0.0.1", description="Host the node processes bind to.")
    base_port: int = Field(
        16120, ge=1024, le=65000, description="First port handed to nodes; each node gets the next "
        "free slot of base_port + k * port_stride.")
    port_stride: int = Field(10, ge=1, description="Port distance between consecutive nodes.")
    max_nodes: int = Field(16, ge=1, description="Most local nodes at once (port slots).")
    ready_port: bool = Field(
        False, description="Report a node 'running' only once its port accepts TCP connections "
        "(else as soon as its process lives).")
    stop_timeout_s: float = Field(
        30.0, gt=0, description="Seconds between SIGTERM and SIGKILL when a node is terminated.")


class AdoptEntry(BaseModel):
    """One entry of `infrastructure.adopt`; a node must match every criterion given (at least one).
    The nodes it matches are owned by metctl, which may terminate them after draining them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_ids: tuple[str, ...] = Field(
        (), description="Cloud ids of the nodes (EC2 instance ids i-…, Nova server ids); empty = "
        "any id. Not for the local driver.")
    hosts: tuple[str, ...] = Field(
        (), description="Node addresses as the driver reports them (infrastructure.<driver>.address: "
        "the host the data store reports for the node's server); empty = any address. Local driver: "
        "host:port of a process listening there (e.g. a RegionServer started by hand).")
    tags: dict[str, str] = Field(
        {}, description="Tags (EC2) or server metadata (OpenStack) the node must carry, every one "
        "with this value; empty = no tag needed. Not for the local driver.")

    @model_validator(mode="after")
    def _criteria(self) -> "AdoptEntry":
        if not (self.instance_ids or self.hosts or self.tags):
            raise ValueError("an adopt entry needs instance_ids, hosts or tags (an empty entry "
                             "would adopt every node)")
        if any(k.startswith("metctl:") for k in self.tags):
            raise ValueError("adopt by your own tags: metctl:* tags mark the nodes metctl launched")
        return self


class InfrastructureSettings(BaseModel):
    """Where nodes come from. `driver` picks one sub-section; the others are ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    driver: Literal["sim", "ec2", "openstack", "local"] = Field(
        "sim", description="Infrastructure driver: the simulator's, EC2, OpenStack or local processes.")
    ec2: Ec2Settings = Ec2Settings()
    openstack: OpenStackSettings = OpenStackSettings()
    local: LocalSettings = LocalSettings()
    adopt: tuple[AdoptEntry, ...] = Field(
        (), description="Nodes metctl did not launch that it owns all the same: a scale-in may "
        "terminate them once drained. A node of an existing cluster that no entry matches is only "
        "drained when the plan removes it (its RegionServer decommissioned, the machine left "
        "running). A node tagged for another metctl cluster is never adopted.")

    @model_validator(mode="after")
    def _local_adopts_by_host(self) -> "InfrastructureSettings":
        if self.driver == "local":
            for entry in self.adopt:
                if entry.instance_ids or entry.tags:
                    raise ValueError("adopt: the local driver adopts by hosts only (host:port of a "
                                     "listening process)")
                bad = [h for h in entry.hosts if not h.rpartition(":")[2].isdigit()]
                if bad:
                    raise ValueError(f"adopt: local hosts must be host:port (got {bad[0]!r})")
        return self


def quorum_hosts_and_port(zookeeper_quorum: str) -> tuple[list[str], str]:
    """"h1:2181,h2:2181" as (["h1", "h2"], "2181"): HBase's client takes one port for all
    hosts (a host without a port has 2181). ValueError when it is not that."""
    hosts, ports = [], set()
    for part in (p.strip() for p in zookeeper_quorum.split(",") if p.strip()):
        host, _, port = part.rpartition(":") if ":" in part else (part, "", "2181")
        if not host or not port.isdigit():
            raise ValueError("the HBase cluster's ZooKeeper quorum, host:port[,host:port…], "
                             f"got {zookeeper_quorum!r}")
        hosts.append(host)
        ports.add(port)
    if not hosts or len(ports) != 1:
        raise ValueError("the HBase cluster's ZooKeeper quorum, host:port[,host:port…] with "
                         f"hosts sharing one port, got {zookeeper_quorum!r}")
    return hosts, ports.pop()


class HBaseStoreSettings(BaseModel):
    """How the HBase data-store driver reaches the cluster (used by driver: hbase)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    zookeeper_quorum: str = Field("127.0.0.1:2181", description="hbase.zookeeper.quorum (host:port,…).")
    znode_parent: str = Field("/hbase", description="zookeeper.znode.parent of the cluster.")
    client_jars_dir: str | None = Field(
        None, description="Directory with the HBase client jars for the py4j gateway (`metctl hbase-jars "
        "fetch` prints it); None = where that command puts the default version "
        f"($METCTL_CACHE or ~/.cache/metctl, then hbase-{HBASE_VERSION}/lib).")
    rpc_timeout_s: float = Field(60.0, gt=0, description="Timeout of one admin call, seconds.")
    restart_command: tuple[str, ...] = Field(
        (), description="Command (argv template) that restarts one RegionServer gracefully with new "
        "settings and returns once it serves again; placeholders {server} (its id, host,port) and "
        "{settings} (a JSON file of the hbase-site.xml settings of the new profile). Relative paths "
        "are taken from the directory metctl runs in. Empty = restarts with a profile fail "
        "(the plan stops at a consistent point). Local cluster: python deploy/local_hbase/cluster.py "
        "--workdir W restart-rs {server} --settings {settings}.")
    host_format: str = Field(
        "{host}", description="How a RegionServer's host and port make the host metctl compares "
        "with a node's infrastructure address: '{host}' for one RegionServer per machine, "
        "'{host}:{port}' for several on one machine (the local cluster).")

    @field_validator("zookeeper_quorum")
    @classmethod
    def _quorum(cls, v: str) -> str:
        quorum_hosts_and_port(v)
        return v

    @field_validator("host_format")
    @classmethod
    def _host_format_placeholders(cls, v: str) -> str:
        try:
            v.format(host="h", port=1)
        except (KeyError, IndexError, ValueError) as err:
            raise ValueError("only the placeholders {host} and {port} are allowed") from err
        return v


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# Cassandra's own keyspaces: never a tenant's, never monitored as one
CASSANDRA_SYSTEM_KEYSPACES = frozenset({
    "system", "system_auth", "system_schema", "system_distributed", "system_traces",
    "system_views", "system_virtual_schema", "system_cluster_metadata"})


def _template_placeholders(argv: tuple[str, ...], allowed: frozenset[str]) -> tuple[str, ...]:
    """An argv template may only name the placeholders metctl fills in (a typo would reach
    the command as literal text)."""
    for arg in argv:
        for name in _PLACEHOLDER.findall(arg):
            if name not in allowed:
                raise ValueError(f"unknown placeholder {{{name}}} in {arg!r}; allowed: "
                                 + ", ".join(f"{{{a}}}" for a in sorted(allowed)))
    return argv


class CassandraStoreSettings(BaseModel):
    """How the Cassandra data-store driver reaches the cluster (used by driver: cassandra):
    CQL for observation (gossip state, per-table counters in system_views), NodeTool for node
    admin (decommission, cleanup, stream throughput). docs/cassandra.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    contact_points: tuple[str, ...] = Field(
        ("127.0.0.1",), description="Addresses (host names or IPs, no port) of nodes the CQL "
        "client first connects to; it discovers the others from the ring. Node ids in metctl "
        "are the nodes' broadcast addresses.")
    native_port: int = Field(9042, ge=1, le=65535, description="CQL native transport port "
                             "(native_transport_port) of every node.")
    keyspaces: tuple[str, ...] = Field(
        (), description="Keyspaces whose tables metctl monitors (each table on each node is a "
        "partition, keyspace.table@address). Empty = every keyspace but Cassandra's own system_*.")
    nodetool_command: tuple[str, ...] = Field(
        ("nodetool", "-h", "{address}", "-p", "7199"), description="Command (argv template) that "
        "runs NodeTool against one node; metctl appends NodeTool's own arguments (decommission, "
        "cleanup, setstreamthroughput -m N, compact KS TABLE). Placeholder {address}: the node's "
        "address. Its JMX port must be reachable from metctl. Local cluster: python "
        "deploy/local_cassandra/cluster.py --workdir W nodetool {address}.")
    restart_command: tuple[str, ...] = Field(
        (), description="Command (argv template) that restarts one node with a profile's "
        "cassandra.yaml settings; placeholders {address}, {profile} and {settings} (a JSON file "
        "of the settings). Empty = restarts with a profile fail (the plan stops at a consistent "
        "point). Local cluster: python deploy/local_cassandra/cluster.py --workdir W restart-node "
        "{address} --profile {profile} --settings {settings}.")
    query_timeout_s: float = Field(
        10.0, gt=0, description="Seconds for connecting and for one CQL query (gossip, "
        "system_views).")

    @field_validator("contact_points")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for v in value:
            if not v or not re.fullmatch(r"[A-Za-z0-9._\-]+", v):
                raise ValueError(f"expected a host name or IPv4 address without port or scheme, got {v!r}")
        return value

    @field_validator("keyspaces")
    @classmethod
    def _keyspace_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for v in value:
            if not re.fullmatch(r"[A-Za-z0-9_]{1,48}", v):
                raise ValueError(f"expected a keyspace name (letters, digits, _; at most 48), got {v!r}")
            if v.lower() in CASSANDRA_SYSTEM_KEYSPACES:
                raise ValueError(f"{v!r} is one of Cassandra's own keyspaces, not a tenant's")
        return value

    @field_validator("nodetool_command")
    @classmethod
    def _nodetool(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or not value[0].strip():
            raise ValueError("expected a command, e.g. [nodetool, -h, '{address}', -p, '7199']")
        return _template_placeholders(value, frozenset({"address"}))

    @field_validator("restart_command")
    @classmethod
    def _restart(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if value and not value[0].strip():
            raise ValueError("expected a command (or an empty list: no restarts)")
        return _template_placeholders(value, frozenset({"address", "profile", "settings"}))


class DataStoreSettings(BaseModel):
    """Where partitions live: the simulator's store, a real HBase or a real Cassandra cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    driver: Literal["sim", "hbase", "cassandra"] = Field("sim", description="Data-store driver.")
    move_mb_s: float = Field(
        26.0, gt=0, description="MiB/s at which one partition's data travels when it moves: "
        "read back from HDFS on its new node (HBase: its cache warms up) or streamed to it "
        "(stores that copy data). The policy prices moves with it, the executor allows a copy "
        "this long (move_timeout_s), the simulated store streams at it. One sender's rate in "
        "the incremental-elasticity paper (210 Mbit/s); a 3.6 GB partition, two moves at "
        "once: 283 s.")
    hbase: HBaseStoreSettings = HBaseStoreSettings()
    cassandra: CassandraStoreSettings = CassandraStoreSettings()
