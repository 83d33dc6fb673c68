"""DataStoreSource: live snapshots carry the profile each server runs (from the data store's
server list), so a second decision does not re-plan restarts the first one already carried out."""
from __future__ import annotations

from tests.fakes.cluster import FakeCluster, FakeDelays
from decision.core import decide
from decision.model import DecisionMemory
from decision.policy import PolicyConfig
from monitor.collector import Collector
from monitor.datastore_source import DataStoreSource
from monitor.settings import MonitorSettings
from monitor.source import HostSample, PartitionSample, Sample
from tests.fixtures.snapshots import ycsb_mix_snapshot

INTERVAL_S = 10.0


class ReplaySource:
    """Host metrics and cumulative per-partition counters for the MET §3.1 mix at constant rates,
    each partition on the server the fake data store says serves it (so moves show)."""

    def __init__(self, world: FakeCluster, rates: dict[str, tuple[str, float, float, float]],
                 cpu: float):
        self.world, self.rates, self.cpu = world, rates, cpu

    def sample(self) -> Sample:
        now = self.world.clock()
        where = {p.id: p.server for p in self.world.datastore.partitions()}
        servers = [s.id for s in self.world.datastore.servers()]
        hosts = tuple(HostSample(host=s, cpu=self.cpu, io_wait=0.01, memory=0.5) for s in servers)
        parts = tuple(PartitionSample(id=pid, table=table, server=where[pid], reads=r * now,
                                      writes=w * now, scans=sc * now, size_mb=64.0, locality=1.0)
                      for pid, (table, r, w, sc) in self.rates.items() if where.get(pid))
        return Sample(taken_at=now, hosts=hosts, partitions=parts)


def world_and_replay(cpu: float = 0.1) -> tuple[FakeCluster, ReplaySource]:
    template = ycsb_mix_snapshot(cpu=cpu)
    world = FakeCluster(delays=FakeDelays(move_s=0.0, restart_s=1.0))
    by_node: dict[str, list[str]] = {}
    for p in template.partitions:
        by_node.setdefault(p.node, []).append(p.id)
    for n in template.nodes:
        world.add_server(n.id, partitions=tuple(by_node.get(n.id, ())))
    rates = {p.id: (p.table, p.reads, p.writes, p.scans) for p in template.partitions}
    return world, ReplaySource(world, rates, cpu)


def snapshot_after_polls(collector: Collector, world: FakeCluster, polls: int = 3):
    for _ in range(polls):
        world.advance(INTERVAL_S)
        collector.poll(world.clock())
    return collector.snapshot(world.clock())


def carry_out(world: FakeCluster, plan) -> None:
    # moves first (a restarting server takes no region), then the restarts
    for a in plan.actions:
        if a.op == "move":
            world.datastore.move_partition(a.partition, a.target)
    for a in plan.actions:
        if a.op == "reconfigure":
            world.datastore.restart_server(a.node, a.profile)
    world.advance(5.0)
    world.sync()


def two_decisions(with_store: bool):
    world, replay = world_and_replay()
    sources = [replay, DataStoreSource(world.datastore, clock=world.clock)] if with_store else [replay]
    collector = Collector(sources, MonitorSettings())
    policy = PolicyConfig(paper_faithful=True)  # MET reconfigures the default-profile mix
    first = decide(snapshot_after_polls(collector, world), policy, DecisionMemory())
    carry_out(world, first)
    collector.clear()
    second_snap = snapshot_after_polls(collector, world)
    second = decide(second_snap, policy, first.memory)
    return world, first, second_snap, second


def restarts(plan) -> set[tuple[str, str]]:
    return {(a.node, a.profile) for a in plan.actions if a.op == "reconfigure"}


def test_node_profiles_come_from_the_store_and_restarts_done_are_not_planned_again():
    world, first, snap, second = two_decisions(with_store=True)
    done = restarts(first)
    assert done, "the first decision on the underloaded default-profile mix reconfigures"
    store_profiles = {s.id: s.profile for s in world.datastore.servers()}
    assert {n.id: n.profile for n in snap.nodes} == store_profiles
    assert all(store_profiles[node] == profile for node, profile in done)
    assert not (restarts(second) & done), second.actions
    assert all(store_profiles[a.node] != a.profile for a in second.actions if a.op == "reconfigure")


def test_without_the_store_every_node_looks_default_and_restarts_are_planned_again():
    # The failure the source fixes: /jmx alone cannot see profiles.
    _, first, snap, second = two_decisions(with_store=False)
    assert {n.profile for n in snap.nodes} == {"default"}
    assert restarts(second) & restarts(first)


def test_source_reports_servers_and_profiles_only_and_store_failures_as_errors():
    world, _ = world_and_replay()
    world.datastore.restart_server("rs2", "write")
    sample = DataStoreSource(world.datastore, clock=world.clock).sample()
    assert sample.hosts == () and sample.partitions == ()
    assert sample.server_profiles == {s.id: s.profile for s in world.datastore.servers()}
    assert "rs2" not in sample.servers  # restarting: not up right now
    assert set(sample.servers) == {s.id for s in world.datastore.servers()} - {"rs2"}
    world.advance(FakeDelays().restart_s)
    back = DataStoreSource(world.datastore, clock=world.clock).sample()
    assert "rs2" in back.servers and back.server_profiles["rs2"] == "write"

    class Broken:
        def servers(self):
            raise ConnectionError("gateway gone")

    bad = DataStoreSource(Broken(), clock=lambda: 5.0).sample()
    assert bad.servers == () and bad.server_profiles == {} and "gateway gone" in bad.errors[0]
