#!/usr/bin/env python3
"""A real Cassandra 5.0 cluster on this machine: one JVM per node (CassandraDaemon from the
cassandra-all jars on Maven Central), node N on its own loopback address 127.A.B.(N+1) (Linux
routes all of 127/8 to lo, no aliases needed), each with its own conf dir, JMX port and log.

Used by the integration tests (tests/fixtures/cassandra.py), by `make demo-cassandra` and by hand
(`python deploy/local_cassandra/cluster.py …` or `python -m deploy.local_cassandra.cluster …`):

    python deploy/local_cassandra/cluster.py fetch               # jars from Maven Central -> cache
    python deploy/local_cassandra/cluster.py --workdir W start --nodes 2
    python deploy/local_cassandra/cluster.py --workdir W add-node     # prints the new node's address
    python deploy/local_cassandra/cluster.py --workdir W decommission n3 [--force]
    python deploy/local_cassandra/cluster.py --workdir W nodetool n1 status   # or the node's address
    python deploy/local_cassandra/cluster.py --workdir W restart-node ADDRESS --profile P --settings S.json
    python deploy/local_cassandra/cluster.py --workdir W status
    python deploy/local_cassandra/cluster.py --workdir W stop

Every process started is recorded (PID + its conf dir) in W/cluster.json; stop signals only
those PIDs, and only after checking that the PID's command line still names our conf dir (the
ownership rule as the local HBase: deploy/localproc). `start`
on a running cluster returns it, `stop` on a stopped one does nothing, a failed `start` stops
what it started.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from actuator.hbase_jars import cache_root  # noqa: E402
from deploy.localproc import ClusterError, LocalCluster, free_port, pid_owned, tail  # noqa: E402
from deploy.localproc.cgroups import BadSlice, Slice, add_quota_arguments, quota_options  # noqa: E402

CASSANDRA_VERSION = "5.0.4"
HERE = Path(__file__).resolve().parent
MAIN = "org.apache.cassandra.service.CassandraDaemon"
NODETOOL = "org.apache.cassandra.tools.NodeTool"

# JDK 17: Cassandra 5.0 reaches into these JDK internals (the set its own jvm17-server.options
# ships); NodeTool needs the same or it crashes.
JDK17_FLAGS = [
    "-Djdk.attach.allowAttachSelf=true", "-Dio.netty.tryReflectionSetAccessible=true",
    *(f"--add-exports=java.base/{p}=ALL-UNNAMED" for p in (
        "jdk.internal.misc", "jdk.internal.ref", "sun.nio.ch", "jdk.internal.loader",
        "jdk.internal.reflect", "jdk.internal.math", "jdk.internal.module", "jdk.internal.util.jar")),
    "--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports=java.sql/java.sql=ALL-UNNAMED",
    "--add-exports=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang.module", "jdk.internal.loader", "jdk.internal.ref", "jdk.internal.reflect",
        "jdk.internal.math", "jdk.internal.module", "jdk.internal.util.jar", "sun.nio.ch",
        "java.io", "java.lang", "java.lang.reflect", "java.lang.ref", "java.util", "java.nio",
        "java.util.concurrent", "java.util.concurrent.atomic", "java.net")),
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens=jdk.unsupported/sun.misc=ALL-UNNAMED",
]
# Small JVMs (CPU and memory are shared with other engineers' clusters): -Xmx512m gives ~640 MB RSS.
SMALL_JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:ActiveProcessorCount=1",
                   "-XX:ReservedCodeCacheSize=64m", "-Djava.net.preferIPv4Stack=true", "-Xss512k"]

LOGBACK = """\
<configuration scan="false">
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{ISO8601} %-5level [%thread] %logger{20}: %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.cassandra" level="INFO"/>
  <logger name="com.datastax" level="WARN"/>
  <root level="WARN"><appender-ref ref="STDOUT"/></root>
</configuration>
"""


def home_for(version: str = CASSANDRA_VERSION) -> Path:
    return cache_root() / f"cassandra-{version}"


def fetch(version: str = CASSANDRA_VERSION, quiet: bool = True) -> Path:
    """Copy cassandra-all and its runtime dependencies from Maven Central into the cache (once;
    a `.complete` marker makes it idempotent). Returns the cache folder."""
    home = home_for(version)
    marker = home / ".complete"
    if marker.exists():
        return home
    tmp = home.with_name(home.name + ".tmp")
    cmd = ["mvn", "-B", *(["-q"] if quiet else []), "-f", str(HERE / "pom.xml"),
           f"-Dcassandra.version={version}", "dependency:copy-dependencies",
           "-DincludeScope=runtime", f"-DoutputDirectory={tmp / 'lib'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ClusterError(f"mvn could not fetch Cassandra {version}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    shutil.rmtree(home, ignore_errors=True)
    tmp.rename(home)
    marker.write_text(version + "\n")
    return home


def jamm_jar(home: Path) -> Path:
    jars = sorted((home / "lib").glob("jamm-*.jar"))
    if not jars:
        raise ClusterError(f"no jamm jar in {home / 'lib'}: run `cluster.py fetch`")
    return jars[-1]


def java_opts(home: Path) -> list[str]:
    return [*SMALL_JVM_FLAGS, *JDK17_FLAGS, f"-javaagent:{jamm_jar(home)}"]


def yaml_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(str(v))  # a JSON string is a valid YAML scalar


def cassandra_yaml(settings: Mapping[str, Any]) -> str:
    """cassandra.yaml from flat settings; the seed provider and directory lists are structured."""
    out = []
    for k, v in settings.items():
        if k == "seeds":
            out.append("seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n"
                       f"    parameters:\n      - seeds: {yaml_scalar(v)}")
        elif isinstance(v, list):
            out.append(f"{k}:\n" + "".join(f"  - {yaml_scalar(x)}\n" for x in v).rstrip("\n"))
        else:
            out.append(f"{k}: {yaml_scalar(v)}")
    return "\n".join(out) + "\n"


@dataclass
class Node:
    name: str  # n1, n2, …
    address: str  # 127.A.B.(index+1): listen, rpc and broadcast address
    jmx_port: int
    conf_dir: str
    log: str
    pid: int | None = None


# Each process's slice of the machine, as the local HBase's (deploy/local_hbase/cluster.py,
# which says why these sizes): a node is a fixed share of a core, the YCSB clients are capped
# at one core and weigh twice a node, the cluster weighs the most the kernel allows. A
# Cassandra node gets 0.3 core: a QUORUM write touches two replicas and a node's JVM does more
# in the background (gossip, compaction, hints) than a RegionServer's.
DEFAULT_SLICES = {
    "node": Slice(cpu_cores=0.3, cpu_shares=1024),
    "ycsb": Slice(cpu_cores=1.0, cpu_shares=2048),
    "cluster": Slice(cpu_shares=262_144),
}


class LocalCassandra(LocalCluster):
    """One local cluster living in `workdir` (state in workdir/cluster.json, nodes under
    "nodes")."""

    records_key = "nodes"
    default_slices = DEFAULT_SLICES

    def __init__(self, workdir: str | Path, version: str = CASSANDRA_VERSION, *,
                 heap_mb: int = 512, num_tokens: int = 16,
                 extra_yaml: Mapping[str, Any] | None = None,
                 quota: bool | None = None, slices: Mapping[str, Slice] | None = None):
        super().__init__(workdir, version, quota=quota, slices=slices)
        self.heap_mb = heap_mb
        self.num_tokens = num_tokens
        self.extra_yaml = dict(extra_yaml or {})

    # -- state --------------------------------------------------------------------------------

    def _ensure_ports(self) -> dict[str, Any]:
        """Cluster-wide: a random 127.A.B.0/24 block and random storage / native ports, so
        other clusters on this machine (other engineers', other test sessions) never collide."""
        with self._locked() as st:
            if "subnet" not in st:
                st["subnet"] = f"127.{random.randint(1, 254)}.{random.randint(0, 254)}"
                st["storage_port"] = free_port()
                st["native_port"] = free_port()
            return dict(st)

    @property
    def native_port(self) -> int:
        return self._read()["native_port"]

    @property
    def storage_port(self) -> int:
        return self._read()["storage_port"]

    def nodes(self) -> list[Node]:
        ns = [Node(**n) for n in self._read()["nodes"].values()]
        return sorted(ns, key=lambda n: int(n.name[1:]))

    def node(self, name_or_address: str) -> Node:
        for n in self.nodes():
            if name_or_address in (n.name, n.address):
                return n
        raise ClusterError(f"no node {name_or_address!r} in {self.state_file}")

    def running(self, name: str) -> bool:
        n = self.node(name)
        return bool(n.pid and pid_owned(n.pid, n.conf_dir))

    def contact_points(self) -> list[str]:
        return [n.address for n in self.nodes() if n.pid and pid_owned(n.pid, n.conf_dir)]

    # -- configuration ------------------------------------------------------------------------

    def settings(self, n: Node, overrides: Mapping[str, Any] = ()) -> dict[str, Any]:
        st = self._read()
        data = self.workdir / "data" / n.name
        first = self.nodes()[0].address if self.nodes() else n.address
        s: dict[str, Any] = {
            "cluster_name": "metctl-local",
            "num_tokens": self.num_tokens,
            "allocate_tokens_for_local_replication_factor": 2,
            "partitioner": "org.apache.cassandra.dht.Murmur3Partitioner",
            "commitlog_sync": "periodic",
            "commitlog_sync_period": "10000ms",
            "seeds": f"{first}:{st['storage_port']}",
            "listen_address": n.address,
            "rpc_address": n.address,
            "storage_port": st["storage_port"],
            "native_transport_port": st["native_port"],
            "endpoint_snitch": "SimpleSnitch",
            "data_file_directories": [str(data / "data")],
            "commitlog_directory": str(data / "commitlog"),
            "saved_caches_directory": str(data / "saved_caches"),
            "hints_directory": str(data / "hints"),
            "cdc_raw_directory": str(data / "cdc_raw"),
            "concurrent_compactors": 1,
            "concurrent_reads": 8,
            "concurrent_writes": 8,
            # bootstrap / decommission stream whole SSTables (zero-copy) where ranges allow
            "stream_entire_sstables": True,
            "stream_throughput_outbound": "24MiB/s",
            "memtable_heap_space": "64MiB",
            "memtable_offheap_space": "64MiB",
            "key_cache_size": "16MiB",
            # 2 s is Cassandra's default; on a shared 2-core machine a node that is starting
            # its JVM (class loading, JIT) while it joins can pause longer than that, and a
            # write to a pending replica counts toward QUORUM (docs/cassandra.md)
            "write_request_timeout": "5000ms",
            "read_request_timeout": "5000ms",
            "range_request_timeout": "10000ms",
        }
        s.update(self.extra_yaml)
        s.update(overrides)
        return s

    def write_conf(self, n: Node, overrides: Mapping[str, Any] = ()) -> None:
        conf = Path(n.conf_dir)
        conf.mkdir(parents=True, exist_ok=True)
        (conf / "cassandra.yaml").write_text(cassandra_yaml(self.settings(n, overrides)))
        (conf / "logback.xml").write_text(LOGBACK)
        (conf / "overrides.json").write_text(json.dumps(dict(overrides), indent=2))

    def command(self, n: Node) -> list[str]:
        home = home_for(self.version)
        return ["java", "-Xms256m", f"-Xmx{self.heap_mb}m", *java_opts(home),
                f"-Dcassandra.config=file://{n.conf_dir}/cassandra.yaml",
                f"-Dlogback.configurationFile=file://{n.conf_dir}/logback.xml",
                f"-Dcassandra.storagedir={self.workdir / 'data' / n.name}",
                f"-Dcassandra.jmx.local.port={n.jmx_port}",
                "-Dcassandra-foreground=yes",
                # test-sized start-up: no 30 s ring delay / gossip settling
                "-Dcassandra.ring_delay_ms=2000", "-Dcassandra.skip_wait_for_gossip_to_settle=0",
                f"-Dmetctl.conf={n.conf_dir}",
                "-cp", f"{n.conf_dir}{os.pathsep}{home / 'lib' / '*'}", MAIN]

    def nodetool(self, name: str, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess:
        """Run NodeTool against one node's JMX port (argument list, never a shell)."""
        return subprocess.run(self.nodetool_cmd(name, *args), capture_output=True, text=True,
                              timeout=timeout_s)

    def nodetool_cmd(self, name: str, *args: str) -> list[str]:
        home = home_for(self.version)
        n = self.node(name)
        return ["java", "-Xmx128m", *SMALL_JVM_FLAGS, *JDK17_FLAGS,
                "-Dlogback.configurationFile=" + str(Path(n.conf_dir) / "logback.xml"),
                "-cp", str(home / "lib" / "*"), NODETOOL, "-h", "127.0.0.1", "-p", str(n.jmx_port), *args]

    # -- processes ----------------------------------------------------------------------------

    def define_node(self, overrides: Mapping[str, Any] = ()) -> Node:
        st = self._ensure_ports()
        idx = max((int(k[1:]) for k in st["nodes"]), default=0) + 1
        if idx > 250:
            raise ClusterError("at most 250 nodes per local cluster")
        n = Node(name=f"n{idx}", address=f"{st['subnet']}.{idx + 1}", jmx_port=free_port(),
                 conf_dir=str(self.workdir / "conf" / f"n{idx}"), log=str(self.workdir / "logs" / f"n{idx}.log"))
        self._record(n.name, n.__dict__)
        self.write_conf(n, overrides)
        return n

    def spawn(self, name: str) -> int:
        n = self.node(name)
        profile = Path(n.conf_dir, "profile")
        return self.spawn_process(n.name, self.command(n), n.conf_dir, n.log, kind="node",
                                  profile=profile.read_text().strip() if profile.exists() else None)

    def cql_up(self, name: str) -> bool:
        n = self.node(name)
        with socket.socket() as s:
            s.settimeout(1)
            try:
                s.connect((n.address, self.native_port))
                return True
            except OSError:
                return False

    def wait_cql(self, name: str, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.running(name):
                raise ClusterError(f"node {name} died while starting:\n{tail(self.node(name).log)}")
            if self.cql_up(name):
                return
            time.sleep(0.5)
        raise ClusterError(f"node {name} did not serve CQL within {timeout_s:.0f} s:\n{tail(self.node(name).log)}")

    def start(self, nodes: int = 2, timeout_s: float = 180) -> "LocalCassandra":
        """Start (or find running) `nodes` nodes one after another: Cassandra wants one node
        bootstrapping at a time. Stops what it started when anything fails."""
        self.prepare_groups()
        fetch(self.version)
        started: list[str] = []
        try:
            while len(self.nodes()) < nodes:
                self.define_node()
            for n in self.nodes()[:nodes]:
                if not self.running(n.name):
                    self.spawn(n.name)
                    started.append(n.name)
                self.wait_cql(n.name, timeout_s)
        except BaseException:
            for name in started:
                self.stop_node(name)
            raise
        return self

    def add_node(self, overrides: Mapping[str, Any] = (), wait: bool = True, timeout_s: float = 240) -> Node:
        """Define and start one more node; it bootstraps (streams its token ranges) and serves
        CQL once it has joined. `wait=False` returns right after the JVM started."""
        n = self.define_node(overrides)
        self.spawn(n.name)
        if wait:
            try:
                self.wait_cql(n.name, timeout_s)
            except BaseException:
                self.stop_node(n.name)
                raise
        return self.node(n.name)

    def decommission(self, name: str, force: bool = False, timeout_s: float = 600) -> None:
        """Stream the node's data away (blocking NodeTool call), then stop its process."""
        args = ["decommission", *(["--force"] if force else [])]
        r = self.nodetool(name, *args, timeout_s=timeout_s)
        if r.returncode != 0:
            raise ClusterError(f"nodetool decommission {name} failed: {r.stdout[-1500:]}{r.stderr[-1500:]}")
        self.stop_node(name)

    def stop_node(self, name: str, timeout_s: float = 30) -> None:
        """SIGTERM, then SIGKILL after `timeout_s`; only our own, still-matching PID."""
        n = self.node(name)
        self.stop_process(name, n.pid, n.conf_dir, timeout_s)

    def kill_node(self, name: str) -> None:
        """SIGKILL (a crash), for failure tests."""
        n = self.node(name)
        self.kill_process(name, n.pid, n.conf_dir)

    def stop(self, timeout_s: float = 30) -> None:
        for n in reversed(self.nodes()):
            self.stop_node(n.name, timeout_s)
        self.release_all()

    def status(self) -> dict[str, Any]:
        return {"workdir": str(self.workdir), "native_port": self._read().get("native_port"),
                "nodes": {n.name: {"address": n.address, "jmx_port": n.jmx_port,
                                   "running": bool(n.pid and pid_owned(n.pid, n.conf_dir)),
                                   "cql": self.cql_up(n.name) if n.pid else False}
                          for n in self.nodes()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=os.environ.get("METCTL_CASSANDRA_WORKDIR", "out/local-cassandra"))
    ap.add_argument("--version", default=CASSANDRA_VERSION)
    add_quota_arguments(ap)  # start: node, ycsb, cluster, node.<profile>
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch")
    s = sub.add_parser("start")
    s.add_argument("--nodes", type=int, default=2)
    sub.add_parser("add-node")
    d = sub.add_parser("decommission")
    d.add_argument("name")
    d.add_argument("--force", action="store_true")
    sn = sub.add_parser("stop-node")
    sn.add_argument("name")
    nt = sub.add_parser("nodetool")
    nt.add_argument("name")
    nt.add_argument("args", nargs=argparse.REMAINDER)
    rn = sub.add_parser("restart-node")
    rn.add_argument("name")
    rn.add_argument("--profile", required=True)
    rn.add_argument("--settings", required=True, help="JSON file of cassandra.yaml settings")
    sub.add_parser("status")
    sub.add_parser("stop")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "fetch":
            print(fetch(a.version, quiet=False))
            return 0
        c = LocalCassandra(a.workdir, a.version, **quota_options(a))
        if a.cmd == "start":
            t0 = time.monotonic()
            c.start(nodes=a.nodes)
            print(f"ready in {time.monotonic() - t0:.1f} s: {', '.join(c.contact_points())} port {c.native_port}")
        elif a.cmd == "add-node":
            print(c.add_node().address)
        elif a.cmd == "decommission":
            c.decommission(a.name, force=a.force)
        elif a.cmd == "stop-node":
            c.stop_node(a.name)
        elif a.cmd == "nodetool":
            # replaced by NodeTool itself (no wrapper in between): metctl's
            # datastore.cassandra.nodetool_command runs this, and a signal sent to it, or its
            # exit code, is NodeTool's own; a decommission is not cut by a timeout here
            cmd = c.nodetool_cmd(a.name, *a.args)
            sys.stdout.flush()
            os.execvp(cmd[0], cmd)
        elif a.cmd == "restart-node":
            # metctl's datastore.cassandra.restart_command: stop, rewrite cassandra.yaml with
            # the profile's settings, start; returns once the JVM runs (metctl watches gossip)
            n = c.node(a.name)
            settings = json.loads(Path(a.settings).read_text())
            c.stop_node(n.name)
            c.write_conf(n, settings)
            (Path(n.conf_dir) / "profile").write_text(a.profile + "\n")
            c.spawn(n.name)
        elif a.cmd == "status":
            print(json.dumps(c.status(), indent=2))
        elif a.cmd == "stop":
            c.stop()
    except ClusterError as e:
        print(f"local-cassandra: {e}", file=sys.stderr)
        return 2 if isinstance(e, BadSlice) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
