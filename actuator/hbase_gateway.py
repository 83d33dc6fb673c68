"""A py4j gateway JVM holding one HBase client Connection and its Admin.

metctl reaches HBase's admin API (moves, compactions, the balancer switch, cluster metrics)
through HBase's own Java client: `py4j.java_gateway.launch_gateway` starts a JVM with the HBase
client jars on its classpath, no custom Java needed. The gateway listens on 127.0.0.1 only
(py4j's GatewayServer default address) on an ephemeral port and requires py4j's auth token, so
no other local user can drive the cluster through it. The JVM dies with this Python process
(`die_on_exit`) and is stopped by `close()`.
"""
from __future__ import annotations

import glob
import logging
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from actuator.drivers import DriverError

log = logging.getLogger(__name__)

# JDK 17: the HBase client's shaded netty and protobuf reach into these internals.
JDK17_FLAGS: tuple[str, ...] = (
    *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang", "java.lang.reflect", "java.nio", "sun.nio.ch", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "java.io",
        "java.net")),
    *(f"--add-exports=java.base/{p}=ALL-UNNAMED" for p in (
        "jdk.internal.misc", "sun.net.dns", "sun.net.util")),
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
)
DEFAULT_JAVA_OPTS: tuple[str, ...] = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                      "-Djava.net.preferIPv4Stack=true", *JDK17_FLAGS)


# What `metctl hbase-jars fetch` (and deploy/local_hbase/cluster.py fetch) fetch by default, and
# where: $METCTL_CACHE or ~/.cache/metctl, then hbase-<version>/lib.
from actuator.hbase_jars import HBASE_VERSION, default_client_jars_dir  # noqa: E402,F401


def py4j_jar() -> str:
    """The py4j jar shipped in the py4j wheel (share/py4j/py4j<version>.jar)."""
    import py4j

    candidates = [sys.prefix, os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.dirname(py4j.__file__)))))]
    for root in candidates:
        jars = sorted(glob.glob(os.path.join(root, "share", "py4j", "py4j*.jar")))
        if jars:
            return jars[-1]
    raise DriverError("py4j's jar (share/py4j/py4j*.jar) not found; reinstall py4j", retryable=False)


def stop_gateway_jvm(gateway: Any, proc: Any, log_file: Any) -> None:
    """Shut a launched py4j gateway down, wait for its JVM (our own child: killed if it
    lingers) and close the file its output went to; any of the three may be None."""
    if gateway is not None:
        try:
            gateway.shutdown()
        except Exception as e:  # noqa: BLE001 - the JVM may already be gone
            log.debug("gateway shutdown: %s", e)
    if proc is not None:
        try:
            proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - still alive: it is our own child, stop it
            proc.kill()
            proc.wait(timeout=10)
    if log_file is not None:
        log_file.close()


class HBaseGateway:
    """Start with `open()`, use `.jvm`, `.admin`, `.connection`; stop with `close()`."""

    def __init__(self, lib_dir: str | Path, client_settings: Mapping[str, str], *,
                 conf_dir: str | Path | None = None, java_opts: tuple[str, ...] = DEFAULT_JAVA_OPTS,
                 log_file: str | Path | None = None, rpc_timeout_ms: int = 30_000):
        self.lib_dir = Path(lib_dir)
        self.client_settings = dict(client_settings)
        self.conf_dir = Path(conf_dir) if conf_dir else None
        self.java_opts = tuple(java_opts)
        self.log_file = Path(log_file) if log_file else None
        self.rpc_timeout_ms = rpc_timeout_ms
        self.gateway: Any = None
        self.connection: Any = None
        self.admin: Any = None
        self._proc: Any = None
        self._log: Any = None

    @property
    def jvm(self) -> Any:
        if self.gateway is None:
            raise DriverError("the HBase gateway is not open")
        return self.gateway.jvm

    def open(self) -> "HBaseGateway":
        if self.gateway is not None:
            return self
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway

        if not any(self.lib_dir.glob("hbase-client-*.jar")):
            raise DriverError(f"no hbase-client jar in {self.lib_dir}; run metctl hbase-jars fetch",
                              retryable=False)
        cp = [str(self.lib_dir / "*")]
        if self.conf_dir:
            cp.insert(0, str(self.conf_dir))
        if self.log_file:
            self.log_file.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_file, "a")
        port, token, self._proc = launch_gateway(
            port=0, jarpath=py4j_jar(), classpath=os.pathsep.join(cp), javaopts=list(self.java_opts),
            die_on_exit=True, enable_auth=True, return_proc=True,
            redirect_stderr=self._log, redirect_stdout=self._log)
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(
            address="127.0.0.1", port=port, auth_token=token, auto_convert=True, auto_close=True))
        try:
            jvm = self.gateway.jvm
            conf = jvm.org.apache.hadoop.hbase.HBaseConfiguration.create()
            for k, v in {"hbase.rpc.timeout": str(self.rpc_timeout_ms),
                         "hbase.client.operation.timeout": str(4 * self.rpc_timeout_ms),
                         **self.client_settings}.items():
                conf.set(k, str(v))
            self.connection = jvm.org.apache.hadoop.hbase.client.ConnectionFactory.createConnection(conf)
            self.admin = self.connection.getAdmin()
        except Exception as e:
            self.close()
            raise DriverError(f"cannot connect to HBase ({self.client_settings}): {e}") from e
        log.info("HBase gateway up (127.0.0.1:%d, pid %d)", port, self._proc.pid)
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def close(self) -> None:
        """Close the admin and connection, shut the JVM down and wait for it (it is ours)."""
        for obj in (self.admin, self.connection):
            if obj is not None:
                try:
                    obj.close()
                except Exception as e:  # noqa: BLE001 - closing a half-dead connection
                    log.debug("closing HBase client object: %s", e)
        self.admin = self.connection = None
        stop_gateway_jvm(self.gateway, self._proc, self._log)
        self.gateway = self._proc = self._log = None

    def __enter__(self) -> "HBaseGateway":
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()
