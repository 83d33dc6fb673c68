"""Ganglia source: parsing real dumps, bad input, and (integration) real gmond/gmetad on loopback."""
import re
import time
from pathlib import Path

import pytest

from monitor.collector import Collector
from monitor.ganglia import GangliaError, GangliaSource, parse_dump, to_host_sample
from monitor.settings import HttpSettings, MonitorSettings

DATA = Path(__file__).parent / "data"
GMOND = (DATA / "gmond-dump.xml").read_bytes()
GMETAD = (DATA / "gmetad-dump.xml").read_bytes()


def fractions(idle, wio, total, free, cached, buffers):
    """The mapping the monitor promises (design page), as an oracle."""
    return 1 - idle / 100, wio / 100, (total - free - cached - buffers) / total


def raw(dump: bytes, host: str, metric: str) -> float:
    block = re.search(rb'<HOST NAME="' + re.escape(host.encode()) + rb'".*?</HOST>', dump, re.S).group(0)
    return float(re.search(rb'<METRIC NAME="' + metric.encode() + rb'" VAL="([^"]*)"', block).group(1))


def test_gmond_dump_hosts_and_fractions():
    hosts = {h.name: h for h in parse_dump(GMOND)}
    assert {"rs1.test", "rs3.test", "gmond-alpha.test"} <= set(hosts)
    s = to_host_sample(hosts["rs1.test"], 4.0)
    want = fractions(*(raw(GMOND, "rs1.test", m) for m in
                       ("cpu_idle", "cpu_wio", "mem_total", "mem_free", "mem_cached", "mem_buffers")))
    assert (s.cpu, s.io_wait, s.memory) == pytest.approx(want)
    assert not s.stale and s.reason == ""


def test_gmetad_dump_has_every_cluster_and_filters_by_name():
    hosts = parse_dump(GMETAD)
    assert {h.cluster for h in hosts} == {"alpha", "beta"}
    assert {h.name for h in parse_dump(GMETAD, clusters=["beta"])} == {"rs2.test", "gmond-beta.test"}


def test_missing_metric_is_none_with_reason():
    hosts = {h.name: h for h in parse_dump(GMOND)}
    s = to_host_sample(hosts["rs3.test"], 4.0)  # injected without cpu_wio
    assert s.io_wait is None and s.cpu is not None and "cpu_wio missing" in s.reason


def test_stale_host_by_tn_over_four_tmax():
    dump = re.sub(rb'(<HOST NAME="rs1.test"[^>]*?)TN="\d+"', rb'\1TN="95"', GMOND)
    hosts = {h.name: h for h in parse_dump(dump)}
    s = to_host_sample(hosts["rs1.test"], 4.0)
    assert s.stale and s.cpu is None and "TN 95" in s.reason
    assert not to_host_sample(hosts["rs1.test"], 100.0).stale


def test_stale_metric_and_garbage_value_are_missing():
    block = re.sub(rb'(<METRIC NAME="cpu_idle" VAL=")[^"]*"', rb'\1abc"', GMOND)
    block = re.sub(rb'(<METRIC NAME="mem_free" VAL="[^"]*" TYPE="[^"]*" UNITS="[^"]*" )TN="\d+"',
                   rb'\1TN="100000"', block)
    s = to_host_sample({h.name: h for h in parse_dump(block)}["rs1.test"], 4.0)
    assert s.cpu is None and "cpu_idle not a number" in s.reason
    assert s.memory is None and "mem_free stale" in s.reason
    assert s.io_wait is not None


BOMB = b"""<?xml version="1.0"?>
<!DOCTYPE GANGLIA_XML [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<GANGLIA_XML VERSION="3.7.2" SOURCE="gmond"><CLUSTER NAME="&lol3;"/></GANGLIA_XML>"""
EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE GANGLIA_XML [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<GANGLIA_XML><CLUSTER NAME="&x;"/></GANGLIA_XML>"""


@pytest.mark.parametrize("payload,words", [
    (BOMB, "unsafe XML"),
    (EXTERNAL, "unsafe XML"),
    (GMOND[: len(GMOND) // 2], "truncated"),
    (b"\x00\xffgarbage", "malformed"),
    (b"<html><body>hi</body></html>", "expected a GANGLIA_XML"),
])
def test_bad_xml_is_refused_with_a_clear_error(payload, words):
    with pytest.raises(GangliaError, match=words):
        parse_dump(payload)


def test_source_reports_bad_endpoints_and_fails_over(tcp_payload_server):
    truncated = tcp_payload_server(GMOND[:3000])
    bomb = tcp_payload_server(BOMB)
    good = tcp_payload_server(GMOND)
    src = GangliaSource(MonitorSettings(ganglia_endpoints=(truncated.endpoint, bomb.endpoint,
                                                           good.endpoint)))
    sample = src.sample()
    assert "rs1.test" in {h.host for h in sample.hosts}
    assert any(truncated.endpoint in e and "truncated" in e for e in sample.errors)
    assert any(bomb.endpoint in e and "unsafe" in e for e in sample.errors)


def test_only_bad_endpoints_give_no_hosts_and_say_why(tcp_payload_server):
    silent = tcp_payload_server(None)
    refused_port = tcp_payload_server(b"").port
    settings = MonitorSettings(ganglia_endpoints=(silent.endpoint, f"127.0.0.1:{refused_port}"),
                               http=HttpSettings(read_timeout_s=0.5))
    sample = GangliaSource(settings).sample()
    assert sample.hosts == ()
    assert any(silent.endpoint in e and "within 0.5 s" in e for e in sample.errors)
    assert any("without data" in e or "cannot connect" in e for e in sample.errors)
    c = Collector([GangliaSource(settings)], settings)
    c.poll(0.0)
    snap = c.snapshot(0.0)
    assert snap.nodes == () and snap.missing
    ok, why = c.complete_enough(snap)
    assert not ok and "no nodes" in why


def test_size_limit(tcp_payload_server):
    big = tcp_payload_server(GMOND * 200)
    sample = GangliaSource(MonitorSettings(ganglia_endpoints=(big.endpoint,),
                                           http=HttpSettings(max_mb=0.5))).sample()
    assert sample.hosts == () and "0.5 MiB limit" in sample.errors[0]


# ---------------------------------------------------------------- real gmond / gmetad
FULL = dict(cpu_idle=23.0, cpu_wio=31.0, mem_total=16_000_000, mem_free=2_000_000,
            mem_cached=3_000_000, mem_buffers=500_000)


def _wait_sample(src, predicate, timeout_s=30.0):
    deadline = time.monotonic() + timeout_s
    while True:
        sample = src.sample()
        if predicate(sample):
            return sample
        assert time.monotonic() < deadline, f"not seen within {timeout_s} s: {sample}"
        time.sleep(0.2)


@pytest.mark.integration
def test_real_gmond_injected_host(ganglia):
    ganglia.inject("int-a.test", FULL)
    src = GangliaSource(MonitorSettings(ganglia_endpoints=(ganglia.gmond_endpoint,)))
    sample = _wait_sample(src, lambda s: any(h.host == "int-a.test" for h in s.hosts))
    h = next(h for h in sample.hosts if h.host == "int-a.test")
    assert (h.cpu, h.io_wait, h.memory) == pytest.approx(fractions(
        FULL["cpu_idle"], FULL["cpu_wio"], FULL["mem_total"], FULL["mem_free"],
        FULL["mem_cached"], FULL["mem_buffers"]))
    own = next(h for h in sample.hosts if h.host == "gmond-alpha.test")  # gmond's real metrics
    assert 0 <= own.cpu <= 1 and 0 <= own.memory <= 1 and not own.stale
    assert sample.errors == ()


@pytest.mark.integration
def test_real_gmetad_two_clusters_and_failover(ganglia, tcp_payload_server):
    ganglia.inject("int-b1.test", FULL, cluster="alpha")
    ganglia.inject("int-b2.test", dict(FULL, cpu_idle=80.0), cluster="beta")
    silent = tcp_payload_server(None)
    settings = MonitorSettings(ganglia_endpoints=(silent.endpoint, ganglia.gmetad_endpoint),
                               http=HttpSettings(read_timeout_s=0.5))
    _wait_sample(GangliaSource(settings),
                 lambda s: {"int-b1.test", "int-b2.test"} <= {h.host for h in s.hosts})
    sample = GangliaSource(settings).sample()  # a new source tries the silent endpoint first
    assert {"int-b1.test", "int-b2.test"} <= {h.host for h in sample.hosts}
    assert any(silent.endpoint in e for e in sample.errors)
    b2 = next(h for h in sample.hosts if h.host == "int-b2.test")
    assert b2.cpu == pytest.approx(0.2)
    only_beta = GangliaSource(settings.model_copy(update={"ganglia_clusters": ("beta",)})).sample()
    assert "int-b1.test" not in {h.host for h in only_beta.hosts}


@pytest.mark.integration
def test_real_host_goes_stale_and_the_snapshot_says_so(ganglia):
    ganglia.inject("int-stale.test", FULL)
    settings = MonitorSettings(ganglia_endpoints=(ganglia.gmond_endpoint,))
    src = GangliaSource(settings)
    _wait_sample(src, lambda s: any(h.host == "int-stale.test" and h.cpu is not None for h in s.hosts))
    # Nobody reports for int-stale.test any more: after 4 x TMAX gmond's TN says it is down.
    sample = _wait_sample(src, lambda s: any(h.host == "int-stale.test" and h.stale for h in s.hosts),
                          timeout_s=4 * ganglia.host_tmax_s + 20)
    stale = next(h for h in sample.hosts if h.host == "int-stale.test")
    assert stale.cpu is None and "stale" in stale.reason
    # int-partial.test keeps reporting, but never mem_cached: fresh yet incomplete.
    ganglia.inject("int-partial.test", {k: v for k, v in FULL.items() if k != "mem_cached"})
    c = Collector([src], settings)
    c.poll(time.time())
    snap = c.snapshot(time.time())
    nodes = {n.id: n for n in snap.nodes}
    assert nodes["int-stale.test"].metrics is None
    assert nodes["int-partial.test"].metrics is None
    assert any(m.startswith("node int-stale.test") and "TN" in m for m in snap.missing)
    assert any(m.startswith("node int-partial.test") and "mem_cached missing" in m for m in snap.missing)
    assert not c.complete_enough(snap)[0]


@pytest.mark.integration
def test_real_gmetad_dead_data_source_goes_stale(ganglia):
    """gmetad keeps serving a dead gmond's hosts, with TN growing: the TN rule still catches it."""
    ganglia.inject("int-gamma.test", FULL, cluster="gamma")
    settings = MonitorSettings(ganglia_endpoints=(ganglia.gmetad_endpoint,), ganglia_clusters=("gamma",))
    src = GangliaSource(settings)
    _wait_sample(src, lambda s: any(h.host == "int-gamma.test" and h.cpu is not None for h in s.hosts))
    ganglia.stop_gmond("gamma")
    sample = _wait_sample(src, lambda s: any(h.host == "int-gamma.test" and h.stale for h in s.hosts),
                          timeout_s=4 * ganglia.host_tmax_s + 20)
    assert next(h for h in sample.hosts if h.host == "int-gamma.test").cpu is None


def test_failover_remembers_the_endpoint_that_answered(tcp_payload_server):
    silent = tcp_payload_server(None)
    good = tcp_payload_server(GMOND)
    src = GangliaSource(MonitorSettings(ganglia_endpoints=(silent.endpoint, good.endpoint),
                                        http=HttpSettings(read_timeout_s=0.3)))
    first = src.sample()
    assert first.hosts and any(silent.endpoint in e for e in first.errors)
    second = src.sample()  # the good endpoint first now: no timeout spent on the silent one
    assert second.hosts and second.errors == ()
