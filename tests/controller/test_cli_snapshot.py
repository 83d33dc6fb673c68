"""`metctl snapshot` against a real gmond (fixture) and /jmx answers recorded from a real
RegionServer (loopback /jmx server): JSON that `metctl plan --snapshot` reads back, a table,
flags over config, one source alone, and clear errors for bad flags or no source."""
import json
from pathlib import Path

import pytest

from controller.cli import main
from controller.snapshot_io import read_snapshot, snapshot_from_data

DATA = Path(__file__).parents[1] / "monitor" / "data"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def recorded_server(jmx_server, rs):
    s = jmx_server()
    s.serve_recording(json.loads((DATA / f"jmx-{rs}-regions.json").read_text()),
                      json.loads((DATA / f"jmx-{rs}-server.json").read_text()))
    return s


def test_jmx_only_two_samples_json_reads_back_and_plans(jmx_server, capsys, tmp_path):
    a, b = recorded_server(jmx_server, "rs1"), recorded_server(jmx_server, "rs2")
    code, out, err = run(capsys, "snapshot", "--hbase-jmx", a.url, "--hbase-jmx", b.url,
                         "--samples", "2", "--interval", "0")
    assert code == 0, err
    data = json.loads(out)
    snap = snapshot_from_data(data, "stdout")
    assert len(snap.nodes) == 2 and snap.partitions
    assert all(p.reads == 0 for p in snap.partitions)  # recorded counters do not move
    assert all(n.metrics is None for n in snap.nodes)  # no Ganglia: no system metrics
    assert any("no system metrics" in m for m in snap.missing)
    assert "not complete enough" in err
    f = tmp_path / "snap.json"
    f.write_text(out)
    code, plan_out, plan_err = run(capsys, "plan", "--snapshot", str(f), "--format", "json")
    assert code == 0, plan_err
    assert read_snapshot(f).nodes == snap.nodes


def test_one_sample_says_rates_need_two(jmx_server, capsys):
    a = recorded_server(jmx_server, "rs1")
    code, out, err = run(capsys, "snapshot", "--hbase-jmx", a.url, "--samples", "1")
    assert code == 0
    assert "at least 2 samples" in err
    data = json.loads(out)
    assert data["partitions"] == []
    assert any("a rate needs two" in m for m in data["missing"])


@pytest.mark.integration
def test_ganglia_only_from_config_and_flag_override(ganglia, capsys, tmp_path):
    ganglia.inject("cli-a.test", dict(cpu_idle=40.0, cpu_wio=5.0, mem_total=1000.0, mem_free=100.0,
                                      mem_cached=100.0, mem_buffers=100.0))
    ganglia.wait_until(ganglia.gmond_endpoint, lambda d: b"cli-a.test" in d)
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text(f"cluster: demo\ndatastore: {{driver: sim}}\nmonitor:\n  ganglia_endpoints: ['127.0.0.1:1']\n")
    code, out, err = run(capsys, "snapshot", "--config", str(cfg), "--samples", "1")
    assert code == 1 and "no source answered" in err and "127.0.0.1:1" in err
    code, out, err = run(capsys, "snapshot", "--config", str(cfg), "--ganglia",
                         ganglia.gmond_endpoint, "--samples", "1")
    assert code == 0, err
    nodes = {n["id"]: n for n in json.loads(out)["nodes"]}
    assert nodes["cli-a.test"]["metrics"]["cpu"] == pytest.approx(0.6)
    assert nodes["cli-a.test"]["metrics"]["memory"] == pytest.approx(0.7)
    code, out, err = run(capsys, "snapshot", "--ganglia", ganglia.gmond_endpoint, "--samples", "1",
                         "--format", "table")
    assert code == 0 and "cli-a.test" in out and "60.0%" in out


def test_table_format_shows_missing(jmx_server, capsys):
    a = recorded_server(jmx_server, "rs1")
    code, out, err = run(capsys, "snapshot", "--hbase-jmx", a.url, "--samples", "2",
                         "--interval", "0", "--format", "table")
    assert code == 0
    assert "Partitions" in out and "Missing" in out and "not complete enough" in out


@pytest.mark.parametrize("argv,field", [
    (["--ganglia", "nohostport"], "--ganglia"),
    (["--hbase-jmx", "ftp://x"], "--hbase-jmx"),
    ([], "--ganglia / --prometheus / --hbase-jmx"),
    (["--prometheus", "ftp://prom:9090"], "--prometheus"),
    (["--ganglia", "g:8651", "--prometheus", "http://prom:9090"], "--prometheus"),
])
def test_bad_flags_exit_2_with_one_line(capsys, argv, field):
    code, out, err = run(capsys, "snapshot", *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0]


@pytest.mark.integration
def test_both_sources_hosts_matched_to_regionservers_complete(ganglia, jmx_server, capsys, tmp_path):
    a, b = recorded_server(jmx_server, "rs1"), recorded_server(jmx_server, "rs2")
    ids = [",".join(json.loads((DATA / f"jmx-{rs}-server.json").read_text())["beans"][0]
                    ["tag.serverName"].split(",")[:2]) for rs in ("rs1", "rs2")]
    names = {ids[0]: "snap-rs1.test", ids[1]: "snap-rs2.test"}
    for i, name in enumerate(names.values()):
        ganglia.inject(name, dict(cpu_idle=50.0 + i, cpu_wio=2.0, mem_total=1000.0, mem_free=500.0,
                                  mem_cached=100.0, mem_buffers=0.0))
    ganglia.wait_until(ganglia.gmond_endpoint, lambda d: all(n.encode() in d for n in names.values()))
    cfg = tmp_path / "metctl.yaml"
    # both recorded servers say host "localhost": the machine's CPU (Ganglia) is what is tested
    cfg.write_text("cluster: demo\ndatastore: {driver: sim}\nmonitor:\n  hbase_process_cpu: 'off'\n  host_name_map:\n" +
                   "".join(f"    '{k}': {v}\n" for k, v in names.items()))
    code, out, err = run(capsys, "snapshot", "--config", str(cfg), "--ganglia", ganglia.gmond_endpoint,
                         "--hbase-jmx", a.url, "--hbase-jmx", b.url, "--samples", "2",
                         "--interval", "0.2")
    assert code == 0, err
    snap = snapshot_from_data(json.loads(out), "stdout")
    nodes = {n.id: n for n in snap.nodes}
    assert set(nodes) == set(ids)
    assert nodes[ids[0]].metrics.cpu == pytest.approx(0.5)
    assert nodes[ids[1]].metrics.cpu == pytest.approx(0.49)
    assert {p.node for p in snap.partitions} == set(ids)
    assert "complete enough to decide on" in err and "not complete" not in err


@pytest.mark.integration
def test_prometheus_instead_of_ganglia_hosts_matched_to_regionservers(prometheus_stack, jmx_server,
                                                                     capsys, tmp_path):
    """Real Prometheus + node_exporter for the machines, recorded /jmx for the RegionServers;
    a config naming Ganglia is overridden by --prometheus."""
    a, b = recorded_server(jmx_server, "rs1"), recorded_server(jmx_server, "rs2")
    ids = [",".join(json.loads((DATA / f"jmx-{rs}-server.json").read_text())["beans"][0]
                    ["tag.serverName"].split(",")[:2]) for rs in ("rs1", "rs2")]
    cfg = tmp_path / "metctl.yaml"
    # the exporter's instance is 127.0.0.1:PORT; the recorded servers call themselves localhost
    cfg.write_text("cluster: demo\ndatastore: {driver: sim}\nmonitor:\n  ganglia_endpoints: ['127.0.0.1:1']\n  hbase_process_cpu: 'off'\n"
                   "  host_name_map:\n" + "".join(f"    '{k}': 127.0.0.1\n" for k in ids))
    code, out, err = run(capsys, "snapshot", "--config", str(cfg), "--prometheus",
                         prometheus_stack.url, "--hbase-jmx", a.url, "--hbase-jmx", b.url,
                         "--samples", "2", "--interval", "0.2")
    assert code == 0, err
    snap = snapshot_from_data(json.loads(out), "stdout")
    nodes = {n.id: n for n in snap.nodes}
    assert set(nodes) == set(ids)
    assert all(n.metrics is not None and 0 <= n.metrics.memory <= 1 for n in nodes.values())
    assert "complete enough to decide on" in err and "not complete" not in err


def test_no_source_answering_is_said_once_and_no_empty_snapshot_is_printed(tmp_path, capsys):
    """Issue 24, friction: `snapshot` printed each source's error three times (a line a sample,
    the verdict, the error) with urllib3's nested reprs, and still wrote an empty snapshot to
    stdout. Now: nothing on stdout, one line naming each source with the reason in words."""
    from tests.fixtures.ganglia import free_port

    ganglia, jmx = free_port(), free_port()
    code = main(["snapshot", "--ganglia", f"127.0.0.1:{ganglia}", "--hbase-jmx",
                 f"http://127.0.0.1:{jmx}", "--samples", "2", "--interval", "0.1"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0] == (f"metctl: no source answered: ganglia 127.0.0.1:{ganglia}: cannot connect: "
                        f"Connection refused; hbase http://127.0.0.1:{jmx}: /jmx: cannot connect: "
                        "Connection refused")
