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


# HBase 2.6.4's lines (the bench sets PrefetchExecutor to DEBUG): the open, each file's request
# with its delay, its end (the whole path when cancelled, the file name when completed)
LOG = """\
2026-11-28 09:53:22,100 DEBUG [StoreFileOpener-x-f-1] hfile.PrefetchExecutor: Prefetch requested for file:/r/data/default/movebench/{other}/f/old, delay=900 ms
2026-11-28 09:53:23,289 DEBUG [StoreFileOpener-x-f-1] hfile.PrefetchExecutor: Prefetch requested for file:/r/data/default/movebench/{enc}/f/small, delay=907 ms
2026-11-28 09:53:23,290 DEBUG [StoreFileOpener-x-f-1] hfile.PrefetchExecutor: Prefetch requested for file:/r/data/default/movebench/{enc}/f/big, delay=900 ms
2026-11-28 09:53:23,295 INFO  [RS_OPEN_REGION-regionserver/localhost:1-0] regionserver.HRegion: Opened {enc}; next sequenceid=48; SteppingSplitPolicy
java.lang.Exception: a stack trace line
2026-11-28 09:53:24,197 DEBUG [hfile-prefetch-1] hfile.PrefetchExecutor: Prefetch completed for small
2026-11-28 09:53:24,303 DEBUG [hfile-prefetch-2] hfile.PrefetchExecutor: Prefetch completed for big
2026-11-28 09:53:25,000 DEBUG [hfile-prefetch-2] hfile.PrefetchExecutor: Prefetch completed for old
"""
ENC, OTHER = "4070631c95a32a57f00c75f858bf9a10", "c4fd71348d2f558b5d3badab87bdf837"


def _t(stamp: str) -> float:
    from datetime import datetime
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp()


def test_the_target_log_gives_the_open_and_the_prefetch_of_the_moved_regions_files_only():
    ev = bench.log_events(LOG.format(enc=ENC, other=OTHER), ENC, _t("2026-11-28 09:53:23,000"))
    assert ev["opened"] == _t("2026-11-28 09:53:23,295")
    assert set(ev["requested"]) == {"small", "big"} and ev["requested"]["big"][1] == 0.9
    assert ev["ended"]["big"] == (_t("2026-11-28 09:53:24,303"), "completed")
    pf = bench.prefetch_figures(ev, 27.75)
    assert pf["files"] == pf["completed"] == 2 and pf["cancelled"] == 0
    assert pf["prefetch_s"] == 1.008  # 09:53:23,295 .. 09:53:24,303
    assert pf["delay_s"] == 0.895 and pf["prefetch_read_s"] == 0.113  # due 24,190 (23,290 + 900 ms)
    assert pf["mb_s"] == round(27.75 / 0.113, 1)


def test_an_unfinished_prefetch_gives_no_duration():
    text = "\n".join(line for line in LOG.format(enc=ENC, other=OTHER).splitlines() if "completed for big" not in line)
    pf = bench.prefetch_figures(bench.log_events(text, ENC, 0.0), 27.75)
    assert pf["completed"] == 1 and "prefetch_s" not in pf


def test_a_series_is_interpolated_and_clamped_at_its_ends():
    series = [(0.0, 0.0, 10.0), (1.0, 2.0, 10.0), (3.0, 2.0, 30.0)]
    assert bench.at(series, 0.5, 1) == 1.0 and bench.at(series, 2.0, 2) == 20.0
    assert bench.at(series, -1, 1) == 0.0 and bench.at(series, 9, 2) == 30.0
    assert bench.at([], 1.0, 1) is None


def test_cpu_over_a_window_less_the_base_rate_and_the_throttled_share():
    # t, stat s, prefetch s, periods, throttled, schedstat s, gc s: 0.05 core, then 0.15 from t=10
    series = [(float(t), 0.05 * t, 0.0, 10 * t, 0, 0.05 * t, 0.0) for t in range(11)]
    series += [(10.0 + t, 0.5 + 0.15 * t, 0.0, 100 + 10 * t, 10 * t, 0.5 + 0.15 * t, 0.0) for t in range(1, 5)]
    w = bench.cpu_figures(series, 10.0, 14.0, (0.0, 10.0))
    assert w["cores"] == 0.15 and w["base_cores"] == 0.05
    assert w["cpu_s_above_base"] == 0.4 and w["throttled_share"] == 1.0


def test_the_moved_regions_gets_after_its_open_and_the_cache_deltas():
    gets = [(100.0 + 0.01 * i, 0.002, 5) for i in range(1000)] + [(100.5, 0.5, 50)]  # row 50: another region
    jmx = [(100.0, 10, 0, 1e6, 1, 1), (110.0, 110, 50, 29e6, 401, 400)]
    w = bench.after_figures(gets, (0, 10), 100.0, 10.0, jmx, [], (90.0, 100.0))
    assert w["gets"] == 1000 and w["mean_ms"] == 2.0 and w["p99_ms"] == 2.0
    assert w["blockCacheMissCount"] == 100 and w["blockCacheHitCount"] == 50 and w["blockCacheSize_mb"] == 28.0


def test_a_kept_workdir_must_be_empty(tmp_path, capsys):
    (tmp_path / "x").write_text("")
    with pytest.raises(SystemExit) as e:
        bench.main(["--keep-workdir", str(tmp_path)])
    assert e.value.code == 2 and "not empty" in capsys.readouterr().err
