#!/usr/bin/env python3
"""A real HBase 2.6 cluster on this machine as separate JVMs: ZooKeeper (HQuorumPeer), one
HMaster and N HRegionServers, each with its own conf dir, ports and log, all on 127.0.0.1.

Used by the integration tests (tests/fixtures/hbase.py), the benches, `make demo-hbase` and
by hand (`python deploy/local_hbase/cluster.py …` or `python -m deploy.local_hbase.cluster …`):

    python deploy/local_hbase/cluster.py fetch                 # jars from Maven Central -> cache
    python deploy/local_hbase/cluster.py --workdir W start --rs 2
    python deploy/local_hbase/cluster.py --workdir W add-rs     # prints the new RS's name
    python deploy/local_hbase/cluster.py --workdir W stop-rs rs3
    python deploy/local_hbase/cluster.py --workdir W restart-rs rs1 --settings S.json
    python deploy/local_hbase/cluster.py --workdir W exec-rs NAME --port P --info-port Q --settings F
                                   # becomes that RS (os.exec; for metctl's local process driver)
    python deploy/local_hbase/cluster.py --workdir W status
    python deploy/local_hbase/cluster.py --workdir W stop

Every process started is recorded (PID + its conf dir) in W/cluster.json; stop signals only
those PIDs, and only after checking that the PID's command line still names our conf dir (a
recycled PID is never signalled). Everything is idempotent: `start` on a running cluster
returns it, `stop` on a stopped one does nothing, a failed `start` stops what it started.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping
from xml.sax.saxutils import escape

# Run as a file (python deploy/local_hbase/cluster.py) the repository root is not on the path
# yet; the jar fetch is shared with `metctl hbase-jars fetch` (actuator/hbase_jars.py, standard
# library only, so this file still runs on a bare python3 from the source tree).
if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from actuator import hbase_jars  # noqa: E402
from actuator.hbase_jars import HBASE_VERSION, cache_root, home_for  # noqa: E402,F401 (re-exported)
from deploy.localproc import (  # noqa: E402,F401 (free_port, pid_alive, tail: re-exported)
    ClusterError, LocalCluster, free_port, pid_alive, pid_owned, port_free, tail,
)
from deploy.localproc.cgroups import Slice  # noqa: E402

# JDK 17: HBase and its shaded netty reach into these JDK internals.
JDK17_FLAGS = [
    *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang", "java.lang.reflect", "java.nio", "sun.nio.ch", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "java.io",
        "java.net")),
    *(f"--add-exports=java.base/{p}=ALL-UNNAMED" for p in (
        "jdk.internal.misc", "sun.net.dns", "sun.net.util")),
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
]
# Small, fast-starting JVMs: C1 only and the serial collector (CPU is the scarce resource here).
SMALL_JVM_FLAGS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=64m",
                   "-Djava.net.preferIPv4Stack=true"]

MAINS = {
    "zk": "org.apache.hadoop.hbase.zookeeper.HQuorumPeer",
    "master": "org.apache.hadoop.hbase.master.HMaster",
    "rs": "org.apache.hadoop.hbase.regionserver.HRegionServer",
}
MASTER_SERVER_BEAN = "Hadoop:service=HBase,name=Master,sub=Server"
MASTER_AM_BEAN = "Hadoop:service=HBase,name=Master,sub=AssignmentManager"
HOST = "localhost"  # the name every server registers under: ids read "localhost,PORT"
PROFILE_KEY = "metctl.profile"  # the property naming a RegionServer's metctl profile

# Each process's slice of this 2-core machine (docs/local-hbase.md, "A node is a slice of the
# machine"): a RegionServer is a fixed share of one core, so n RegionServers have n times one's
# CPU. The share is 0.15 core, not the quarter first planned: a YCSB client spends ~0.7 core-s
# of its own per core-s a RegionServer serves (measured: 0.178 core beside one saturated
# 0.248-core RegionServer), so six saturated RegionServers and their client need
# 6 x 0.15 x 1.7 = 1.55 of the 2 cores, where six quarter-cores would need 2.6 and the curve
# would flatten on the machine, not on the nodes. The master and ZooKeeper are capped so they
# cannot take a node's share; the YCSB clients are capped at one core (never reached at six
# RegionServers) and weigh twice a node. The cluster as a whole weighs the most the kernel
# allows (cpu.shares 262144, 256 busy tasks): other work on this shared machine (other
# builds at nice 0) takes little from a measurement, while the caps bound what the cluster can
# take from it.
DEFAULT_SLICES = {
    "rs": Slice(cpu_cores=0.15, cpu_shares=1024),
    "master": Slice(cpu_cores=0.5, cpu_shares=1024),
    "zk": Slice(cpu_cores=0.25, cpu_shares=1024),
    "ycsb": Slice(cpu_cores=1.0, cpu_shares=2048),
    "cluster": Slice(cpu_shares=262_144),
}

LOG4J = """\
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.org.apache.hadoop.hbase.zookeeper=WARN
log4j.logger.org.apache.hadoop.metrics2=WARN
log4j.logger.org.apache.hadoop=WARN
log4j.logger.org.apache.hadoop.hbase=INFO
"""

WEB_XML = """<?xml version="1.0" encoding="UTF-8"?>
<web-app xmlns="http://xmlns.jcp.org/xml/ns/javaee" version="3.1"></web-app>
"""


# ---------------------------------------------------------------------------------------------
# jars


def fetch(version: str = HBASE_VERSION, quiet: bool = True) -> Path:
    """The jars of `version` in the cache (actuator/hbase_jars.py fetches them from Maven
    Central once), plus the hbase-webapps folders the server jar lacks. Returns the cache folder."""
    try:
        home, _ = hbase_jars.fetch(version, quiet=quiet)
    except hbase_jars.JarsError as err:
        raise ClusterError(str(err)) from None
    # The server jar ships no hbase-webapps/: without a web.xml per app the master's info
    # server fails and the master dies. Minimal ones make /jmx, /conf, /prometheus answer.
    for app in ("master", "regionserver", "thrift", "rest", "static"):
        web = home / "webapps" / "hbase-webapps" / app / "WEB-INF" / "web.xml"
        if not web.exists():
            web.parent.mkdir(parents=True, exist_ok=True)
            web.write_text(WEB_XML)
    return home


def classpath(home: Path, conf_dir: Path | None = None) -> str:
    parts = [str(conf_dir)] if conf_dir else []
    parts += [str(home / "webapps"), str(home / "lib" / "*")]
    return os.pathsep.join(parts)


def java_opts() -> list[str]:
    """Flags every JVM of the cluster (and the py4j gateway) needs on JDK 17."""
    return [*SMALL_JVM_FLAGS, *JDK17_FLAGS]


# ---------------------------------------------------------------------------------------------
# helpers


def site_xml(props: Mapping[str, Any]) -> str:
    rows = "".join(f"  <property><name>{escape(str(k))}</name><value>{escape(str(v))}</value></property>\n"
                   for k, v in props.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def get_jmx(url: str, bean: str, timeout_s: float = 2.0) -> dict[str, Any] | None:
    """One bean from an HBase /jmx endpoint, or None when the server or bean is not there yet.
    Python's json accepts the NaN / Infinity HBase writes."""
    import requests  # here, so `fetch` runs on a bare python3 (deploy/test-deps.d/hbase.sh)

    try:
        r = requests.get(f"{url}/jmx", params={"qry": bean}, timeout=timeout_s)
        r.raise_for_status()
        beans = r.json().get("beans", [])
    except (requests.RequestException, ValueError):
        return None
    return beans[0] if beans else None


# metctl places regions: HBase's balancer runs once an hour (its default is 5 minutes)
BALANCER_PERIOD_MS = 3_600_000


@dataclass
class Proc:
    name: str  # zk | master | rs1, rs2, …
    kind: str  # zk | master | rs
    conf_dir: str
    log: str
    port: int
    info_port: int
    pid: int | None = None

    @property
    def server_id(self) -> str:
        """The id the data store uses (host,port), as metctl's ServerInfo.id."""
        return f"{HOST},{self.port}"

    @property
    def info_url(self) -> str:
        return f"http://127.0.0.1:{self.info_port}"


# ---------------------------------------------------------------------------------------------
# the cluster


class LocalHBase(LocalCluster):
    """One local cluster living in `workdir` (state in workdir/cluster.json, processes under
    "procs")."""

    default_slices = DEFAULT_SLICES

    def __init__(self, workdir: str | Path, version: str = HBASE_VERSION, *,
                 rs_heap_mb: int = 384, master_heap_mb: int = 320, zk_heap_mb: int = 128,
                 session_timeout_ms: int = 10_000, metrics_period_s: int = 2,
                 base_port: int | None = None, extra_site: Mapping[str, Any] | None = None,
                 quota: bool | None = None, slices: Mapping[str, Slice] | None = None):
        super().__init__(workdir, version, quota=quota, slices=slices)
        self.rs_heap_mb = rs_heap_mb
        self.master_heap_mb = master_heap_mb
        self.zk_heap_mb = zk_heap_mb
        self.session_timeout_ms = session_timeout_ms
        self.metrics_period_s = metrics_period_s
        # fixed ports (a config file can name them): ZooKeeper base, master base+1 (info +2),
        # rsN base+10N (info +1); None = free ports picked at random
        self.base_port = base_port
        self.extra_site = dict(extra_site or {})

    # -- state --------------------------------------------------------------------------------

    def procs(self) -> dict[str, Proc]:
        return {n: Proc(**p) for n, p in self._read()["procs"].items()}

    def proc(self, name: str) -> Proc:
        procs = self.procs()
        if name not in procs:
            raise ClusterError(f"no process named {name!r} in {self.state_file}")
        return procs[name]

    def running(self, name: str) -> bool:
        p = self.procs().get(name)
        return bool(p and p.pid and pid_owned(p.pid, p.conf_dir))

    @property
    def zk_port(self) -> int:
        return self.proc("zk").port

    @property
    def master_url(self) -> str:
        return self.proc("master").info_url

    @property
    def balancer_period_ms(self) -> int:
        """HBase's balancer period this cluster's master runs with (an extra site setting wins)."""
        return int(self.extra_site.get("hbase.balancer.period", BALANCER_PERIOD_MS))

    def region_servers(self) -> list[Proc]:
        """Every RegionServer ever defined here (running or not), in name order."""
        rs = [p for p in self.procs().values() if p.kind == "rs"]
        # rs1, rs2, … first (numerically), then RegionServers named by a process driver
        return sorted(rs, key=lambda p: (0, int(p.name[2:]), "") if p.name[2:].isdigit() else (1, 0, p.name))

    def client_settings(self) -> dict[str, str]:
        """What an HBase client (the py4j gateway, YCSB) needs to reach this cluster."""
        return {"hbase.zookeeper.quorum": HOST,
                "hbase.zookeeper.property.clientPort": str(self.zk_port),
                "zookeeper.session.timeout": str(self.session_timeout_ms)}

    def client_conf_dir(self) -> Path:
        d = self.workdir / "conf" / "client"
        d.mkdir(parents=True, exist_ok=True)
        (d / "hbase-site.xml").write_text(site_xml(self.client_settings()))
        (d / "log4j.properties").write_text(LOG4J.replace("INFO,console", "WARN,console"))
        return d

    # -- configuration ------------------------------------------------------------------------

    def _site(self, p: Proc, zk_port: int, overrides: Mapping[str, Any] = ()) -> dict[str, Any]:
        tmp = self.workdir / "tmp" / p.name
        site: dict[str, Any] = {
            "hbase.rootdir": (self.workdir / "root").as_uri(),
            "hbase.cluster.distributed": "true",
            "hbase.unsafe.stream.capability.enforce": "false",
            "hbase.wal.provider": "filesystem",
            "hbase.tmp.dir": str(tmp),
            "hbase.zookeeper.quorum": HOST,
            "hbase.zookeeper.property.clientPort": zk_port,
            "hbase.zookeeper.property.dataDir": str(self.workdir / "zk-data"),
            "hbase.zookeeper.property.admin.enableServer": "false",
            "hbase.zookeeper.property.tickTime": 500,
            "hbase.zookeeper.property.maxSessionTimeout": 60_000,
            "zookeeper.session.timeout": self.session_timeout_ms,
            "hbase.master.hostname": HOST,
            "hbase.unsafe.regionserver.hostname": HOST,
            "hbase.master.ipc.address": "127.0.0.1",
            "hbase.regionserver.ipc.address": "127.0.0.1",
            "hbase.master.info.bindAddress": "127.0.0.1",
            "hbase.regionserver.info.bindAddress": "127.0.0.1",
            # metctl places regions: HBase's balancer must not undo it between decisions.
            "hbase.balancer.period": BALANCER_PERIOD_MS,
            "hbase.master.wait.on.regionservers.mintostart": 1,
            "hbase.regionserver.handler.count": 10,
        }
        if p.kind == "master":
            site["hbase.master.port"], site["hbase.master.info.port"] = p.port, p.info_port
        elif p.kind == "rs":
            site["hbase.regionserver.port"], site["hbase.regionserver.info.port"] = p.port, p.info_port
        site.update(self.extra_site)
        site.update(overrides)
        return site

    def write_conf(self, p: Proc, overrides: Mapping[str, Any] = ()) -> None:
        """(Re)write the process's conf dir; `overrides` are profile settings for a RegionServer."""
        conf = Path(p.conf_dir)
        conf.mkdir(parents=True, exist_ok=True)
        zk_port = p.port if p.kind == "zk" else self.zk_port
        (conf / "hbase-site.xml").write_text(site_xml(self._site(p, zk_port, overrides)))
        (conf / "log4j.properties").write_text(LOG4J)
        # Hadoop metrics2 refreshes what /jmx shows once per period (default 10 s): shorter, so
        # the monitor sees request counters move within a test's few seconds.
        (conf / "hadoop-metrics2-hbase.properties").write_text(f"*.period={self.metrics_period_s}\n")
        (conf / "overrides.json").write_text(json.dumps(dict(overrides), indent=2))

    def _fixed_ports(self, name: str, kind: str) -> tuple[int | None, int | None]:
        if self.base_port is None:
            return None, None
        b = self.base_port
        if kind == "zk":
            return b, None
        if kind == "master":
            return b + 1, b + 2
        if name[2:].isdigit():
            return b + 10 * int(name[2:]), b + 10 * int(name[2:]) + 1
        return None, None

    def _define(self, name: str, kind: str, port: int | None = None, info_port: int | None = None) -> Proc:
        if port is None:
            port, info_port = self._fixed_ports(name, kind)
        p = Proc(name=name, kind=kind, conf_dir=str(self.workdir / "conf" / name),
                 log=str(self.workdir / "logs" / f"{name}.log"), port=port or free_port(),
                 info_port=info_port or (free_port() if kind != "zk" else 0))
        self._record(name, p.__dict__)
        return p

    def with_free_ports(self, p: Proc) -> Proc:
        """A stopped process about to start on the ports recorded for it: ports picked at random
        that another cluster on the machine has taken since are picked again (they would fail
        its start with "Address already in use"); fixed ports (base_port) stay as configured."""
        if self.base_port is not None or all(port_free(x) for x in (p.port, p.info_port) if x):
            return p
        return self._define(p.name, p.kind)

    def command(self, p: Proc) -> list[str]:
        heap = {"zk": self.zk_heap_mb, "master": self.master_heap_mb, "rs": self.rs_heap_mb}[p.kind]
        home = home_for(self.version)
        cmd = ["java", f"-Xmx{heap}m", *java_opts(), f"-Dhbase.log.dir={Path(p.log).parent}",
               f"-Dmetctl.conf={p.conf_dir}", "-cp", classpath(home, Path(p.conf_dir)), MAINS[p.kind]]
        if p.kind != "zk":
            cmd.append("start")
        return cmd

    # -- processes --------------------------------------------------------------------------

    def _spawn(self, p: Proc) -> int:
        return self.spawn_process(p.name, self.command(p), p.conf_dir, p.log, kind=p.kind,
                                  profile=self._overrides(p).get(PROFILE_KEY) if p.kind == "rs" else None)

    def _signal_and_wait(self, p: Proc, timeout_s: float) -> None:
        """SIGTERM (HBase's graceful stop: a RegionServer closes its regions and the master
        reassigns them), then SIGKILL after `timeout_s`. Only our own, still-matching PID."""
        self.stop_process(p.name, p.pid, p.conf_dir, timeout_s)

    def _wait(self, what: str, check, timeout_s: float, procs: list[Proc] = ()) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for p in procs:
                # the recorded PID only (its cmdline names the conf dir only once java has exec'd)
                q = self.procs()[p.name]
                if not q.pid or not pid_alive(q.pid):
                    raise ClusterError(f"{p.name} died while waiting for {what}; see {p.log}:\n{tail(p.log)}")
            value = check()
            if value:
                return value
            time.sleep(0.5)
        raise ClusterError(f"timed out after {timeout_s:.0f} s waiting for {what}")

    def _zk_up(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.zk_port), timeout=1):
                return True
        except OSError:
            return False

    def master_status(self) -> dict[str, Any]:
        """numRegionServers, masterFinishedInitializationTime, live servers and ritCount."""
        server = get_jmx(self.master_url, MASTER_SERVER_BEAN) or {}
        am = get_jmx(self.master_url, MASTER_AM_BEAN) or {}
        live = [s for s in str(server.get("tag.liveRegionServers", "")).split(";") if s]
        return {"numRegionServers": server.get("numRegionServers", 0),
                "masterFinishedInitializationTime": server.get("masterFinishedInitializationTime", 0),
                "liveRegionServers": live, "ritCount": am.get("ritCount")}

    def live_server_ids(self) -> set[str]:
        """host,port of every RegionServer the master counts live."""
        return {",".join(s.split(",")[:2]) for s in self.master_status()["liveRegionServers"]}

    def ready(self, n_rs: int) -> bool:
        st = self.master_status()
        return (st["numRegionServers"] >= n_rs and (st["masterFinishedInitializationTime"] or 0) > 0
                and st["ritCount"] == 0)

    def start(self, rs: int = 2, timeout_s: float = 180) -> "LocalHBase":
        """Start ZK, the master and `rs` RegionServers (the ones not already running) and wait
        until the master reports them all live with nothing in transition. Each process runs
        in its control group (one line with the fix, before anything starts, when groups
        cannot be made: pass quota=False for none)."""
        self.prepare_groups()
        fetch(self.version)
        try:
            procs = self.procs()
            zk = procs.get("zk") or self._define("zk", "zk")
            if not self.running("zk"):
                zk = self.with_free_ports(zk)
                self.write_conf(zk)
                self._spawn(zk)
            self._wait("ZooKeeper", self._zk_up, 60, [zk])
            master = procs.get("master") or self._define("master", "master")
            if not self.running("master"):
                master = self.with_free_ports(master)
                self.write_conf(master)
                self._spawn(master)
            rss = self.region_servers()
            while len(rss) < rs:
                rss.append(self._define(f"rs{self._next_rs_index()}", "rs"))
            started = []
            for p in rss[:rs]:
                if not self.running(p.name):
                    p = self.with_free_ports(p)
                    self.write_conf(p, self._overrides(p))
                    self._spawn(p)
                started.append(p)
            self._wait(f"master ready with {rs} RegionServers", lambda: self.ready(rs), timeout_s,
                       [self.proc("zk"), self.proc("master"), *[self.proc(p.name) for p in started]])
        except BaseException:
            self.stop()
            raise
        return self

    def _overrides(self, p: Proc) -> dict[str, Any]:
        f = Path(p.conf_dir) / "overrides.json"
        return json.loads(f.read_text()) if f.exists() else {}

    def _next_rs_index(self) -> int:
        used = [int(p.name[2:]) for p in self.region_servers() if p.name[2:].isdigit()]
        return max(used, default=0) + 1

    def define_rs(self, overrides: Mapping[str, Any] = ()) -> Proc:
        """A new RegionServer's name, ports and conf dir (not started)."""
        p = self._define(f"rs{self._next_rs_index()}", "rs")
        self.write_conf(p, overrides)
        return p

    def wait_rs_live(self, name: str, timeout_s: float = 90) -> None:
        p = self.proc(name)
        self._wait(f"{name} live at the master", lambda: p.server_id in self.live_server_ids(),
                   timeout_s, [p])

    def add_rs(self, overrides: Mapping[str, Any] = (), timeout_s: float = 90) -> Proc:
        """Start one more RegionServer and wait until the master counts it live."""
        p = self.define_rs(overrides)
        self._spawn(p)
        self.wait_rs_live(p.name, timeout_s)
        return self.proc(p.name)

    def stop_rs(self, name: str, timeout_s: float = 60, wait_gone: bool = True) -> None:
        """Gracefully stop one RegionServer (SIGTERM: it closes its regions, the master
        reassigns them) and wait until the master no longer lists it."""
        p = self.proc(name)
        self._signal_and_wait(p, timeout_s)
        if wait_gone:
            self._wait(f"{name} gone from the master", lambda: p.server_id not in self.live_server_ids(),
                       timeout_s)

    def start_rs(self, name: str, overrides: Mapping[str, Any] | None = None,
                 timeout_s: float = 90) -> Proc:
        """(Re)start a defined RegionServer, with new profile settings when given."""
        p = self.proc(name)
        if not self.running(name):
            self.write_conf(p, self._overrides(p) if overrides is None else overrides)
            self._spawn(p)
        self.wait_rs_live(name, timeout_s)
        return self.proc(name)

    def restart_rs(self, name: str, overrides: Mapping[str, Any], timeout_s: float = 90) -> Proc:
        """Graceful stop, rewrite hbase-site.xml with `overrides`, start, wait until live.
        Block cache and global memstore sizes only change this way."""
        self.stop_rs(name, timeout_s)
        return self.start_rs(name, overrides, timeout_s)

    def rs_by_server_id(self, server_id: str) -> Proc:
        host_port = ",".join(server_id.split(",")[:2])
        for p in self.region_servers():
            if p.server_id == host_port:
                return p
        raise ClusterError(f"no local RegionServer has id {server_id!r}")

    def exec_rs(self, name: str, port: int | None = None, info_port: int | None = None,
                overrides: Mapping[str, Any] | None = None) -> None:
        """Become the RegionServer `name` (os.exec, so the caller's PID is the JVM's): for a
        process driver that launches nodes from a command template and tracks them by PID
        (actuator/local.py). Defined on first use with the given ports; the JVM logs to stdout."""
        procs = self.procs()
        p = procs[name] if name in procs else self._define(name, "rs", port, info_port)
        if self.running(p.name):
            raise ClusterError(f"{p.name} already runs as PID {p.pid}")
        self.write_conf(p, self._overrides(p) if overrides is None else overrides)
        self.place(p.name, "rs", os.getpid(), self._overrides(p).get(PROFILE_KEY))
        self._record_pid(p.name, os.getpid())
        os.chdir(self.workdir)
        cmd = self.command(p)
        os.execvp(cmd[0], cmd)

    def stop(self, timeout_s: float = 30) -> None:
        """Stop every recorded process: RegionServers and master together, then ZooKeeper."""
        procs = self.procs()
        first = [p for p in procs.values() if p.kind in ("rs", "master") and p.pid]
        for p in first:
            self.signal_process(p.pid, p.conf_dir)
        for p in first:
            self._signal_and_wait(p, timeout_s)
        if "zk" in procs:
            self._signal_and_wait(procs["zk"], timeout_s)
        self.release_all()

    def status(self) -> dict[str, Any]:
        procs = {n: {"pid": p.pid, "running": self.running(n), "port": p.port,
                     "info_port": p.info_port, "server_id": p.server_id if p.kind == "rs" else None}
                 for n, p in self.procs().items()}
        st: dict[str, Any] = {"workdir": str(self.workdir), "procs": procs}
        if self.running("master"):
            st["master"] = self.master_status()
        return st


if __name__ == "__main__":
    from deploy.local_hbase.cli import main  # the command line lives beside: this file is run by path
    sys.exit(main())
