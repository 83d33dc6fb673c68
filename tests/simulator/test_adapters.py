"""The simulator behind the real interfaces: metrics source, infrastructure and data-store
drivers (non-blocking), and a clock whose sleep advances the simulation."""
from __future__ import annotations

import math

import numpy as np
import pytest

from actuator.drivers import DataStoreDriver, DriverError, InfrastructureDriver, NotOwnedError
from monitor.collector import Collector
from monitor.settings import MonitorSettings
from monitor.source import MetricsSource
from simulator.adapters import SimClock, SimDataStore, SimInfrastructure, SimMetricsSource

TAGS = {"metctl:managed": "true", "metctl:cluster": "demo", "metctl:profile": "read"}


@pytest.fixture
def sim(sim_cluster):
    cl = sim_cluster()
    cl.balancer_on = False
    return cl, SimClock(cl), SimMetricsSource(cl), SimInfrastructure(cl), SimDataStore(cl)


def test_they_implement_the_protocols(sim):
    _, _, source, infra, store = sim
    assert isinstance(source, MetricsSource)
    assert isinstance(infra, InfrastructureDriver)
    assert isinstance(store, DataStoreDriver)


def test_clock_sleep_advances_the_cluster(sim):
    cl, clock, *_ = sim
    clock.sleep(42)
    assert clock.now() == 42 and len(cl.rec_t) == 42


def test_counters_are_cumulative_and_restart_after_a_move(sim):
    cl, clock, source, _, store = sim
    clock.sleep(10)
    a = {p.id: p for p in source.sample().partitions}
    clock.sleep(10)
    b = {p.id: p for p in source.sample().partitions}
    assert all(b[i].reads >= a[i].reads and b[i].writes >= a[i].writes for i in a)
    assert any(b[i].reads > a[i].reads for i in a) and any(b[i].writes > a[i].writes for i in a)
    pid = next(iter(a))
    target = next(s.id for s in store.servers() if s.id != a[pid].server)
    store.move_partition(pid, target)
    assert pid not in {p.id for p in source.sample().partitions}  # in transition: no server reports it
    clock.sleep(5)
    c = {p.id: p for p in source.sample().partitions}
    assert c[pid].server == target and c[pid].reads < b[pid].reads


def test_host_names_are_server_ids_and_feed_the_collector(sim):
    cl, clock, source, _, store = sim
    clock.sleep(20)
    sample = source.sample()
    assert {h.host for h in sample.hosts} == {s.id for s in store.servers()}
    assert all(0 <= h.cpu <= 1 and 0 <= h.io_wait <= 1 and 0 < h.memory <= 1 for h in sample.hosts)
    col = Collector([source], MonitorSettings())
    for _ in range(3):
        col.poll(clock.now())
        clock.sleep(30)
    snap = col.snapshot(clock.now())
    ok, why = col.complete_enough(snap)
    assert ok, why
    assert len(snap.nodes) == 3 and len(snap.partitions) == len(cl.region_ids)
    assert all(n.metrics is not None for n in snap.nodes)


def test_launch_is_non_blocking_and_joins_later(sim):
    cl, clock, _, infra, store = sim
    iid = infra.launch("read", "#cloud-config", TAGS)
    node = next(n for n in infra.nodes() if n.instance_id == iid)
    assert node.state == "booting" and node.address
    assert node.address not in {s.host for s in store.servers()}
    clock.sleep(cl.settings.actions.vm_boot_s + cl.settings.actions.rs_join_s + 1)
    node = next(n for n in infra.nodes() if n.instance_id == iid)
    assert node.state == "running"
    server = next(s for s in store.servers() if s.host == node.address)
    assert server.profile == "read" and server.state == "active"


def test_terminate_refuses_what_metctl_did_not_launch(sim):
    cl, clock, _, infra, _ = sim
    cl.nodes[0].tags = {}  # as if an operator had started it by hand
    with pytest.raises(NotOwnedError):
        infra.terminate(cl.nodes[0].instance_id)
    with pytest.raises(NotOwnedError):
        infra.terminate("i-unknown")
    iid = infra.launch("default", "", TAGS)
    infra.terminate(iid)
    clock.sleep(cl.settings.actions.terminate_s + 1)
    assert iid not in {n.instance_id for n in infra.nodes()}


def test_store_operations_take_effect_later(sim):
    cl, clock, _, _, store = sim
    servers = store.servers()
    store.restart_server(servers[0].id, "scan")
    now = {s.id: s for s in store.servers()}
    assert now[servers[0].id].state == "stopped"
    clock.sleep(cl.settings.actions.restart_stop_s + cl.settings.actions.restart_start_s + 1)
    now = {s.id: s for s in store.servers()}
    assert now[servers[0].id].state == "active" and now[servers[0].id].profile == "scan"
    pid = store.partitions()[0].id
    store.compact(pid)
    assert store.compaction_running(pid)
    clock.sleep(600)
    assert not store.compaction_running(pid)


def test_store_errors(sim):
    _, _, _, _, store = sim
    with pytest.raises(DriverError) as err:
        store.move_partition("nope", store.servers()[0].id)
    assert not err.value.retryable
    with pytest.raises(DriverError):
        store.move_partition(store.partitions()[0].id, "nowhere,16020")
    with pytest.raises(DriverError) as err:
        store.restart_server(store.servers()[0].id, "turbo")
    assert not err.value.retryable


def test_decommission_moves_regions_away_then_stops(sim):
    cl, clock, _, _, store = sim
    sid = store.servers()[0].id
    store.decommission(sid)
    clock.sleep(10)
    assert sid not in {s.id for s in store.servers()}
    assert all(p.server != sid for p in store.partitions())
    assert all(p.server is not None for p in store.partitions())


def test_balancer_switch_reports_the_previous_state(sim):
    cl, *_, store = sim
    assert store.set_balancer(True) is False
    assert store.set_balancer(False) is True


def _table_parts(store, table):
    return {p.id: p for p in store.partitions() if p.table == table}


def test_a_split_shows_in_partitions_after_the_offline_time_and_throughput_recovers(sim):
    cl, clock, _, _, store = sim
    clock.sleep(60)
    before = float(np.array(cl.rec_ops)[30:60].sum(axis=1).mean())
    parent = next(p for p in store.partitions() if p.table == "usertable_c")
    old = _table_parts(store, parent.table)
    store.split_partition(parent.id)
    now = _table_parts(store, parent.table)
    assert set(now) == set(old) and now[parent.id].server is None  # offline while it splits
    clock.sleep(math.ceil(cl.settings.actions.split_offline_s) + 1)
    now = _table_parts(store, parent.table)
    daughters = set(now) - set(old)
    assert parent.id not in now and len(now) == len(old) + 1 and len(daughters) == 2
    assert all(now[d].server == parent.server for d in daughters)
    # the metrics source reports the daughters, their counters from 0
    sample = {p.id: p for p in SimMetricsSource(cl).sample().partitions}
    assert daughters <= set(sample) and parent.id not in sample
    # the daughters' compactions end in seconds; afterwards the cluster serves what it did
    clock.sleep(60)
    assert not cl.compactions
    after = float(np.array(cl.rec_ops)[-30:].sum(axis=1).mean())
    assert after > 0.99 * before, (before, after)


def test_split_partition_is_idempotent_and_refuses_what_it_cannot_split(sim):
    cl, clock, _, _, store = sim
    clock.sleep(10)
    pid = store.partitions()[0].id
    store.split_partition(pid)
    store.split_partition(pid)  # splitting already: nothing more
    assert [e.kind for e in cl.events].count("split") == 1
    clock.sleep(math.ceil(cl.settings.actions.split_offline_s) + 1)
    n = len(store.partitions())
    store.split_partition(pid)  # split already: not an error, nothing happens
    assert len(store.partitions()) == n and [e.kind for e in cl.events].count("split") == 1
    with pytest.raises(DriverError) as err:
        store.split_partition("no-such-region")
    assert not err.value.retryable
    # a daughter still reads through reference files to its parent: not splittable until its
    # compaction rewrote them
    daughter = cl.split_parents[pid][1]
    with pytest.raises(DriverError) as err:
        store.split_partition(daughter)
    assert err.value.retryable
    clock.sleep(60)
    store.split_partition(daughter)
    # a region in transition (moving) is refused for now
    moving = next(p for p in store.partitions() if p.server is not None and p.id not in cl.split_parents[pid])
    store.move_partition(moving.id, next(s.id for s in store.servers() if s.id != moving.server))
    with pytest.raises(DriverError) as err:
        store.split_partition(moving.id)
    assert err.value.retryable
