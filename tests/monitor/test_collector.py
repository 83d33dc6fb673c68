"""The collector on synthetic Samples: counters -> rates, resets, splits, staleness, clearing.

The sources here are scripted MetricsSource implementations (metctl's own boundary); time is
passed in, never slept.
"""
import math

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from monitor.collector import Collector, host_name_for
from monitor.settings import MonitorSettings
from monitor.smoothing import BrownSmoother
from monitor.source import HostSample, MetricsSource, PartitionSample, Sample


class Scripted:
    """A MetricsSource that returns the next queued Sample (or raises a queued exception)."""

    def __init__(self, *samples):
        self.queue = list(samples)

    def push(self, item):
        self.queue.append(item)

    def sample(self) -> Sample:
        item = self.queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def host(name, cpu=0.5, io=0.1, mem=0.4, **kw):
    return HostSample(host=name, cpu=cpu, io_wait=io, memory=mem, **kw)


def part(pid, server, reads=0.0, writes=0.0, scans=0.0, table="usertable", **kw):
    return PartitionSample(id=pid, table=table, server=server, reads=reads, writes=writes,
                           scans=scans, **kw)


S = MonitorSettings(smoothing_alpha=0.5)


def test_scripted_source_satisfies_the_protocol():
    assert isinstance(Scripted(), MetricsSource)


def test_counters_become_per_second_rates():
    src = Scripted(
        Sample(taken_at=100.0, hosts=(host("rs1"),), partitions=(part("a", "rs1,16020", 1000, 50, 7),)),
        Sample(taken_at=130.0, hosts=(host("rs1"),), partitions=(part("a", "rs1,16020", 4000, 140, 7),)),
    )
    c = Collector([src], S)
    c.poll(100.0)
    first = c.snapshot(100.0)
    assert first.partitions == ()
    assert any("partition a" in m and "two" in m for m in first.missing)
    c.poll(130.0)
    snap = c.snapshot(130.0)
    (p,) = snap.partitions
    assert (p.reads, p.writes, p.scans) == pytest.approx(((4000 - 1000) / 30, (140 - 50) / 30, 0.0))
    assert p.node == "rs1,16020" and p.table == "usertable"
    assert [n.id for n in snap.nodes] == ["rs1,16020"]
    assert c.samples_since_clear == 2
    assert c.complete_enough(snap)[0]


def test_rates_use_the_sources_clock_and_are_smoothed_per_partition():
    rates = [10.0, 30.0, 5.0, 50.0]
    counter, t = 0.0, 0.0
    src = Scripted(Sample(taken_at=t, partitions=(part("a", "rs1,1", counter),)))
    for r in rates:
        t += 20.0
        counter += r * 20.0
        src.push(Sample(taken_at=t, partitions=(part("a", "rs1,1", counter),)))
    c = Collector([src], S)
    oracle = BrownSmoother(S.smoothing_alpha)
    for i in range(len(rates) + 1):
        c.poll(float(i))
    for r in rates:
        oracle.update(r)
    (p,) = c.snapshot(float(len(rates))).partitions
    assert p.reads == pytest.approx(max(0.0, oracle.level))


def test_counter_going_backwards_is_a_reset_not_a_negative_rate(caplog):
    src = Scripted(
        Sample(taken_at=0, partitions=(part("a", "rs1,1", 100),)),
        Sample(taken_at=10, partitions=(part("a", "rs1,1", 300),)),   # 20/s
        Sample(taken_at=20, partitions=(part("a", "rs1,1", 50),)),    # restarted: no rate
        Sample(taken_at=30, partitions=(part("a", "rs1,1", 250),)),   # 20/s again from 50
    )
    c = Collector([src], S)
    c.poll(0), c.poll(10), c.poll(20)
    assert "backwards" in caplog.text
    (p,) = c.snapshot(20).partitions
    assert p.reads == pytest.approx(20.0)  # the smoothed history is kept, nothing invented
    c.poll(30)
    (p,) = c.snapshot(30).partitions
    assert p.reads == pytest.approx(20.0)


def test_partition_moved_to_another_server_rebaselines():
    src = Scripted(
        Sample(taken_at=0, partitions=(part("a", "rs1,1", 100),)),
        Sample(taken_at=10, partitions=(part("a", "rs1,1", 200),)),   # 10/s
        Sample(taken_at=20, partitions=(part("a", "rs2,1", 900),)),   # new server: not 70/s
        Sample(taken_at=30, partitions=(part("a", "rs2,1", 1000),)),  # 10/s
    )
    c = Collector([src], S)
    for t in (0, 10, 20):
        c.poll(t)
    (p,) = c.snapshot(20).partitions
    assert p.node == "rs2,1" and p.reads == pytest.approx(10.0)
    c.poll(30)
    assert c.snapshot(30).partitions[0].reads == pytest.approx(10.0)


def test_nan_counter_is_missing_not_a_number():
    src = Scripted(
        Sample(taken_at=0, partitions=(part("a", "rs1,1", 0, math.nan),)),
        Sample(taken_at=10, partitions=(part("a", "rs1,1", 100, math.nan),)),
        Sample(taken_at=20, partitions=(part("a", "rs1,1", 200, 30),)),
        Sample(taken_at=30, partitions=(part("a", "rs1,1", 300, 60),)),
    )
    c = Collector([src], S)
    c.poll(0), c.poll(10)
    snap = c.snapshot(10)
    assert snap.partitions == ()
    assert any("partition a" in m and "not a number" in m for m in snap.missing)
    assert not c.complete_enough(snap)[0]
    c.poll(20), c.poll(30)
    (p,) = c.snapshot(30).partitions
    assert p.reads == pytest.approx(10.0) and p.writes == pytest.approx(3.0)


def test_split_and_merge_do_not_crash_and_new_daughters_wait_for_a_rate():
    src = Scripted(
        Sample(hosts=(host("rs1"),), taken_at=0, partitions=(part("a", "rs1,1", 0), part("b", "rs1,1", 0))),
        Sample(hosts=(host("rs1"),), taken_at=10, partitions=(part("a", "rs1,1", 100), part("b", "rs1,1", 100))),
        # a split into a1, a2; b unchanged
        Sample(hosts=(host("rs1"),), taken_at=20, partitions=(part("a1", "rs1,1", 5), part("a2", "rs1,1", 7),
                                        part("b", "rs1,1", 200))),
        Sample(hosts=(host("rs1"),), taken_at=30, partitions=(part("a1", "rs1,1", 55), part("a2", "rs1,1", 57),
                                        part("b", "rs1,1", 300))),
        # a1 and a2 merge into m
        Sample(hosts=(host("rs1"),), taken_at=40, partitions=(part("m", "rs1,1", 0), part("b", "rs1,1", 400))),
    )
    c = Collector([src], S)
    c.poll(0), c.poll(10), c.poll(20)
    snap = c.snapshot(20)
    assert [p.id for p in snap.partitions] == ["b"]
    assert {m.split()[1] for m in snap.missing if m.startswith("partition")} == {"a1", "a2"}
    ok, why = c.complete_enough(snap)
    assert not ok and "1 of 3 partitions" in why
    c.poll(30)
    assert [p.id for p in c.snapshot(30).partitions] == ["a1", "a2", "b"]
    c.poll(40)
    snap = c.snapshot(40)
    assert [p.id for p in snap.partitions] == ["b"]
    assert any(m.startswith("partition m") for m in snap.missing)


def test_stale_or_incomplete_host_gives_no_metrics_and_holds():
    src = Scripted(Sample(taken_at=0, hosts=(
        host("rs1"),
        host("rs2", stale=True, reason="ganglia host stale (TN 95 s > 80 s)"),
        host("rs3", mem=None),
    )))
    c = Collector([src], S)
    c.poll(0)
    snap = c.snapshot(0)
    by_id = {n.id: n for n in snap.nodes}
    assert by_id["rs1"].metrics is not None
    assert by_id["rs2"].metrics is None and by_id["rs3"].metrics is None
    assert any("rs2" in m and "TN 95" in m for m in snap.missing)
    assert any("rs3" in m and "memory" in m for m in snap.missing)
    ok, why = c.complete_enough(snap)
    assert not ok and "1 of 3 nodes" in why and "rs2" in why
    lenient = Collector([Scripted(src_sample := Sample(taken_at=0, hosts=(host("a"), host("b", cpu=None))))],
                        MonitorSettings(min_fresh_fraction=0.5))
    lenient.poll(0)
    assert lenient.complete_enough(lenient.snapshot(0))[0]
    assert src_sample.hosts[1].cpu is None


def test_node_that_was_fresh_then_stale_does_not_keep_its_old_metrics():
    src = Scripted(Sample(taken_at=0, hosts=(host("rs1", cpu=0.9),)),
                   Sample(taken_at=10, hosts=(host("rs1", stale=True, reason="stale"),)),
                   Sample(taken_at=20, hosts=()))
    c = Collector([src], S)
    c.poll(0)
    assert c.snapshot(0).nodes[0].metrics.cpu == pytest.approx(0.9)
    c.poll(10)
    assert c.snapshot(10).nodes[0].metrics is None
    c.poll(20)
    snap = c.snapshot(20)
    assert snap.nodes[0].metrics is None
    assert any("not reported in the latest sample" in m for m in snap.missing)


def test_old_sample_is_not_fresh():
    c = Collector([Scripted(Sample(taken_at=0, hosts=(host("rs1"),)))],
                  MonitorSettings(max_sample_age_s=60))
    c.poll(0)
    assert c.snapshot(59).nodes[0].metrics is not None
    snap = c.snapshot(61)
    assert snap.nodes[0].metrics is None
    assert any("old" in m for m in snap.missing)


def test_failing_source_is_reported_and_other_sources_still_count():
    class Broken:
        def sample(self):
            raise ConnectionError("boom")

    errs = Scripted(Sample(taken_at=0, hosts=(host("rs1"),), errors=("ganglia 127.0.0.1:1: refused",)))
    c = Collector([Broken(), errs], S)
    c.poll(0)
    snap = c.snapshot(0)
    assert snap.nodes[0].metrics is not None
    assert any("Broken failed" in m and "boom" in m for m in snap.missing)
    assert "ganglia 127.0.0.1:1: refused" in snap.missing


def test_servers_name_the_nodes_and_ganglia_hosts_match_by_rule():
    ganglia = Scripted(Sample(taken_at=0, hosts=(host("RS1.example.org", cpu=0.7), host("master.example.org"),
                                                 host("rs2", cpu=0.2))))
    hbase = Scripted(Sample(taken_at=0, partitions=(part("a", "rs1.example.org,16020"),),
                            servers=("rs1.example.org,16020", "rs2.example.org,16020", "rs3,16020"),
                            server_profiles={"rs1.example.org,16020": "read", "rs3,16020": "bogus"}))
    c = Collector([ganglia, hbase], MonitorSettings(host_name_map={"rs2.example.org,16020": "rs2"}))
    c.poll(0)
    snap = c.snapshot(0)
    by_id = {n.id: n for n in snap.nodes}
    assert set(by_id) == {"rs1.example.org,16020", "rs2.example.org,16020", "rs3,16020"}
    assert by_id["rs1.example.org,16020"].metrics.cpu == pytest.approx(0.7)
    assert by_id["rs1.example.org,16020"].profile == "read"
    assert by_id["rs2.example.org,16020"].metrics.cpu == pytest.approx(0.2)
    assert by_id["rs3,16020"].metrics is None and by_id["rs3,16020"].profile == "default"
    assert any("'rs3'" in m for m in snap.missing)


def test_short_name_rule_and_host_name_for():
    s = MonitorSettings(host_name_rule="short_name")
    ganglia = Scripted(Sample(taken_at=0, hosts=(host("rs1"),)))
    hbase = Scripted(Sample(taken_at=0, servers=("rs1.dc1.example.org,16020",)))
    c = Collector([ganglia, hbase], s)
    c.poll(0)
    assert c.snapshot(0).nodes[0].metrics is not None
    assert host_name_for("h.x,16020,1700000000", MonitorSettings()) == "h.x"
    assert host_name_for("h.x,16020", MonitorSettings(host_name_rule="identity")) == "h.x,16020"


def test_ganglia_only_nodes_are_the_hosts():
    c = Collector([Scripted(Sample(taken_at=0, hosts=(host("a"), host("b"))))], S)
    c.poll(0)
    snap = c.snapshot(0)
    assert [n.id for n in snap.nodes] == ["a", "b"] and snap.partitions == ()
    assert c.complete_enough(snap)[0]


def test_clear_forgets_history():
    src = Scripted(*[Sample(taken_at=t, hosts=(host("rs1,1"),), partitions=(part("a", "rs1,1", t * 10),))
                     for t in (0, 10, 20, 30)])
    c = Collector([src], S)
    c.poll(0), c.poll(10)
    assert c.snapshot(10).partitions
    c.clear()
    assert c.samples_since_clear == 0
    snap = c.snapshot(10)
    assert snap.nodes == () and snap.partitions == ()
    assert not c.complete_enough(snap)[0]
    c.poll(20)
    assert c.snapshot(20).partitions == ()  # a rate needs two samples after the clear
    c.poll(30)
    assert c.snapshot(30).partitions[0].reads == pytest.approx((30 * 10 - 20 * 10) / 10)
    assert c.samples_since_clear == 2


def test_vanished_server_is_reported_then_forgotten():
    samples = [Sample(taken_at=0, servers=("rs1,1", "rs2,1")),
               Sample(taken_at=100, servers=("rs1,1",)),
               Sample(taken_at=400, servers=("rs1,1",))]
    c = Collector([Scripted(*samples)], MonitorSettings(forget_server_after_s=300))
    c.poll(0), c.poll(100)
    snap = c.snapshot(100)
    assert [n.id for n in snap.nodes] == ["rs1,1", "rs2,1"]
    assert any("rs2,1" in m and "not reported" in m for m in snap.missing)
    c.poll(400)
    assert [n.id for n in c.snapshot(400).nodes] == ["rs1,1"]


def test_size_locality_and_unknowns_are_flagged():
    src = Scripted(
        Sample(taken_at=0, partitions=(part("a", "r,1", 0, size_mb=12.5, locality=0.8), part("b", "r,1", 0))),
        Sample(taken_at=1, partitions=(part("a", "r,1", 1, size_mb=13.0, locality=1.2), part("b", "r,1", 1))),
    )
    c = Collector([src], S)
    c.poll(0), c.poll(1)
    snap = c.snapshot(1)
    a, b = snap.partitions
    assert a.size_mb == 13.0 and a.locality == 1.0
    assert any("size unknown for 1" in m for m in snap.missing)
    assert any("locality unknown for 1" in m for m in snap.missing)


counter_steps = st.one_of(st.floats(-1e6, 1e6), st.just(math.nan), st.just(math.inf))


@hsettings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(counter_steps, st.sampled_from(["rs1,1", "rs2,1"]),
                          st.floats(0, 100)), min_size=1, max_size=25),
       st.floats(0.05, 0.95))
def test_rates_are_never_negative_nor_made_up(steps, alpha):
    """Any counter history (drops, NaN, moves, zero intervals): every rate is finite and >= 0."""
    src = Scripted()
    t, value = 0.0, 0.0
    for delta, server, dt in steps:
        t += dt
        value = delta if not math.isfinite(delta) else value + delta
        src.push(Sample(taken_at=t, partitions=(part("a", server, value, value, value),)))
    c = Collector([src], MonitorSettings(smoothing_alpha=alpha))
    for i in range(len(steps)):
        c.poll(float(i))
        for p in c.snapshot(float(i)).partitions:
            for r in (p.reads, p.writes, p.scans):
                assert math.isfinite(r) and r >= 0


@hsettings(max_examples=100, deadline=None)
@given(st.floats(0, 1e4), st.integers(2, 12), st.floats(1, 60))
def test_constant_rate_is_reported_exactly(rate, n, dt):
    src = Scripted(*[Sample(taken_at=i * dt, partitions=(part("a", "r,1", 7 + rate * i * dt),))
                     for i in range(n)])
    c = Collector([src], S)
    for i in range(n):
        c.poll(float(i))
    (p,) = c.snapshot(float(n - 1)).partitions
    assert p.reads == pytest.approx(rate, rel=1e-6, abs=1e-6)


def test_implausible_rate_is_not_used(caplog):
    src = Scripted(Sample(taken_at=0.0, partitions=(part("a", "r,1", 0),)),
                   Sample(taken_at=1e-9, partitions=(part("a", "r,1", 5),)),
                   Sample(taken_at=10.0, partitions=(part("a", "r,1", 105),)))
    c = Collector([src], S)
    c.poll(0), c.poll(1)
    snap = c.snapshot(1)
    assert snap.partitions == () and any("implausible" in m for m in snap.missing)
    c.poll(2)
    assert c.snapshot(2).partitions[0].reads == pytest.approx(100 / (10.0 - 1e-9))



def test_server_latency_is_smoothed_onto_the_node_and_optional():
    """A data-store server's call time becomes its node's rpc_latency_ms (smoothed like CPU);
    a server with none, or with a non-finite or negative figure, has None, never a guess."""
    lat = {"rs1,16020": 10.0, "rs2,16020": math.nan}
    src = Scripted(
        Sample(taken_at=0.0, hosts=(host("rs1"), host("rs2"), host("rs3")),
               servers=("rs1,16020", "rs2,16020", "rs3,16020"), server_latency_ms=lat),
        Sample(taken_at=30.0, hosts=(host("rs1"), host("rs2"), host("rs3")),
               servers=("rs1,16020", "rs2,16020", "rs3,16020"),
               server_latency_ms={"rs1,16020": 30.0, "rs2,16020": -1.0}),
        Sample(taken_at=60.0, hosts=(host("rs1"), host("rs2"), host("rs3")),
               servers=("rs1,16020", "rs2,16020", "rs3,16020")),
    )
    c = Collector([src], S)
    c.poll(0.0)
    c.poll(30.0)
    by_id = {n.id: n.metrics for n in c.snapshot(30.0).nodes}
    assert 10.0 < by_id["rs1,16020"].rpc_latency_ms <= 30.0
    assert by_id["rs2,16020"].rpc_latency_ms is None and by_id["rs2,16020"].cpu == 0.5
    assert by_id["rs3,16020"].rpc_latency_ms is None
    c.poll(60.0)  # the source stopped reporting it: not carried over from an older poll
    assert {n.id: n.metrics.rpc_latency_ms for n in c.snapshot(60.0).nodes}["rs1,16020"] is None


def test_server_queue_length_is_smoothed_onto_the_node_and_optional():
    """A server's calls waiting become its node's rpc_queue_length (smoothed); none, or a
    non-finite or negative figure, is None; a figure not in the latest poll is not carried."""
    servers = ("rs1,16020", "rs2,16020")
    src = Scripted(
        Sample(taken_at=0.0, hosts=(host("rs1"), host("rs2")), servers=servers,
               server_queue_length={"rs1,16020": 100.0, "rs2,16020": math.inf}),
        Sample(taken_at=30.0, hosts=(host("rs1"), host("rs2")), servers=servers,
               server_queue_length={"rs1,16020": 300.0}),
        Sample(taken_at=60.0, hosts=(host("rs1"), host("rs2")), servers=servers),
    )
    c = Collector([src], S)
    c.poll(0.0)
    c.poll(30.0)
    by_id = {n.id: n.metrics for n in c.snapshot(30.0).nodes}
    assert 100.0 < by_id["rs1,16020"].rpc_queue_length <= 300.0
    assert by_id["rs2,16020"].rpc_queue_length is None
    c.poll(60.0)
    assert {n.id: n.metrics.rpc_queue_length for n in c.snapshot(60.0).nodes}["rs1,16020"] is None


def test_dropped_calls_become_a_rate_and_a_restart_is_a_new_baseline():
    """The cumulative count of calls a server refused or dropped is a per-second rate from the
    second reading on; a count that goes back (the server restarted) gives no rate that poll."""
    servers = ("rs1,16020",)

    def at(t, total):
        return Sample(taken_at=t, hosts=(host("rs1"),), servers=servers,
                      server_dropped_calls={} if total is None else {"rs1,16020": total})
    src = Scripted(at(0.0, 1000.0), at(30.0, 4000.0), at(60.0, 10.0), at(90.0, None))
    c = Collector([src], S)
    c.poll(0.0)
    assert c.snapshot(0.0).nodes[0].metrics.rpc_dropped_per_s is None  # one reading: no rate
    c.poll(30.0)
    assert c.snapshot(30.0).nodes[0].metrics.rpc_dropped_per_s == pytest.approx(100.0)
    c.poll(60.0)
    assert c.snapshot(60.0).nodes[0].metrics.rpc_dropped_per_s is None  # restarted
    c.poll(90.0)
    assert c.snapshot(90.0).nodes[0].metrics.rpc_dropped_per_s is None  # not reported
