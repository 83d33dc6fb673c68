"""`metctl snapshot` and `metctl run --once --observe` (the real CLI, a subprocess) on the
session's real local Cassandra cluster with `datastore.driver: cassandra`, while a QUORUM
read/write load runs: the snapshot lists both nodes with their Ganglia metrics and the test
table on each node with request rates from its system_views; one observed decision round sees
both nodes and changes nothing in the ring."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from actuator.cassandra import CassandraDriver
from tests.fixtures.cassandra import KEYSPACE, ROOT, metctl_config, quorum_load

pytestmark = pytest.mark.integration

TABLE = f"{KEYSPACE}.usertable"
# what each node's host reports to Ganglia: busy enough for MET to have an opinion
HOST_METRICS = dict(cpu_idle=30.0, cpu_wio=2.0, mem_total=16_000_000, mem_free=6_000_000,
                    mem_cached=3_000_000, mem_buffers=500_000)


def metctl(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


class HostReports:
    """Each Cassandra node's host reporting to a real gmond (spoofed by address, as a gmond on
    each node would) every second until stopped: Ganglia marks a host stale after a few
    silent seconds, and the CLI runs sample for longer than that."""

    def __init__(self, ganglia: Any, addresses: list[str]):
        self.ganglia, self.addresses = ganglia, addresses
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="ganglia-reports")

    def _loop(self) -> None:
        while not self._stop.is_set():
            for a in self.addresses:
                self.ganglia.inject(a, HOST_METRICS, cluster="beta", ip=a)
            self._stop.wait(1.0)

    def __enter__(self) -> "HostReports":
        for a in self.addresses:  # the first report before any sample
            self.ganglia.inject(a, HOST_METRICS, cluster="beta", ip=a)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def test_snapshot_and_an_observed_round_on_the_live_cluster(tmp_path: Path, cassandra_cluster: Any,
                                                            cassandra_session: Any,
                                                            cassandra_driver: CassandraDriver,
                                                            ganglia: Any) -> None:
    nodes = cassandra_cluster.contact_points()
    cfg = tmp_path / "metctl.yaml"
    # MET's marks: at 70 % CPU its nodes are over cpu_high, so the round decides to act (sized
    # from demand, the default, they are within their capacity and it holds)
    cfg.write_text(yaml.safe_dump(metctl_config(
        cassandra_cluster, tmp_path / "state",
        monitor={"ganglia_endpoints": [ganglia.gmonds["beta"].endpoint]},
        policy={"advanced": {"size_from_demand": False}})))
    load = quorum_load(cassandra_session, TABLE)
    load.start()
    try:
        with HostReports(ganglia, nodes):
            snap_run = metctl("snapshot", "--config", str(cfg), "--interval", "2")
            once = metctl("run", "--config", str(cfg), "--once", "--observe", "--api", "off")
    finally:
        load.stop()
    assert snap_run.returncode == 0, snap_run.stderr[-3000:]
    snap = json.loads(snap_run.stdout)
    assert {n["id"] for n in snap["nodes"]} == set(nodes), snap
    assert all(n["state"] == "active" and n["metrics"] and n["metrics"]["cpu"] == pytest.approx(0.70, abs=0.02)
               for n in snap["nodes"]), snap["nodes"]
    ours = {p["node"]: p for p in snap["partitions"] if p["table"] == TABLE}
    assert set(ours) == set(nodes), snap["partitions"]
    # QUORUM, RF 2: every node serves a share of the reads and every write lands on both
    assert all(p["id"] == f"{TABLE}@{p['node']}" and p["reads"] > 0 and p["writes"] > 0
               for p in ours.values()), ours
    assert not any(p["table"].startswith("system") for p in snap["partitions"])
    assert "complete enough to decide on" in snap_run.stderr, snap_run.stderr

    assert once.returncode == 0, once.stdout[-3000:] + once.stderr[-3000:]
    rounds = [ln for ln in once.stdout.splitlines() if ln.startswith(("decision:", "hold:"))]
    assert rounds and not any(ln.startswith("hold: error") for ln in rounds), once.stdout
    # observe mode: the round is decided (no metric missing) and explained, never carried out
    assert not any("stale_metrics" in ln for ln in rounds), rounds
    assert any(ln.startswith("decision:") for ln in rounds), rounds
    assert rounds[-1].startswith("hold: observe"), rounds
    record = json.loads((tmp_path / "state" / "last-decision.json").read_text())
    assert {v["node"] for v in record["verdicts"]} == set(nodes), record
    assert {s.id: s.state for s in cassandra_driver.servers()} == {a: "active" for a in nodes}
    assert load.availability >= 0.999, load.errors[:5]
    print(f"\nmetctl on Cassandra: {' / '.join(rounds)}; {load.ok_reads + load.ok_writes} QUORUM ops, "
          f"{load.failed} failed")
