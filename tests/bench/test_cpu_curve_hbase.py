"""bench/cpu_curve_hbase.py without a cluster: its rows say how far a RegionServer's CPU is from
proportional to its load, and a bad --fractions is one line, exit 2, before anything starts."""
from __future__ import annotations

import pytest

from bench import cpu_curve_hbase as bench


def _run(ops_s: float, cpu_s: float, window_s: float = 10.0, target: float | None = None) -> dict:
    ops = ops_s * window_s
    return {"ops_s": ops_s, "window_s": window_s, "server_cpu_s": cpu_s,
            "server_cpu_ms_per_op": cpu_s * 1000 / ops, "mean_latency_us": 2000.0,
            **({"target_ops_s": target} if target else {})}


def test_rows_compare_each_rate_with_the_saturated_one():
    saturated = _run(1000, 1.5)                    # 0.15 core, 0.15 ms a get
    half = _run(500, 1.5, target=500)              # the whole slice at half the rate
    rows = bench.curve_rows(saturated, [half], slice_cores=0.15)
    assert [r["fraction_of_saturated"] for r in rows] == [0.5, 1.0]
    assert rows[0]["share_of_slice"] == 1.0 and rows[0]["per_get_vs_saturated"] == 2.0
    assert rows[1]["per_get_vs_saturated"] == 1.0 and rows[0]["target_ops_s"] == 500


@pytest.mark.parametrize("fractions", ["0", "1.5", "half", ""])
def test_bad_fractions_exit_2_naming_the_option(fractions, capsys):
    assert bench.main(["--fractions", fractions]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--fractions" in err[0]
