"""Prometheus source: a recorded answer and variants of it, HTTP misbehaviour (loopback server),
settings, and (integration) real Prometheus scraping real node_exporters on loopback."""
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from common.errors import BadInput
from controller.config import load_config
from monitor.collector import Collector
from monitor.prometheus import (PrometheusError, PrometheusSource, host_of, parse_answer,
                                shown_url, to_host_sample)
from monitor.settings import HttpSettings, MonitorSettings
from monitor.source import Sample

DATA = Path(__file__).parent / "data"
ANSWER = (DATA / "prometheus-node-answer.json").read_bytes()
ERROR_ANSWER = (DATA / "prometheus-error-answer.json").read_bytes()
SETTINGS = MonitorSettings(prometheus_url="http://127.0.0.1:1")


def recorded() -> dict:
    return json.loads(ANSWER)


INSTANCE = "127.0.0.1:53679"  # this machine's exporter when the answer was recorded


def figures(doc: dict, instance: str = INSTANCE) -> dict:
    """{series tag: value} of one instance, read straight from the JSON (the oracle)."""
    return {s["metric"]["metctl_series"]: float(s["value"][1])
            for s in doc["data"]["result"] if s["metric"]["instance"] == instance}


def as_hosts(doc: dict, settings: MonitorSettings = SETTINGS) -> dict:
    answer = parse_answer(json.dumps(doc).encode())
    return {inst: to_host_sample(host_of(inst), raw, answer.evaluated_at, settings)
            for inst, raw in answer.instances.items()}


def edited(doc: dict, tag: str, value: str | None, instance: str = INSTANCE) -> dict:
    """`doc` with one series' value replaced (None: the series removed)."""
    doc = copy.deepcopy(doc)
    kept = []
    for s in doc["data"]["result"]:
        m = s["metric"]
        if m["instance"] == instance and m["metctl_series"] == tag:
            if value is None:
                continue
            s["value"][1] = value
        kept.append(s)
    doc["data"]["result"] = kept
    return doc


class Servers:
    """What HBase would say is up (the data-store side of the collector, not under test here)."""

    def __init__(self, *servers: str):
        self.servers = servers

    def sample(self) -> Sample:
        return Sample(taken_at=time.time(), servers=self.servers)


# ------------------------------------------------------------------ the recorded answer

def test_recorded_answer_gives_the_fractions_ganglia_would():
    doc = edited(edited(recorded(), "idle", "0.625"), "iowait", "0.125")  # recorded: a busy machine
    f = figures(doc)
    hosts = as_hosts(doc)
    assert {h.host for h in hosts.values()} == {"127.0.0.1", "127.0.0.2"}
    h = hosts[INSTANCE]
    assert h.host == "127.0.0.1" and not h.stale and h.reason == ""
    assert (h.cpu, h.io_wait) == (0.375, 0.125)
    assert h.memory == pytest.approx(1 - f["mem_available"] / f["mem_total"])
    assert 0 < h.memory < 1
    assert as_hosts(recorded())[INSTANCE].cpu == 1.0  # as recorded: no idle time at all


def test_instance_label_to_host_name():
    assert host_of("rs1.example.org:9100") == "rs1.example.org"
    assert host_of("[::1]:9100") == "::1"
    assert host_of("rs1") == "rs1"
    assert host_of("fe80::1") == "fe80::1"  # a bare IPv6 address has no port to drop


def test_missing_memory_series_leaves_memory_missing_and_the_node_not_fresh():
    h = as_hosts(edited(recorded(), "mem_available", None))[INSTANCE]
    assert h.memory is None and h.cpu is not None
    assert "MemAvailable_bytes missing" in h.reason


def test_nan_share_or_zero_total_is_missing_never_a_number():
    # 0 / 0: no CPU time passed between the window's scrapes
    h = as_hosts(edited(recorded(), "idle", "NaN"))[INSTANCE]
    assert h.cpu is None and h.io_wait is not None and "not a fraction" in h.reason
    h = as_hosts(edited(recorded(), "iowait", "+Inf"))[INSTANCE]
    assert h.io_wait is None and h.cpu is not None
    h = as_hosts(edited(recorded(), "mem_total", "0"))[INSTANCE]
    assert h.memory is None and "not usable" in h.reason


def test_no_rate_yet_or_no_iowait_mode_says_so():
    h = as_hosts(edited(edited(recorded(), "idle", None), "iowait", None))[INSTANCE]
    assert h.cpu is None and h.io_wait is None and "fewer than two scrapes" in h.reason
    h = as_hosts(edited(recorded(), "iowait", None))[INSTANCE]  # a kernel without iowait
    assert h.cpu is not None and h.io_wait is None and "no iowait mode" in h.reason


def test_old_sample_makes_the_host_stale():
    doc = recorded()
    evaluated = doc["data"]["result"][0]["value"][0]
    old = edited(doc, "sampled_at", str(evaluated - 90))
    h = as_hosts(old, MonitorSettings(prometheus_stale_after_s=60))[INSTANCE]
    assert h.stale and h.cpu is None and "90 s old" in h.reason


def test_error_answer_and_garbage_are_errors_with_prometheus_words():
    with pytest.raises(PrometheusError, match="bad_data.*bad duration"):
        parse_answer(ERROR_ANSWER)
    with pytest.raises(PrometheusError, match="not JSON"):
        parse_answer(b"<html>proxy login</html>")
    matrix = recorded()
    matrix["data"]["resultType"] = "matrix"
    with pytest.raises(PrometheusError, match="instant vector"):
        parse_answer(json.dumps(matrix).encode())


def test_two_exporters_on_one_host_keep_the_complete_one(jmx_server):
    doc = recorded()
    extra = copy.deepcopy(doc["data"]["result"][0])  # only an idle series: incomplete
    extra["metric"]["instance"] = "127.0.0.1:9999"
    doc["data"]["result"].insert(0, extra)
    server = jmx_server()
    server.raw = json.dumps(doc).encode()
    sample = PrometheusSource(SETTINGS, url=server.url).sample()
    assert sorted(h.host for h in sample.hosts) == ["127.0.0.1", "127.0.0.2"]
    assert all(h.memory is not None for h in sample.hosts)


# ------------------------------------------------------------------ HTTP (loopback server)

def test_redirect_is_an_error_and_not_followed(jmx_server):
    target = jmx_server()
    target.raw = ANSWER
    moved = jmx_server()
    moved.redirect_to = target.url + "/api/v1/query"
    sample = PrometheusSource(SETTINGS, url=moved.url).sample()
    assert sample.hosts == () and target.requests == 0
    assert "HTTP 302" in sample.errors[0] and "redirects are not followed" in sample.errors[0]


def test_answer_over_the_size_limit_is_refused(jmx_server):
    server = jmx_server()
    server.raw = ANSWER + b" " * 2048  # over the smallest limit a config may set
    small = SETTINGS.model_copy(update={"http": HttpSettings(max_mb=0.001)})
    sample = PrometheusSource(small, url=server.url).sample()
    assert sample.hosts == () and "MiB limit" in sample.errors[0]


def test_error_status_names_prometheus_error(jmx_server):
    server = jmx_server()
    server.raw, server.status = ERROR_ANSWER, 400
    sample = PrometheusSource(SETTINGS, url=server.url).sample()
    assert sample.hosts == ()
    assert "HTTP 400" in sample.errors[0] and "bad duration syntax" in sample.errors[0]


def test_dripping_answer_is_abandoned_at_the_total_deadline(jmx_server):
    """A byte every 50 ms never trips a per-read timeout; only a total deadline stops it. The
    bound asserted is generous (not a timing target): without the deadline this takes minutes."""
    server = jmx_server()
    server.raw, server.drip_s = ANSWER, 0.05
    settings = SETTINGS.model_copy(update={"http": HttpSettings(read_timeout_s=1.0)})
    started = time.monotonic()
    sample = PrometheusSource(settings, url=server.url).sample()
    assert time.monotonic() - started < 10
    assert sample.hosts == ()
    assert "no complete answer within 1 s" in sample.errors[0]
    assert "http.read_timeout_s" in sample.errors[0]


def test_silent_server_and_closed_port_are_clear_errors(jmx_server):
    server = jmx_server()
    server.raw, server.delay_s = ANSWER, 30  # accepts, then says nothing
    settings = SETTINGS.model_copy(update={"http": HttpSettings(read_timeout_s=0.5)})
    sample = PrometheusSource(settings, url=server.url).sample()
    assert "no complete answer within 0.5 s" in sample.errors[0]
    server.delay_s = 0
    closed = PrometheusSource(SETTINGS, url="http://127.0.0.1:1").sample()
    assert closed.hosts == () and "cannot connect" in closed.errors[0]


def test_credentials_go_as_basic_auth_and_are_never_printed(jmx_server):
    server = jmx_server()
    server.raw, server.status = ERROR_ANSWER, 400
    url = server.url.replace("http://", "http://metctl:s3cr%40t@")
    sample = PrometheusSource(SETTINGS, url=url).sample()
    assert server.last_request[1]["Authorization"] == "Basic bWV0Y3RsOnMzY3JAdA=="  # metctl:s3cr@t
    assert "s3cr" not in sample.errors[0] and server.url in sample.errors[0]
    assert shown_url("https://u:p@prom.example:9090/x") == "https://prom.example:9090/x"


# ------------------------------------------------------------------ settings

def config_error(tmp_path, monitor_yaml: str) -> str:
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text("monitor:\n" + monitor_yaml)
    with pytest.raises(BadInput) as err:
        load_config(cfg)
    return err.value.line()


@pytest.mark.parametrize("yaml, words", [
    ("  prometheus_url: 'ftp://prom:9090'\n", "monitor.prometheus_url"),
    ("  prometheus_url: 'http://prom:99999'\n", "valid port"),
    ("  prometheus_url: 'http://prom:9090/?x=1'\n", "without ?query"),
    ("  prometheus_url: 'http://prom:9090'\n  ganglia_endpoints: ['g:8651']\n", "not both"),
    ("  http: {read_timeout_s: .nan}\n", "monitor.http.read_timeout_s"),
    ("  http: {read_timeout_s: '5'}\n", "a number"),
    ("  prometheus_rate_window_s: 0.5\n", "monitor.prometheus_rate_window_s"),
    ("  prometheus_selector: 'job=node'\n", "PromQL label matchers"),
])
def test_bad_prometheus_settings_name_the_field(tmp_path, yaml, words):
    assert words in config_error(tmp_path, yaml)


def test_url_credentials_are_not_echoed_by_a_config_error(tmp_path):
    line = config_error(tmp_path, "  prometheus_url: 'ftp://u:hunter2@prom:9090'\n")
    assert "monitor.prometheus_url" in line and "hunter2" not in line


def test_good_settings_and_the_sources_they_make(tmp_path):
    from monitor.live import live_sources

    cfg = tmp_path / "metctl.yaml"
    cfg.write_text("monitor:\n  prometheus_url: 'https://prom.example:9090/prom/'\n"
                   "  prometheus_selector: 'job=\"node\", instance=~\"rs.*\"'\n")
    settings = load_config(cfg).monitor
    assert settings.prometheus_url == "https://prom.example:9090/prom"
    assert [type(s) for s in live_sources(settings)] == [PrometheusSource]
    query = live_sources(settings)[0].query
    assert 'node_cpu_seconds_total{job="node", instance=~"rs.*"}[60000ms]' in query
    assert 'node_cpu_seconds_total{mode="idle", job="node", instance=~"rs.*"}[60000ms]' in query


# ------------------------------------------------------------------ real Prometheus

def proc_stat() -> tuple[float, float, float, float]:
    """(total, idle, iowait, user) jiffies of the aggregate cpu line (guest time is in user)."""
    with open("/proc/stat") as f:
        fields = [float(x) for x in f.readline().split()[1:9]]
    return sum(fields), fields[3], fields[4], fields[0]


def proc_meminfo() -> float:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return 1 - float(info["MemAvailable"].split()[0]) / float(info["MemTotal"].split()[0])


@pytest.mark.integration
def test_real_node_exporter_agrees_with_proc_stat(prometheus_stack):
    window = 4.0
    settings = MonitorSettings(prometheus_url=prometheus_stack.url,
                               prometheus_rate_window_s=window)
    source = PrometheusSource(settings)
    # one busy core for the window: a load a user would see in the figure on an idle machine
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1)
        before, at_start = proc_stat(), time.time()
        time.sleep(window)
        after, at_end = proc_stat(), time.time()
        memory = proc_meminfo()
    finally:
        spinner.kill()
        spinner.wait()
    time.sleep(2 * prometheus_stack.scrape_s)  # the scrapes of the window's end are stored
    hosts, problems = source.read_hosts(at=at_end)
    assert problems == []
    h = next(h for h in hosts if h.host == "127.0.0.1")
    total, idle, iowait, user = (a - b for a, b in zip(after, before))
    # the same window seen two ways; Prometheus' holds the scrapes inside it (about 1 s less)
    assert at_end - at_start == pytest.approx(window, abs=0.5)
    assert h.cpu == pytest.approx(1 - idle / total, abs=0.15)
    assert h.cpu >= 0.5 / os.cpu_count()  # the spinner's core shows (half of it at least)
    print(f"cpu {h.cpu:.3f} vs /proc/stat {1 - idle / total:.3f}; io_wait {h.io_wait:.3f} vs "
          f"{iowait / total:.3f}; memory {h.memory:.3f} vs /proc/meminfo {memory:.3f}")
    assert h.io_wait == pytest.approx(iowait / total, abs=0.1)
    assert h.memory == pytest.approx(memory, abs=0.05)
    assert not h.stale and h.reason == ""
    # cpu is ~1 on a saturated machine whatever the window: the user share checks the window too
    rates = {r["metric"]["mode"]: float(r["value"][1]) for r in prometheus_stack.query(
        f'sum by (mode) (rate(node_cpu_seconds_total{{instance="{prometheus_stack.exporter_instance}"}}'
        f'[{window:g}s]))', at=at_end)}
    assert rates["user"] / sum(rates.values()) == pytest.approx(user / total, abs=0.1)


@pytest.mark.integration
def test_real_unknown_host_is_missing_and_the_decision_holds(prometheus_stack):
    settings = MonitorSettings(prometheus_url=prometheus_stack.url)
    collector = Collector([PrometheusSource(settings),
                           Servers("127.0.0.1,16020", "ghost.test,16020")], settings)
    collector.poll(time.time())
    snap = collector.snapshot(time.time())
    nodes = {n.id: n for n in snap.nodes}
    assert nodes["127.0.0.1,16020"].metrics is not None
    assert 0 <= nodes["127.0.0.1,16020"].metrics.cpu <= 1
    assert nodes["ghost.test,16020"].metrics is None
    assert "node ghost.test,16020: no system metrics for host 'ghost.test' in the latest sample" \
        in snap.missing
    ok, why = collector.complete_enough(snap)
    assert not ok and "ghost.test,16020" in why


@pytest.mark.integration
def test_real_query_errors_and_selector(prometheus_stack):
    # a regex Prometheus refuses: its HTTP 400 and words come back, no host is invented
    bad = MonitorSettings(prometheus_url=prometheus_stack.url, prometheus_selector='job=~"("')
    sample = PrometheusSource(bad).sample()
    assert sample.hosts == () and "HTTP 400" in sample.errors[0] and "bad_data" in sample.errors[0]
    other = MonitorSettings(prometheus_url=prometheus_stack.url, prometheus_selector='job="hbase"')
    sample = PrometheusSource(other).sample()
    assert sample.hosts == () and 'no node_exporter host' in sample.errors[0]
    assert '{job="hbase"}' in sample.errors[0]
    node = MonitorSettings(prometheus_url=prometheus_stack.url, prometheus_selector='job="node"')
    assert "127.0.0.1" in {h.host for h in PrometheusSource(node).sample().hosts}


@pytest.mark.integration
def test_real_exporter_that_stops_leaves_its_host_without_metrics(prometheus_stack):
    source = PrometheusSource(MonitorSettings(prometheus_url=prometheus_stack.url))
    doomed = host_of(prometheus_stack.doomed_instance)
    first = {h.host: h for h in source.sample().hosts}
    assert first[doomed].memory is not None and first[doomed].cpu is not None
    prometheus_stack.stop_doomed()
    # Prometheus marks its series stale at the first failed scrape: memory goes at once
    deadline = time.monotonic() + 15
    while True:
        now = {h.host: h for h in source.sample().hosts}
        if doomed not in now or now[doomed].memory is None:
            break
        assert time.monotonic() < deadline, "the stopped exporter's host still has memory"
        time.sleep(0.5)
    assert doomed not in now or "MemAvailable_bytes missing" in now[doomed].reason
    assert now["127.0.0.1"].memory is not None  # the other host is untouched
