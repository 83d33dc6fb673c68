"""HBase /jmx source on answers recorded from a real HBase 2.6.4 RegionServer (see data/README.md),
served by a loopback HTTP server speaking the /jmx API, plus every bad answer we must survive."""
import copy
import json
import logging
import math
import os
import time
from pathlib import Path

import pytest

from monitor.collector import Collector
from monitor.hbase_jmx import (IPC_BEAN, OS_BEAN, REGIONS_BEAN, SERVER_BEAN, HBaseJmxSource, RegionAdminMetrics,
                               RegionMetricsProvider, parse_regions, server_id_from)
from monitor.settings import HttpSettings, MonitorSettings
from monitor.source import HostSample, Sample

DATA = Path(__file__).parent / "data"
REC = {rs: (json.loads((DATA / f"jmx-{rs}-regions.json").read_text()),
            json.loads((DATA / f"jmx-{rs}-server.json").read_text())) for rs in ("rs1", "rs2")}


IPC = json.loads((DATA / "jmx-rs1-ipc.json").read_text())["beans"][0]


def regions_bean(rs):
    return REC[rs][0]["beans"][0]


def server_bean(rs):
    return REC[rs][1]["beans"][0]


def attr(bean, region, metric):
    (key,) = [k for k in bean if f"_region_{region}_metric_{metric}" in k and "_store_" not in k]
    return bean[key]


def user_regions(bean):
    return {k.split("_region_")[1][:32] for k in bean if k.startswith("Namespace_default_table_usertable_region_")}


def serve(jmx_server, rs, regions=None, server=None):
    s = jmx_server()
    s.serve_recording({"beans": [regions or regions_bean(rs)]}, {"beans": [server or server_bean(rs)]})
    return s


def settings(*urls, **kw):
    return MonitorSettings(hbase_jmx_urls=tuple(urls), **kw)


def test_recorded_regionservers_give_partitions_with_the_documented_counter_mapping(jmx_server):
    a, b = serve(jmx_server, "rs1"), serve(jmx_server, "rs2")
    sample = HBaseJmxSource(settings(a.url, b.url)).sample()
    assert sample.errors == ()
    name1, name2 = (server_bean(rs)["tag.serverName"] for rs in ("rs1", "rs2"))
    assert set(sample.servers) == {",".join(name1.split(",")[:2]), ",".join(name2.split(",")[:2])}
    by_id = {p.id: p for p in sample.partitions}
    assert set(by_id) == user_regions(regions_bean("rs1")) | user_regions(regions_bean("rs2"))
    for rs in ("rs1", "rs2"):
        bean = regions_bean(rs)
        for region in user_regions(bean):
            p = by_id[region]
            assert p.table == "usertable"
            assert p.server == ",".join(server_bean(rs)["tag.serverName"].split(",")[:2])
            assert p.reads == attr(bean, region, "getCount")
            assert p.scans == attr(bean, region, "scanCount")
            assert p.writes == sum(attr(bean, region, m) for m in
                                   ("putCount", "deleteCount", "incrementCount", "appendCount"))
            assert p.size_mb == attr(bean, region, "storeFileSize") / 2**20
            assert p.locality == server_bean(rs)["percentFilesLocal"] / 100


def test_system_tables_only_when_asked(jmx_server):
    a = serve(jmx_server, "rs1")
    sample = HBaseJmxSource(settings(a.url), include_system_tables=True).sample()
    assert "hbase:meta" in {p.table for p in sample.partitions}


def test_server_id_fallbacks():
    assert server_id_from({"tag.serverName": "rs9.x,16020,1700"}, 1) == "rs9.x,16020"
    assert server_id_from({"tag.Hostname": "rs9.x"}, 16020) == "rs9.x,16020"
    assert server_id_from(None, 16020) is None
    assert server_id_from({"tag.serverName": ""}, 16020) is None


def test_table_names_with_underscores_and_namespaces():
    bean = {f"Namespace_my_ns_table_user_table_2_region_{'a' * 32}_metric_{m}": 5
            for m in ("getCount", "scanCount", "putCount", "deleteCount", "incrementCount", "appendCount")}
    bean[f"Namespace_my_ns_table_user_table_2_region_{'a' * 32}_store_f_metric_mixedRowReadsCount"] = 1
    (p,) = parse_regions(bean, "s,1", None)
    assert p.table == "my_ns:user_table_2" and p.id == "a" * 32 and p.writes == 20


def test_nan_infinity_and_absent_counters_are_missing_not_numbers(jmx_server):
    bean = copy.deepcopy(regions_bean("rs1"))
    region = sorted(user_regions(bean))[0]
    key = next(k for k in bean if f"{region}_metric_getCount" in k)
    bean[key] = float("nan")
    put = next(k for k in bean if f"{region}_metric_putCount" in k)
    bean[put] = float("inf")
    s = serve(jmx_server, "rs1", regions=bean)
    src = HBaseJmxSource(settings(s.url))
    sample = src.sample()
    p = next(p for p in sample.partitions if p.id == region)
    assert math.isnan(p.reads) and math.isnan(p.writes)
    assert any("1 regions without usable" in e for e in sample.errors)
    c = Collector([src], settings(s.url))
    c.poll(0.0), c.poll(10.0)
    snap = c.snapshot(10.0)
    assert region not in {q.id for q in snap.partitions}
    assert any(m.startswith(f"partition {region}") and "not a number" in m for m in snap.missing)


def test_bare_nan_text_from_the_server_is_accepted(jmx_server):
    s = serve(jmx_server, "rs1")
    text = json.dumps({"beans": [regions_bean("rs1")]})
    region = sorted(user_regions(regions_bean("rs1")))[0]
    text = text.replace(f'"Namespace_default_table_usertable_region_{region}_metric_scanCount": ',
                        f'"Namespace_default_table_usertable_region_{region}_metric_scanCount": NaN, "x": ')
    s.answers[REGIONS_BEAN] = text.encode()
    sample = HBaseJmxSource(settings(s.url)).sample()
    p = next(p for p in sample.partitions if p.id == region)
    assert math.isnan(p.scans) and not math.isnan(p.reads)


@pytest.mark.parametrize("misbehave,words", [
    (dict(raw=b"<html><head><title>Error 404</title></head></html>"), "not JSON"),
    (dict(raw=b"\x00\x01garbage{{"), "not JSON"),
    (dict(raw=b'{"beans": [ {"name": "Hadoop:service'), "not JSON"),  # truncated
    (dict(raw=b'{"nothing": 1}'), "no 'beans'"),
    (dict(status=500), "HTTP 500"),
    (dict(delay_s=2.0), "no complete answer within 0.5 s"),
    (dict(answers={}), "no Hadoop:service=HBase,name=RegionServer,sub=Regions bean"),
])
def test_bad_answers_give_a_clear_error_and_no_made_up_partitions(jmx_server, misbehave, words, caplog):
    good = serve(jmx_server, "rs2")
    bad = serve(jmx_server, "rs1")
    for k, v in misbehave.items():
        setattr(bad, k, v)
    cfg = settings(bad.url, good.url, http=HttpSettings(read_timeout_s=0.5))
    src = HBaseJmxSource(cfg)
    with caplog.at_level(logging.WARNING):
        sample = src.sample()
    assert any(bad.url in e and words in e for e in sample.errors), sample.errors
    assert words in caplog.text
    assert {p.id for p in sample.partitions} == user_regions(regions_bean("rs2"))
    c = Collector([src], cfg)
    c.poll(0.0)
    snap = c.snapshot(0.0)
    assert any(bad.url in m for m in snap.missing)


def test_unreachable_server(jmx_server):
    s = jmx_server()
    url = s.url
    s.close()
    sample = HBaseJmxSource(settings(url, http=HttpSettings(read_timeout_s=0.5))).sample()
    assert sample.partitions == () and "cannot connect" in sample.errors[0]


def test_size_limit(jmx_server):
    s = serve(jmx_server, "rs1")
    sample = HBaseJmxSource(settings(s.url, http=HttpSettings(max_mb=0.001))).sample()
    assert sample.partitions == () and "limit" in sample.errors[0]


def test_counter_going_backwards_across_polls_is_a_reset(jmx_server, caplog):
    s = serve(jmx_server, "rs1")
    region = sorted(user_regions(regions_bean("rs1")))[0]
    key = f"Namespace_default_table_usertable_region_{region}_metric_getCount"
    clock = iter([0.0, 10.0, 20.0])
    src = HBaseJmxSource(settings(s.url), clock=lambda: next(clock))
    c = Collector([src], settings(s.url))
    for value in (1000, 1500, 20):  # 50 gets/s, then the region reopened (counter restarted)
        s.answers[REGIONS_BEAN][key] = value
        c.poll(0.0)
    p = next(p for p in c.snapshot(0.0).partitions if p.id == region)
    assert p.reads == pytest.approx((1500 - 1000) / 10) and p.reads >= 0
    assert "backwards" in caplog.text


class FixedAdmin:
    def __init__(self, facts=(), error=None):
        self.facts, self.error = list(facts), error

    def region_metrics(self):
        if self.error:
            raise self.error
        return self.facts


def test_admin_provider_gives_per_region_locality_and_size(jmx_server):
    s = serve(jmx_server, "rs1")
    region = sorted(user_regions(regions_bean("rs1")))[0]
    admin = FixedAdmin([RegionAdminMetrics(region=region, server="x,1", size_mb=321.0, locality=0.25)])
    assert isinstance(admin, RegionMetricsProvider)
    by_id = {p.id: p for p in HBaseJmxSource(settings(s.url), admin=admin).sample().partitions}
    assert by_id[region].locality == 0.25 and by_id[region].size_mb == 321.0
    others = [p for pid, p in by_id.items() if pid != region]
    assert all(p.locality == server_bean("rs1")["percentFilesLocal"] / 100 for p in others)


def test_admin_provider_failure_falls_back_and_says_so(jmx_server):
    s = serve(jmx_server, "rs1")
    sample = HBaseJmxSource(settings(s.url), admin=FixedAdmin(error=RuntimeError("py4j down"))).sample()
    assert sample.partitions and any("py4j down" in e for e in sample.errors)


def test_servers_are_polled_in_parallel_and_listed_once(jmx_server):
    import threading

    servers = [serve(jmx_server, "rs1") for _ in range(3)]
    # Each answer waits until all three servers are being asked at once: polled one after the
    # other, the barrier breaks and every answer is a 500.
    barrier = threading.Barrier(3, timeout=5)
    for s in servers:
        s.hook = barrier.wait
    urls = [s.url for s in servers]
    src = HBaseJmxSource(settings(*urls, urls[0] + "/", http=HttpSettings(read_timeout_s=10)))
    assert src.urls == tuple(urls)
    sample = src.sample()
    assert sample.errors == () and len(sample.servers) == 3


def test_a_regionserver_serving_no_region_is_a_node_with_no_partitions(jmx_server):
    # HBase registers sub=Regions only once a server opens its first region: a new or drained
    # RegionServer answers the Server bean alone.
    empty = jmx_server()
    empty.answers[SERVER_BEAN] = server_bean("rs1")
    busy = serve(jmx_server, "rs2")
    cfg = settings(empty.url, busy.url)
    src = HBaseJmxSource(cfg)
    sample = src.sample()
    assert sample.errors == ()
    empty_id = ",".join(server_bean("rs1")["tag.serverName"].split(",")[:2])
    assert empty_id in sample.servers
    assert all(p.server != empty_id for p in sample.partitions)
    assert {p.id for p in sample.partitions} == user_regions(regions_bean("rs2"))
    c = Collector([src], cfg)
    c.poll(0.0)
    snap = c.snapshot(0.0)
    assert empty_id in {n.id for n in snap.nodes}
    assert not any(p.node == empty_id for p in snap.partitions)
    assert not any(empty.url in m for m in snap.missing)


def test_discovered_servers_are_polled_too_and_each_server_only_once(jmx_server):
    a, b = serve(jmx_server, "rs1"), serve(jmx_server, "rs2")
    same_a = a.url.replace("127.0.0.1", "localhost")  # one server under two names
    cfg = settings(a.url)
    sample = HBaseJmxSource(cfg, discover=lambda: [same_a, b.url + "/"]).sample()
    assert sample.errors == ()
    assert len(sample.servers) == 2
    ids = [p.id for p in sample.partitions]
    assert len(ids) == len(set(ids))
    assert set(ids) == user_regions(regions_bean("rs1")) | user_regions(regions_bean("rs2"))

    def broken():
        raise ConnectionError("gateway gone")

    only_configured = HBaseJmxSource(cfg, discover=broken).sample()
    assert {p.id for p in only_configured.partitions} == user_regions(regions_bean("rs1"))
    assert any("discovery failed" in e and "gateway gone" in e for e in only_configured.errors)


def test_a_dripping_server_is_cut_at_the_total_deadline(jmx_server):
    # One byte every 0.05 s: every read is well within the timeout, the response never is.
    s = serve(jmx_server, "rs1")
    s.drip_s = 0.05
    sample = HBaseJmxSource(settings(s.url, http=HttpSettings(read_timeout_s=0.5))).sample()
    assert sample.partitions == () and "no complete answer within 0.5 s" in sample.errors[0]


def test_redirects_are_refused_not_followed(jmx_server):
    target = serve(jmx_server, "rs2")
    s = serve(jmx_server, "rs1")
    s.redirect_to = f"{target.url}/jmx"
    before = target.requests
    sample = HBaseJmxSource(settings(s.url, http=HttpSettings(read_timeout_s=2))).sample()
    assert sample.partitions == () and "302" in sample.errors[0] and "not followed" in sample.errors[0]
    assert target.requests == before


# -- process CPU (java.lang:type=OperatingSystem ProcessCpuLoad) ------------------------------

def _os_bean(load):
    # the shape a RegionServer's /jmx gives (HBase 2.6.4 on JDK 17, recorded on this machine)
    return {"name": OS_BEAN, "modelerType": "com.sun.management.internal.OperatingSystemImpl",
            "ProcessCpuLoad": load, "SystemCpuLoad": 1.0, "CpuLoad": 1.0, "AvailableProcessors": 2}


def _ids():
    return [",".join(server_bean(rs)["tag.serverName"].split(",")[:2]) for rs in ("rs1", "rs2")]


def test_servers_sharing_a_host_get_their_own_process_cpu_and_the_machines_io_and_memory(jmx_server):
    a, b = serve(jmx_server, "rs1"), serve(jmx_server, "rs2")
    a.answers[OS_BEAN], b.answers[OS_BEAN] = _os_bean(0.7), _os_bean(0.1)
    cfg = settings(a.url, b.url)  # both recorded servers are on host "localhost"
    src = HBaseJmxSource(cfg)
    sample = src.sample()
    assert {h.host: (h.cpu, h.scope) for h in sample.hosts} == {
        _ids()[0]: (0.7, "process"), _ids()[1]: (0.1, "process")}
    machine = HostSample(host="localhost", cpu=0.95, io_wait=0.02, memory=0.5)
    c = Collector([src, _Fixed(machine)], cfg)
    c.poll(0.0)
    nodes = {n.id: n.metrics for n in c.snapshot(0.0).nodes}
    assert (nodes[_ids()[0]].cpu, nodes[_ids()[1]].cpu) == (0.7, 0.1)  # not 0.95 for both
    assert all(m.io_wait == 0.02 and m.memory == 0.5 for m in nodes.values())


def test_a_server_alone_on_its_host_keeps_the_machines_cpu_unless_always(jmx_server):
    a = serve(jmx_server, "rs1")
    a.answers[OS_BEAN] = _os_bean(0.3)
    assert HBaseJmxSource(settings(a.url)).sample().hosts == ()
    (h,) = HBaseJmxSource(settings(a.url, hbase_process_cpu="always")).sample().hosts
    assert (h.host, h.cpu) == (_ids()[0], 0.3)
    b = serve(jmx_server, "rs2")
    assert HBaseJmxSource(settings(a.url, b.url, hbase_process_cpu="off")).sample().hosts == ()


@pytest.mark.parametrize("load", [-1.0, "NaN", None, "0.5", True])
def test_an_unknown_process_cpu_is_missing_never_the_machines(jmx_server, load):
    a, b = serve(jmx_server, "rs1"), serve(jmx_server, "rs2")
    a.answers[OS_BEAN], b.answers[OS_BEAN] = _os_bean(load), _os_bean(0.2)
    if load is None:
        del a.answers[OS_BEAN]  # the bean absent altogether
    cfg = settings(a.url, b.url)
    src = HBaseJmxSource(cfg)
    c = Collector([src, _Fixed(HostSample(host="localhost", cpu=0.9, io_wait=0.0, memory=0.4))], cfg)
    c.poll(0.0)
    snap = c.snapshot(0.0)
    nodes = {n.id: n.metrics for n in snap.nodes}
    assert nodes[_ids()[0]] is None and nodes[_ids()[1]].cpu == 0.2
    assert any(_ids()[0] in m and "cpu" in m.lower() for m in snap.missing), snap.missing


def test_a_server_without_process_cpu_says_so_and_its_regions_still_count(jmx_server):
    # the monitor asks for ProcessCpuLoad alone; HBase answers HTTP 400 for an attribute it lacks
    a = serve(jmx_server, "rs1")
    a.answers[OS_BEAN] = {k: v for k, v in _os_bean(0.5).items() if k != "ProcessCpuLoad"}
    sample = HBaseJmxSource(settings(a.url, hbase_process_cpu="always")).sample()
    (h,) = sample.hosts
    assert h.cpu is None and "ProcessCpuLoad" in h.reason and "HTTP 400" in h.reason
    assert len(sample.partitions) > 0 and sample.errors == ()


class _Fixed:
    """A host-level source with one fixed machine sample (what Ganglia would report)."""

    def __init__(self, host):
        self.host = host

    def sample(self):
        return Sample(taken_at=0.0, hosts=(self.host,))


# --- the one ProcessCpuLoad parser, shared with monitor/jvm_cpu.py ---------------------------

@pytest.mark.parametrize("bean, cpu", [
    ({"ProcessCpuLoad": 0.25}, 0.25), ({"ProcessCpuLoad": 0}, 0.0), ({"ProcessCpuLoad": 1.5}, 1.0),
    ({"ProcessCpuLoad": -1.0}, None), ({"ProcessCpuLoad": float("nan")}, None),
    ({"ProcessCpuLoad": "0.5"}, None), ({"ProcessCpuLoad": True}, None), ({}, None), (None, None),
])
def test_process_cpu_load_is_parsed_once_for_both_sources(bean, cpu, jmx_server):
    from monitor import hbase_jmx, jvm_cpu
    assert hbase_jmx.parse_process_cpu(bean) == cpu
    s = jmx_server()
    s.answers = {jvm_cpu.SERVER_BEAN: {"name": jvm_cpu.SERVER_BEAN, "tag.serverName": "h,16020,1"},
                 jvm_cpu.OS_BEAN: {"name": jvm_cpu.OS_BEAN, **(bean or {"SystemCpuLoad": 0.5})},
                 jvm_cpu.MEMORY_BEAN: {"name": jvm_cpu.MEMORY_BEAN, "HeapMemoryUsage": {"used": 1, "max": 4}},
                 jvm_cpu.RUNTIME_BEAN: {"name": jvm_cpu.RUNTIME_BEAN, "Name": "999999999@h"}}
    sample = jvm_cpu.JvmSystemSource([s.url], clock=lambda: 0.0).sample()
    if "ProcessCpuLoad" not in (bean or {}):  # HBase answers HTTP 400 for an attribute it lacks
        assert sample.hosts == () and s.url in sample.errors[0]
        return
    (got,) = sample.hosts
    assert (got.host, got.cpu, got.memory) == ("h,16020", cpu, 0.25)


def test_with_the_jvms_own_metrics_each_server_is_asked_its_process_cpu_once_a_sample(jmx_server):
    # ProcessCpuLoad is the JVM's CPU since anyone last asked: a second question in the same
    # sample would read the milliseconds since the first
    from monitor.live import live_sources

    a = serve(jmx_server, "rs1")
    a.answers[OS_BEAN] = _os_bean(0.4)
    a.answers["java.lang:type=Memory"] = {"name": "java.lang:type=Memory",
                                          "HeapMemoryUsage": {"used": 1, "max": 4}}
    a.answers["java.lang:type=Runtime"] = {"name": "java.lang:type=Runtime", "Name": f"{os.getpid()}@h"}
    asked: list[str] = []
    a.hook = lambda: asked.append(a.last_request[0])
    cfg = settings(a.url, hbase_jvm_system_metrics=True, hbase_process_cpu="always",
                   host_name_rule="identity")
    c = Collector(live_sources(cfg), cfg)
    for t in (0.0, 30.0):
        c.poll(t)
    assert sum("ProcessCpuLoad" in q or "OperatingSystem" in q for q in asked) == 2, asked
    (node,) = c.snapshot(30.0).nodes
    assert node.id == _ids()[0] and node.metrics.cpu == 0.4


def test_the_jvm_source_reads_a_servers_id_again_only_when_its_process_changes(jmx_server):
    from monitor import jvm_cpu
    s = jmx_server()
    s.answers = {jvm_cpu.SERVER_BEAN: {"name": jvm_cpu.SERVER_BEAN, "tag.serverName": "h,16020,1"},
                 jvm_cpu.OS_BEAN: {"name": jvm_cpu.OS_BEAN, "ProcessCpuLoad": 0.1},
                 jvm_cpu.MEMORY_BEAN: {"name": jvm_cpu.MEMORY_BEAN, "HeapMemoryUsage": {"used": 1, "max": 4}},
                 jvm_cpu.RUNTIME_BEAN: {"name": jvm_cpu.RUNTIME_BEAN, "Name": f"{os.getpid()}@h"}}
    asked: list[str] = []
    s.hook = lambda: asked.append(s.last_request[0])
    source = jvm_cpu.JvmSystemSource([s.url], clock=lambda: 0.0)
    assert [h.host for _ in range(3) for h in source.sample().hosts] == ["h,16020"] * 3
    assert sum("sub%3DServer" in q for q in asked) == 1
    # the RegionServer restarted on another RPC port behind the same info port: a new JVM
    s.answers[jvm_cpu.SERVER_BEAN]["tag.serverName"] = "h,16021,2"
    s.answers[jvm_cpu.RUNTIME_BEAN]["Name"] = f"{os.getppid()}@h"
    assert [h.host for h in source.sample().hosts] == ["h,16021"]


def test_the_jvm_source_reads_no_more_than_the_monitors_limit(jmx_server):
    # the JVM source asks through the per-region source's fetch: monitor.http.max_mb bounds
    # what it reads of a server's answer (an endless or huge answer is refused, not buffered)
    from monitor import jvm_cpu
    s = jmx_server()
    s.answers = {jvm_cpu.RUNTIME_BEAN: {"name": jvm_cpu.RUNTIME_BEAN,
                                        "Name": f"{os.getpid()}@" + "h" * 4096}}
    sample = jvm_cpu.JvmSystemSource([s.url], http=HttpSettings(max_mb=0.001),
                                     clock=lambda: 0.0).sample()
    assert sample.hosts == () and "monitor.http.max_mb" in sample.errors[0], sample.errors


@pytest.mark.parametrize("mean, expected", [(37, 37.0), (0, 0.0), (math.nan, None), (-1, None), (None, None)])
def test_call_time_of_the_ipc_bean_is_the_servers_latency(jmx_server, mean, expected):
    """TotalCallTime_mean of the recorded HBase 2.6.4 IPC bean (ms queued + processed) is the
    server's rpc latency; absent, NaN or negative leaves the server without one, and the
    regions still count (the metric is optional, not an error)."""
    a = serve(jmx_server, "rs1")
    ipc = copy.deepcopy(IPC)
    assert ipc["name"] == IPC_BEAN and "TotalCallTime_mean" in ipc
    if mean is None:
        del ipc["TotalCallTime_mean"]
    else:
        ipc["TotalCallTime_mean"] = mean
    a.answers[IPC_BEAN] = ipc
    sample = HBaseJmxSource(settings(a.url)).sample()
    server = ",".join(server_bean("rs1")["tag.serverName"].split(",")[:2])
    assert sample.errors == () and sample.partitions
    assert sample.server_latency_ms.get(server) == expected


@pytest.mark.parametrize("p99, expected", [(258, 258.0), (math.nan, None), (None, None)])
def test_with_hbase_call_time_p99_the_servers_latency_is_its_99th_percentile(jmx_server, p99, expected):
    """monitor.hbase_call_time: p99 reads the same histogram's TotalCallTime_99th_percentile
    (a quota'd RegionServer's mean stayed at a few ms while its stalls showed there); the mean
    beside it is not used, and a missing or NaN p99 leaves the server without a latency."""
    a = serve(jmx_server, "rs1")
    ipc = copy.deepcopy(IPC)
    assert "TotalCallTime_99th_percentile" in ipc
    ipc["TotalCallTime_mean"] = 4
    if p99 is None:
        del ipc["TotalCallTime_99th_percentile"]
    else:
        ipc["TotalCallTime_99th_percentile"] = p99
    a.answers[IPC_BEAN] = ipc
    server = ",".join(server_bean("rs1")["tag.serverName"].split(",")[:2])
    sample = HBaseJmxSource(settings(a.url, hbase_call_time="p99")).sample()
    assert sample.errors == () and sample.partitions
    assert sample.server_latency_ms.get(server) == expected
    assert HBaseJmxSource(settings(a.url)).sample().server_latency_ms.get(server) == 4.0


@pytest.mark.parametrize("queues, expected", [
    ({}, 0.0),  # the recorded bean: every queue empty
    ({"numCallsInGeneralQueue": 120}, 120.0),
    ({"numCallsInGeneralQueue": 40, "numCallsInReadQueue": 25, "numCallsInScanQueue": 5}, 70.0),
    ({"numCallsInGeneralQueue": math.nan}, None), ({"numCallsInWriteQueue": -3}, None),
    (None, None),  # none of the client queues reported
])
def test_calls_waiting_in_the_client_call_queues_are_the_servers_queue(jmx_server, queues, expected):
    """The recorded HBase 2.6.4 IPC bean's client call queues (general, read, write, scan;
    not priority or replication) summed are the server's rpc queue length; a non-finite or
    negative one, or none at all, leaves the server without one and the regions count."""
    a = serve(jmx_server, "rs1")
    ipc = copy.deepcopy(IPC)
    assert all(q in ipc for q in hbase_jmx_queues())
    if queues is None:
        for q in hbase_jmx_queues():
            del ipc[q]
    else:
        ipc.update(queues)
    a.answers[IPC_BEAN] = ipc
    sample = HBaseJmxSource(settings(a.url)).sample()
    server = ",".join(server_bean("rs1")["tag.serverName"].split(",")[:2])
    assert sample.errors == () and sample.partitions
    assert sample.server_queue_length.get(server) == expected


@pytest.mark.parametrize("counters, expected", [
    ({}, 0.0),  # the recorded bean: nothing refused
    ({"exceptions.callQueueTooBig": 700, "exceptions.callTimedOut": 300}, 1000.0),
    ({"exceptions.callDropped": math.nan}, None), (None, None),
])
def test_calls_refused_or_dropped_are_counted_per_server(jmx_server, counters, expected):
    """The recorded HBase 2.6.4 IPC bean's counters of calls refused (queue full), dropped and
    timed out while waiting, summed: what a saturated server did not serve."""
    from monitor.hbase_jmx import DROPPED_CALLS
    a = serve(jmx_server, "rs1")
    ipc = copy.deepcopy(IPC)
    assert all(q in ipc for q in DROPPED_CALLS)
    if counters is None:
        for q in DROPPED_CALLS:
            del ipc[q]
    else:
        ipc.update(counters)
    a.answers[IPC_BEAN] = ipc
    sample = HBaseJmxSource(settings(a.url)).sample()
    server = ",".join(server_bean("rs1")["tag.serverName"].split(",")[:2])
    assert sample.errors == () and sample.partitions
    assert sample.server_dropped_calls.get(server) == expected


def hbase_jmx_queues():
    from monitor.hbase_jmx import CALL_QUEUES
    return CALL_QUEUES


def test_no_ipc_bean_means_no_latency_and_no_error(jmx_server):
    a = serve(jmx_server, "rs1")
    sample = HBaseJmxSource(settings(a.url)).sample()
    assert sample.errors == () and sample.server_latency_ms == {} and sample.partitions
    assert sample.server_queue_length == {}


def test_a_server_whose_answer_does_not_name_it_is_left_out_not_given_a_made_up_id(jmx_server):
    # Seen on a live cluster: one /jmx answer without the Server bean. An id from the URL
    # ("127.0.0.1,16020") would have been a phantom node beside the real "localhost,<port>".
    unnamed = jmx_server()
    unnamed.answers[REGIONS_BEAN] = regions_bean("rs1")
    named = serve(jmx_server, "rs2")
    sample = HBaseJmxSource(settings(unnamed.url, named.url)).sample()
    assert sample.servers == (",".join(server_bean("rs2")["tag.serverName"].split(",")[:2]),)
    assert {p.id for p in sample.partitions} == user_regions(regions_bean("rs2"))
    (error,) = sample.errors
    assert unnamed.url in error and "names no server" in error


def test_jmx_credentials_never_reach_errors_the_snapshot_or_stderr(jmx_server, capsys):
    """Issue 24 item 17: with `monitor.hbase_jmx_urls: [http://u:PASSWORD@host:port/...]`,
    `metctl snapshot` printed the password on stderr and in the snapshot's `missing` list."""
    from controller.cli import main

    ok = serve(jmx_server, "rs1")
    url = ok.url.replace("http://", "http://metctl:hunter2-%40pw@")
    sample = HBaseJmxSource(settings(url)).sample()
    assert sample.partitions and ok.last_request[1]["Authorization"] == \
        "Basic bWV0Y3RsOmh1bnRlcjItQHB3"  # metctl:hunter2-@pw, sent as basic auth
    for misbehave in (dict(status=500), dict(raw=b"<html>denied</html>"),
                      dict(raw=b'{"nothing": 1}'), dict(delay_s=1.0)):
        bad = jmx_server()
        for k, v in misbehave.items():
            setattr(bad, k, v)
        creds = bad.url.replace("http://", "http://metctl:hunter2@")
        sample = HBaseJmxSource(settings(creds, http=HttpSettings(read_timeout_s=0.5))).sample()
        assert sample.errors and bad.url in sample.errors[0], sample.errors
        assert "hunter2" not in repr(sample), misbehave
        code = main(["snapshot", "--hbase-jmx", creds, "--samples", "1", "--format", "json"])
        out, err = capsys.readouterr()
        assert code in (0, 1, 2) and bad.url in out + err
        assert "hunter2" not in out + err, misbehave
    closed = jmx_server()
    gone = closed.url.replace("http://", "http://metctl:hunter2@")
    closed.close()
    assert "hunter2" not in repr(HBaseJmxSource(settings(gone)).sample())


def test_the_timeout_bounds_a_servers_whole_poll_not_each_request(jmx_server):
    """Issue 24 item 20: each request had its own deadline, so a server's poll (two to four
    requests) took several times monitor.http.read_timeout_s."""
    slow = serve(jmx_server, "rs1")
    slow.delay_s = 0.6  # each answer in time on its own, not the two a poll needs
    sample = HBaseJmxSource(settings(slow.url, http=HttpSettings(read_timeout_s=1.0))).sample()
    assert sample.partitions == ()
    assert "no complete answer within 1 s" in sample.errors[0]
    assert "http.read_timeout_s" in sample.errors[0]


def _big_regions_answer(target_bytes: int) -> tuple[bytes, int]:
    """A Regions bean as a RegionServer prints it (every metric the recorded one has for a
    region), for as many regions as fit in `target_bytes`."""
    bean = regions_bean("rs1")
    region = sorted(user_regions(bean))[0]
    one = {k.replace(region, "{r}"): v for k, v in bean.items()
           if f"_region_{region}_" in k}
    lines, size, n = [], 0, 0
    while size < target_bytes:
        r = f"{n:032x}"
        for k, v in one.items():
            line = f'    "{k.replace("{r}", r)}" : {json.dumps(v)}'
            lines.append(line)
            size += len(line) + 2
        n += 1
    text = ('{\n  "beans" : [ {\n    "name" : "' + REGIONS_BEAN + '",\n'
            + ",\n".join(lines) + "\n  } ]\n}\n")
    return text.encode(), n


@pytest.mark.integration
def test_a_64_mb_answer_is_read_in_memory_well_under_its_size(jmx_server, tmp_path):
    """Issue 24 item 20: a 64 MB /jmx answer (under the 64 MiB cap) took 1.09 GB of memory:
    json.loads built every attribute for the few metctl reads. Read as it arrives, a poll's
    memory grows by less than the answer's size (measured in a process of its own; 45 MB
    against 237 MB before, for this 60 MB answer of 19,083 regions)."""
    import subprocess
    import sys

    answer, regions = _big_regions_answer(60 << 20)
    s = jmx_server()
    s.answers[REGIONS_BEAN] = answer
    s.answers[SERVER_BEAN] = server_bean("rs1")
    # the peak resident size (VmHWM; ru_maxrss carries the parent's over fork and exec)
    code = (
        "import json, re, sys\n"
        "from monitor.hbase_jmx import HBaseJmxSource\n"
        "from monitor.settings import HttpSettings, MonitorSettings\n"
        "def peak():\n"
        "    return int(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1])\n"
        "src = HBaseJmxSource(MonitorSettings(hbase_jmx_urls=(sys.argv[1],),\n"
        "                     http=HttpSettings(read_timeout_s=600), hbase_process_cpu='off'))\n"
        "before = peak()\n"
        "sample = src.sample()\n"
        "print(json.dumps({'grew_mb': (peak() - before) / 1024, 'errors': sample.errors,\n"
        "                  'partitions': len(sample.partitions)}))\n")
    done = subprocess.run([sys.executable, "-c", code, s.url], capture_output=True, text=True,
                          timeout=900, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["errors"] == [] and result["partitions"] == regions
    # what is kept (7 of the region's attributes) and the samples made of it, not the answer:
    # json.loads of it grew by ~4x its size
    assert result["grew_mb"] < len(answer) / 2**20, result


# --- the gap between questions to one server (monitor.hbase_jmx_question_gap_ms) ------------

def test_both_jmx_sources_keep_the_gap_between_questions_to_one_server(jmx_server):
    # a quota'd RegionServer pays each question's CPU within one scheduling period: spaced, the
    # calls it serves meanwhile are not throttled together
    from monitor.live import live_sources

    a, b = serve(jmx_server, "rs1"), serve(jmx_server, "rs2")
    for s, name in ((a, "rs1"), (b, "rs2")):
        s.answers[OS_BEAN] = _os_bean(0.4)
        s.answers["java.lang:type=Memory"] = {"name": "java.lang:type=Memory",
                                              "HeapMemoryUsage": {"used": 1, "max": 4}}
        s.answers["java.lang:type=Runtime"] = {"name": "java.lang:type=Runtime", "Name": f"{os.getpid()}@h"}
    arrivals: dict[str, list[float]] = {"rs1": [], "rs2": []}
    a.hook = lambda: arrivals["rs1"].append(time.monotonic())
    b.hook = lambda: arrivals["rs2"].append(time.monotonic())
    cfg = settings(a.url, b.url, hbase_jvm_system_metrics=True, host_name_rule="identity",
                   hbase_jmx_question_gap_ms=60)
    c = Collector(live_sources(cfg), cfg)
    c.poll(0.0)
    for name, times in arrivals.items():
        assert len(times) >= 5, (name, times)  # regions, server, IPC, then the JVM's questions
        gaps = [y - x for x, y in zip(times, times[1:])]
        assert min(gaps) >= 0.06, (name, gaps)
    # the two servers are asked side by side, not one after the other
    assert abs(arrivals["rs1"][0] - arrivals["rs2"][0]) < 0.06
    assert len(c.snapshot(0.0).nodes) == 2


def test_the_pacer_waits_out_the_gap_but_never_past_the_polls_deadline():
    from monitor.hbase_jmx import QuestionPacer

    now = [100.0]
    slept: list[float] = []

    def sleep(s):
        slept.append(round(s, 6))
        now[0] += s

    pacer = QuestionPacer(0.1, clock=lambda: now[0], sleep=sleep)
    pacer.wait("u1", deadline=200.0)  # nothing asked yet: at once
    pacer.answered("u1")
    now[0] += 0.03
    pacer.wait("u2", deadline=200.0)  # another server: at once
    pacer.wait("u1", deadline=200.0)  # 0.07 s left of u1's gap
    pacer.answered("u1")
    now[0] += 0.01
    pacer.wait("u1", deadline=now[0] + 0.04)  # the deadline comes first
    assert slept == [0.07, 0.04]
    off = QuestionPacer(0.0, clock=lambda: now[0], sleep=sleep)
    off.answered("u1")
    off.wait("u1", deadline=200.0)
    assert slept == [0.07, 0.04]
