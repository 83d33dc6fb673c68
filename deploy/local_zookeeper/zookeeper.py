#!/usr/bin/env python3
"""A real ZooKeeper (Debian's `zookeeper` package) on 127.0.0.1 for the HA tests, the failover
bench and by hand: one server in the foreground (`ZooKeeperServerMain`) with tickTime=500 so
sessions of 1–2 s are allowed, its admin server off, data in a work directory; stopped by its PID.
`stop()` / `start()` take it down and bring it back on the same port and data.

Used by tests/fixtures/zookeeper.py and bench/bench_failover.py and by hand:

    python deploy/local_zookeeper/zookeeper.py --workdir W [--port P]   # serves until Ctrl-C
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # its manifest lists its dependencies


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ZooKeeperServer:
    def __init__(self, workdir: Path, port: int):
        self.workdir = workdir
        self.port = port
        self.hosts = f"127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None
        (workdir / "data").mkdir(parents=True, exist_ok=True)
        (workdir / "zoo.cfg").write_text(
            "tickTime=500\n"
            "initLimit=10\nsyncLimit=5\n"
            f"dataDir={workdir / 'data'}\n"
            f"clientPort={port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "minSessionTimeout=1000\nmaxSessionTimeout=10000\n"
            "4lw.commands.whitelist=srvr\n"
        )

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc and self.proc.poll() is None else None

    def start(self, timeout_s: float = 30.0) -> None:
        if self.pid is not None:
            return
        log = open(self.workdir / "zookeeper.log", "ab")
        self.proc = subprocess.Popen(
            ["java", "-Xmx128m", "-cp", f"{self.workdir}:{ZOOKEEPER_JAR}",
             "org.apache.zookeeper.server.ZooKeeperServerMain", str(self.workdir / "zoo.cfg")],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.workdir,
        )
        log.close()
        deadline = time.monotonic() + timeout_s
        while not self.serving():
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited: see {self.workdir / 'zookeeper.log'}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"ZooKeeper not serving on {self.hosts} after {timeout_s} s")
            time.sleep(0.1)

    def serving(self) -> bool:
        """True when the server answers the `srvr` four-letter command."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                s.sendall(b"srvr")
                return b"Zookeeper version" in s.recv(4096)
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=15)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--port", type=int, default=0, help="client port (0: a free one)")
    args = ap.parse_args(argv)
    server = ZooKeeperServer(args.workdir, args.port or free_port())
    server.start()
    print(f"ZooKeeper serving on {server.hosts} (pid {server.pid}); Ctrl-C stops it", flush=True)
    try:
        server.proc.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
