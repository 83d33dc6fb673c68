"""metctl end to end on the real local cluster, with a YCSB tenant running throughout:

1. the monitor builds a snapshot from the live RegionServers (real per-region rates under the
   MET tenants' load); `metctl plan` on it gives the plan decide() gives;
2. the executor applies it through the local-process driver (a new RegionServer launched by
   metctl) and the HBase driver (restarts with profiles, moves); the controller is killed
   mid-plan and a new one resumes from the journal and finishes it; regions end where the plan
   put them;
3. scale-in: the RegionServer metctl launched is drained and stopped with no region offline;
4. the YCSB client's operations kept succeeding (MET/Parqua's availability figure).
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from actuator.drivers import TAG_MANAGED
from actuator.executor import Executor
from actuator.hbase import HBaseDriver
from actuator.journal import Journal
from actuator.local import LocalDriver
from actuator.settings import ExecutorSettings, LocalSettings
from controller.config import load_config
from controller.snapshot_io import read_snapshot, write_snapshot
from decision import decide
from decision.model import (
    Action, DecisionMemory, GroupPlan, Health, NodeMetrics, Plan, Sizing, Summary,
)
from monitor.collector import Collector
from monitor.hbase_jmx import HBaseJmxSource
from monitor.settings import MonitorSettings
from tests.fixtures.hbase import CLUSTER_PY, YCSB_RECORDS, local_restarter, spread_regions

pytestmark = pytest.mark.integration

CLUSTER = "hbtest"
# every RegionServer here shares one machine, so Ganglia could not tell their CPUs apart: the
# snapshot's node metrics say what a busy node would report (all overloaded -> scale out by one)
BUSY = NodeMetrics(cpu=0.75, io_wait=0.02, memory=0.5)


def free_base_port(stride: int = 10, slots: int = 4) -> int:
    for base in range(17000, 19900, stride * slots):
        ports = [base + k * stride + i for k in range(slots) for i in range(2)]
        try:
            for p in ports:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
        except OSError:
            continue
        return base
    raise RuntimeError("no free port block for local nodes")


@pytest.fixture
def local_nodes(hbase_cluster, tmp_path):
    """metctl's local-process driver launching RegionServers of the test cluster."""
    settings = LocalSettings(
        state_dir=str(tmp_path / "nodes"),
        command=(sys.executable, str(CLUSTER_PY), "--workdir", str(hbase_cluster.workdir), "exec-rs",
                 "{node}", "--port", "{port}", "--info-port", "{port1}", "--settings", "{settings_file}"),
        address_template="localhost:{port}", base_port=free_base_port(), port_stride=10, max_nodes=4,
        ready_port=True, stop_timeout_s=30)
    driver = LocalDriver(settings, CLUSTER)
    yield driver
    for node in driver.nodes():
        driver.terminate(node.instance_id)
        driver.wait_gone(node.instance_id, timeout_s=60)


TICK_S: list[float] = []  # every executor tick's duration (printed; speed targets live in bench/)


def run_executor(executor: Executor, timeout_s: float, stop_after_done: int | None = None):
    deadline = time.monotonic() + timeout_s
    status = executor.status()
    ticks = []
    while executor.busy and time.monotonic() < deadline:
        t = time.perf_counter()
        status = executor.tick()
        ticks.append(time.perf_counter() - t)
        TICK_S.append(ticks[-1])
        if stop_after_done is not None and status.actions_done >= stop_after_done:
            return status
        time.sleep(0.5)
    return status


def test_metctl_reshapes_the_live_cluster_while_ycsb_runs(
        hbase_cluster_restored, hbase_gateway, ycsb, local_nodes, tmp_path):
    cluster = hbase_cluster_restored
    driver = HBaseDriver(hbase_gateway, restarter=local_restarter(cluster), host_format="{host}:{port}")

    # earlier tests may have left one server empty (regions do not come back after a restart
    # while the balancer is off): start from regions spread round-robin
    spread_regions(driver)

    # -- 1. a live snapshot under the tenants' load, and `metctl plan` on it
    urls = tuple(p.info_url for p in cluster.region_servers() if cluster.running(p.name))
    mon = MonitorSettings(hbase_jmx_urls=urls, min_fresh_fraction=0.0)
    collector = Collector([HBaseJmxSource(mon, admin=driver)], mon)
    # the tenants run until stopped, watched from their first operations on (a client JVM can
    # take longer than a short fixed run to start on a busy machine)
    load = {w: ycsb.start(cluster, w, "run", records=YCSB_RECORDS, threads=1, seconds=600) for w in "ABCE"}
    try:
        ycsb.wait_for_operations({w: p for w, (p, _) in load.items()}, timeout_s=300)
        collector.poll(time.time())
        for _ in range(5):
            time.sleep(3)
            collector.poll(time.time())
    finally:
        for w, (p, t0) in load.items():
            ycsb.stop(p, t0, w, "run")
    snap = collector.snapshot(time.time())
    snap = replace(snap, nodes=tuple(replace(n, metrics=BUSY) for n in snap.nodes), missing=())
    tenants = [p for p in snap.partitions if p.table in {"ycsb_a", "ycsb_b", "ycsb_c", "ycsb_e"}]
    assert len(tenants) == 16 and all(p.requests > 0 for p in tenants)
    snap_file = tmp_path / "snapshot.json"
    write_snapshot(snap, snap_file)
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text(f"cluster: {CLUSTER}\ndatastore: {{driver: sim}}\npolicy:\n  max_nodes: 3\n  preset: met-paper\n")  # plan reads the policy: MET's restarts
    cli = subprocess.run([sys.executable, "-m", "controller.cli", "plan", "--snapshot", str(snap_file),
                          "--config", str(cfg), "--format", "json"], capture_output=True, text=True)
    if cli.returncode != 0:  # the console script, if `python -m controller.cli` is not runnable
        cli = subprocess.run([str(Path(sys.executable).parent / "metctl"), "plan", "--snapshot",
                              str(snap_file), "--config", str(cfg), "--format", "json"],
                             capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    printed = json.loads(cli.stdout)
    plan = decide(read_snapshot(snap_file), load_config(cfg).policy, DecisionMemory())
    assert printed["actions"] == [a.to_dict() for a in plan.actions]
    assert plan.sizing.target == 3 and any(a.op == "launch" for a in plan.actions)
    print(f"plan: {plan.summary}")

    # -- 2. apply it while tenant A keeps running; the controller dies mid-plan and resumes
    tenant, t_ycsb = ycsb.start(cluster, "A", "run", records=YCSB_RECORDS, threads=1, seconds=1200)
    ycsb.wait_for_operations({"A": tenant}, timeout_s=300)  # running before the first action
    settings = ExecutorSettings(journal_path=str(tmp_path / "journal.sqlite"), datastore_backoff_s=1.0,
                                launch_backoff_s=1.0, joining_timeout_s=120, restart_timeout_s=120)
    first = Executor(local_nodes, driver, settings, time.time, CLUSTER, Journal(settings.journal_path))
    t0 = time.monotonic()
    driver.set_balancer(False)
    first.submit(plan, "live-1")
    status = run_executor(first, 300, stop_after_done=max(2, len(plan.actions) // 3))
    assert status.state == "running", status
    del first  # killed: no clean-up runs, only the journal survives
    second = Executor(local_nodes, driver, settings, time.time, CLUSTER, Journal(settings.journal_path))
    assert second.resume().plan_id == "live-1"
    status = run_executor(second, 400)
    applied_s = time.monotonic() - t0
    assert status.state == "done", status

    where = {p.id: p.server for p in driver.partitions()}
    for a in plan.assignment:
        server = second.resolve(a.node)
        assert server is not None, a.node
        assert {pid: where[pid] for pid in a.partitions} == {pid: server for pid in a.partitions}
    new_nodes = [n for n in local_nodes.nodes() if n.tags.get(TAG_MANAGED) == "true" and n.state == "running"]
    assert len(new_nodes) == 1
    new_server = next(s for s in driver.servers() if s.host == new_nodes[0].address)
    assert [p for p in driver.partitions() if p.server == new_server.id], "the new server serves nothing"

    # -- 3. scale in: drain the server metctl launched and terminate it
    t1 = time.monotonic()
    scale_in = Plan(policy="met", health=Health(nodes=(), suboptimal=0.0, remove=True, healthy=False),
                    sizing=Sizing(current=3, target=2, delta=-1, step=1), groups=(GroupPlan("read_write", 0, 0),),
                    assignment=(), summary=Summary(0, 0, 0, 1, 1.0), memory=DecisionMemory(),
                    actions=(Action(op="drain", node=new_server.id, reason="scale in", cause="scale_in"),
                             Action(op="terminate", node=new_server.id, reason="scale in", cause="scale_in")))
    second.submit(scale_in, "live-2")
    status = run_executor(second, 300)
    drained_s = time.monotonic() - t1
    assert status.state == "done", status
    assert new_server.id not in {s.id for s in driver.servers()}
    assert local_nodes.wait_gone(new_nodes[0].instance_id, timeout_s=60)
    assert all(p.server is not None for p in driver.partitions()), "a region was left offline"

    # -- 4. the tenant's operations during all of it
    result = ycsb.stop(tenant, t_ycsb, "A")  # ended here: its status lines count ops and failures
    print(f"plan applied in {applied_s:.1f} s (controller killed and resumed), scale-in {drained_s:.1f} s; "
          f"YCSB A during actions: {result.ops} ops, {100 * result.success_fraction:.3f} % ok, "
          f"{result.throughput:.0f} ops/s")
    ms = sorted(1000 * t for t in TICK_S)
    print(f"executor tick on the real cluster: {len(ms)} ticks, median {ms[len(ms) // 2]:.0f} ms, "
          f"p95 {ms[int(len(ms) * 0.95)]:.0f} ms, max {ms[-1]:.0f} ms")
    assert result.ops > 0
    assert result.success_fraction >= 0.995
