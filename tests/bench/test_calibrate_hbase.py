"""bench/calibrate_hbase.py's reading of YCSB's summary (the measurement on a real HBase is
tests/integration/test_calibrate_hbase.py)."""
from __future__ import annotations

from bench import calibrate_hbase as bench


def test_latency_line_is_read_for_the_operation_asked():
    out = "[READ], Operations, 10\n[READ], AverageLatency(us), 612.5\n[UPDATE], AverageLatency(us), 900\n"
    assert bench.mean_latency_us(out, "READ") == 612.5
    assert bench.mean_latency_us(out, "UPDATE") == 900
    assert bench.mean_latency_us(out, "SCAN") is None


def _report(**extra):
    figures = {"get_cpu_ms": 0.18, "put_cpu_ms": 0.3, "scan_row_cpu_ms": 0.004, "client_op_cpu_ms": 0.11}
    return {"hbase": "2.6.4", "records": 20000, "cores": 2,
            "figures": {k: {"measured": v, "setting": None} for k, v in figures.items()}, **extra}


def test_the_calibration_file_it_writes_is_one_a_config_loads(tmp_path):
    """`make calibrate-hbase` writes out/calibrate-hbase/calibration.yaml: `simulator.calibration`
    reads it, quota'd (one core at the slice's capacity) or not (this machine's cores)."""
    from controller.config import load_config

    node = bench.quota_node(0.5, get_ms=0.18, put_ms=0.3, row_ms=0.004, client_ms=0.11,
                            client_row_ms=0.005, get_lat_ms=0.6, put_lat_ms=0.6,
                            saturated_ops_s={"C": 2700.0}, heap_mb=1024)
    for name, report, cores, get_ms in (("quota", _report(quota_node=node), 1, 0.36),
                                        ("whole", _report(), 2, 0.18)):
        cal = tmp_path / f"{name}.yaml"
        cal.write_text(bench.calibration_file(report))
        cfg = tmp_path / f"{name}-config.yaml"
        cfg.write_text(f"cluster: demo\ndatastore: {{driver: sim}}\nsimulator: {{calibration: {cal.name}}}\n")
        sim = load_config(cfg).simulator
        assert (sim.hardware.cores, sim.costs.get_cpu_ms) == (cores, get_ms), name
        assert sim.costs.put_cpu_ms == (0.6 if name == "quota" else 0.3)
        # a quota'd node stops when its quota of the kernel's 100-ms period is spent (half a core: half of it)
        assert (sim.hardware.cpu_quota_period_ms, sim.hardware.cpu_quota_run_share) == (
            (100.0, 0.5) if name == "quota" else (0.0, 1.0)), name
        # its CPU at light load as the local cluster measured it, a wake-up over the quota like every
        # cost, and its periods' dispersion and stops' length as fitted to cpu.stat there
        assert (sim.hardware.cpu_wakeup_ms, sim.hardware.cpu_wakeup_window_ms, sim.hardware.cpu_quota_dispersion,
                sim.hardware.cpu_quota_stop_per_excess) == (
            (round(0.773 / 0.5, 4), 5.6, 0.024, 2.63) if name == "quota" else (0.0, 0.0, 0.0, 0.0)), name


def test_the_calibration_file_carries_the_cost_growth_a_scale_report_measured(tmp_path):
    """With --cost-growth-from, a simulated cluster of several calibrated nodes pays what
    RegionServers sharing the machine pay; the quota'd node's own settings stay as measured."""
    from controller.config import load_config

    node = bench.quota_node(0.5, get_ms=0.18, put_ms=0.3, row_ms=0.004, client_ms=0.11,
                            client_row_ms=0.005, get_lat_ms=0.6, put_lat_ms=0.6,
                            saturated_ops_s={"C": 2700.0}, heap_mb=1024)
    growth = {"g": 0.381, "server_cpu_ms_per_op": {1: 0.0975, 4: 0.1491}, "source": "scale.json"}
    report = _report(quota_node=node, cost_growth=growth)
    cal = tmp_path / "cal.yaml"
    cal.write_text(bench.calibration_file(report))
    assert "cost growth 0.381 from scale.json" in cal.read_text()
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"cluster: demo\ndatastore: {{driver: sim}}\nsimulator: {{calibration: {cal.name}}}\n")
    sim = load_config(cfg).simulator
    assert sim.hardware.shared_machine_cost_growth == 0.381
    assert (sim.hardware.cores, sim.costs.get_cpu_ms) == (1, 0.36)
    assert "shared_machine_cost_growth" not in node["simulator"]["hardware"]  # the report's node untouched


def test_a_cost_growth_file_that_cannot_give_it_stops_before_any_cluster_starts(tmp_path, capsys):
    missing = tmp_path / "none.json"
    code = bench.main(["--cost-growth-from", str(missing), "--workdir", str(tmp_path / "w"),
                       "--out", str(tmp_path / "out" / "report.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--cost-growth-from" in err and str(missing) in err and "cannot be read" in err
    assert not (tmp_path / "w").exists() and not (tmp_path / "out").exists()
