"""bench/scale_hbase.py without a cluster: the report says which RegionServer threads' CPU per
operation grows with the cluster's size, summed over servers and read from older reports."""
from __future__ import annotations

import pytest

from bench import scale_hbase as bench


def test_thread_cores_add_every_server_and_drop_threads_that_spent_nothing():
    before = [{"handler": 10.0, "GC Thread": 1.0, "idle": 5.0}, {"handler": 3.0}]
    after = [{"handler": 16.0, "GC Thread": 4.0, "idle": 5.0}, {"handler": 9.0, "GC Thread": 3.0}]
    cores = bench.thread_cores(before, after, window_s=60.0)
    assert cores == {"handler": pytest.approx(0.2), "GC Thread": pytest.approx(0.1)}
    assert list(cores) == ["handler", "GC Thread"]   # largest first


def test_ms_per_operation_by_kind_is_the_median_of_the_runs_that_read_threads():
    runs = [{"ops_per_s": 1000.0, "rs_thread_cores": {"handler": 0.10, "GC Thread": 0.02}},
            {"ops_per_s": 500.0, "rs_thread_cores": {"handler": 0.10}},
            {"ops_per_s": 800.0, "rs_thread_cores": {"handler": 0.08, "GC Thread": 0.04}},
            {"ops_per_s": 900.0}]                      # a run of an older report
    per_op = bench.thread_ms_per_op(runs)
    assert per_op["handler"] == pytest.approx(0.1)     # 0.1, 0.2, 0.1 ms
    assert per_op["GC Thread"] == pytest.approx(0.02)  # 0.02, 0 (none read), 0.05 ms
    assert bench.thread_ms_per_op([{"ops_per_s": 900.0}]) == {}


@pytest.mark.parametrize("args", [["--busy-beside-cores", "0"], ["--busy-beside-cores", "0.2", "--no-quota"],
                                  ["--sizes", "0"], ["--load-shares", "0.5,1.5"], ["--load-shares", "half"]])
def test_a_bad_argument_is_one_line_and_exit_2_before_anything_starts(args, capsys, tmp_path):
    assert bench.main([*args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scale-hbase: --") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_the_load_curve_gathers_each_share_over_the_repetitions():
    def point(share, ops, p99, read, throttled):
        return {"share": share, "target_ops_s": round(share * 1400.0, 1), "ops_per_s": ops, "p99_ms": p99, "latency_ms": {"READ": {"p99": read},
                                                                              "UPDATE": {"p99": p99}},
                "throttled_share": throttled, "stopped_share": {k: None if v is None else v / 10 for k, v in throttled.items()}}
    # the first point read both RegionServers' CPU: 0.14 core for 700 ops/s is 0.2 ms an operation
    runs = [{"load_curve": [{**point(0.5, 700.0, 40.0, 20.0, {"rs1": 0.1, "rs2": 0.3}),
                             "cpu_cores": {"rs1": 0.06, "rs2": 0.08}}, point(0.9, 1200.0, 90.0, 80.0, {})]},
            {"load_curve": [point(0.5, 690.0, 45.0, 25.0, {"rs1": 0.2, "rs2": None})]},
            {}]  # a run without the curve (an older report, or none asked)
    curve = bench.load_curve(runs)
    assert curve["0.5"] == {"target_ops_s": [700.0, 700.0], "ops_per_s": [700.0, 690.0], "p99_ms": [40.0, 45.0], "read_p99_ms": [20.0, 25.0],
                            "update_p99_ms": [40.0, 45.0], "throttled_share": [0.2, 0.2],
                            "stopped_share": [0.02, 0.02], "rs_cpu_ms_per_op": [0.2, None]}
    assert curve["0.9"]["throttled_share"] == [None]  # no RegionServer's cpu.stat read (no quota)


def test_quota_stops_are_the_share_of_periods_and_of_time_a_regionserver_was_stopped():
    before = {"rs1": {"periods": 100, "throttled": 10, "throttled_us": 50_000}, "rs2": {}}
    after = {"rs1": {"periods": 700, "throttled": 310, "throttled_us": 6_050_000},
             "rs2": {"periods": 600, "throttled": 0, "throttled_us": 0}}
    stops = bench.quota_stops(before, after)
    # rs1: 300 of 600 periods, 6 s stopped of 60 s, 20 ms a stop; rs2 never stopped
    assert stops == {"throttled_share": {"rs1": 0.5, "rs2": 0.0}, "stopped_share": {"rs1": 0.1, "rs2": 0.0},
                     "stop_ms": {"rs1": 20.0, "rs2": None}}


def test_resuming_a_report_made_with_other_load_shares_says_which_before_anything_starts(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text('{"workload": "A", "distribution": "uniform", "records": 24000, "regions": 24, '
                                      '"measure_s": 60, "quota": true, "runs": []}')  # made without a load curve
    assert bench.main(["--resume", "--load-shares", "0.5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--resume" in err and "load_shares" in err and "0.5" in err and err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]  # nothing built, fetched or run
