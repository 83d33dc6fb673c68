"""bench/measure_move_hbase.py without a cluster: what a 10-s window around a move reports, and
bad options refused before anything starts."""
from __future__ import annotations

import pytest

from bench import measure_move_hbase as bench


def test_a_window_reports_its_gets_p99_and_the_shares_over_100_ms_and_1_s():
    # 100 gets in the 10 s from t=50: 97 fast, one of 0.5 s, two of 2 s; others outside
    gets = [(50.0 + i * 0.1, 0.002, i) for i in range(97)] + [(55.0, 0.5, 1), (56.0, 2.0, 2), (57.0, 2.0, 3)]
    gets += [(49.9, 9.0, 4), (60.0, 9.0, 5)]
    w = bench.window_figures(gets, 50.0)
    assert w["gets"] == 100
    assert w["over_100ms"] == 0.03 and w["over_1s"] == 0.02
    assert 500 < w["p99_ms"] <= 2000
    assert bench.window_figures(gets, 100.0) == {"gets": 0}


@pytest.mark.parametrize("option", [["--regions", "1"], ["--update-share", "1.5"], ["--threads", "0"],
                                    ["--rate", "-1"], ["--moves", "0"]])
def test_bad_options_exit_2_before_any_cluster_starts(option, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(option)
    assert e.value.code == 2
    assert "need --regions >= 2" in capsys.readouterr().err
