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
                                  ["--sizes", "0"]])
def test_a_bad_argument_is_one_line_and_exit_2_before_anything_starts(args, capsys, tmp_path):
    assert bench.main([*args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scale-hbase: --") and err.count("\n") == 1
    assert not (tmp_path / "out").exists()
