"""Backtest: kept snapshots become an open-loop scenario whose rate tables follow what the
cluster was asked for. Data: a series recorded from the local HBase under YCSB (C reading at
~250 ops/s, E scanning from the fifth snapshot on; tests/integration/test_backtest_hbase.py
records it, METCTL_KEEP_BACKTEST keeps a copy)."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

from common.errors import BadInput
from controller.backtest import HOT_DATA, HOT_OPS, fit_hotspot, load_series, scenario_from_snapshots
from simulator.capacity import hotspot_shares

RECORDED = Path(__file__).parent / "data" / "backtest-hbase"


def test_rate_tables_follow_the_recorded_reads_and_scans():
    snaps = load_series(RECORDED)
    data = scenario_from_snapshots(snaps, "replay")
    tenants = {w["name"]: w for w in data["workloads"]}
    assert set(tenants) == {"ycsb_c-reads", "ycsb_e-scans", "ycsb_e-writes"}
    t0 = snaps[0].taken_at
    for s, (t, r) in zip(snaps, tenants["ycsb_c-reads"]["rate"]):
        assert t == pytest.approx((s.taken_at - t0).total_seconds(), abs=1e-3)
        assert r == pytest.approx(sum(p.reads for p in s.partitions if p.table == "ycsb_c"), abs=1e-3)
    scans = [r for _, r in tenants["ycsb_e-scans"]["rate"]]
    assert scans[:4] == [0, 0, 0, 0] and min(scans[4:]) > 5  # E joined half-way
    assert data["initial_nodes"] == 2 and tenants["ycsb_c-reads"]["regions"] == 4
    # YCSB ran with hotspotdatafraction 0.4 and hotspotopnfraction 0.5 (deploy/local_hbase/ycsb.py):
    # the fit over C's regions finds them again
    assert (tenants["ycsb_c-reads"]["hot_data_fraction"], tenants["ycsb_c-reads"]["hot_ops_fraction"]) == (0.4, 0.5)
    assert data["duration_s"] > tenants["ycsb_c-reads"]["rate"][-1][0]


@given(st.integers(2, 12), st.sampled_from(HOT_DATA), st.sampled_from(HOT_OPS))
def test_the_hotspot_fit_reproduces_the_shares_it_was_given(n, hot_data, hot_ops):
    shares = hotspot_shares(n, hot_data, hot_ops)[0]
    got = hotspot_shares(n, *fit_hotspot(shares))[0]
    assert sorted(got) == pytest.approx(sorted(shares), abs=1e-9)


def test_fewer_than_two_snapshots_is_bad_input_naming_the_directory(tmp_path):
    one = tmp_path / "one"
    one.mkdir()
    first = sorted(RECORDED.glob("snapshot-*.json"))[0]
    (one / first.name).write_text(first.read_text())
    with pytest.raises(BadInput, match="at least 2 snapshots") as e:
        load_series(one)
    assert str(one) in str(e.value)
    with pytest.raises(BadInput, match="a directory of kept snapshots"):
        load_series(tmp_path / "absent")


def edited_series(directory: Path, edit: Callable[[int, dict[str, Any]], None]) -> Path:
    """The recorded series copied to `directory`, each snapshot document passed through
    `edit(index, doc)` on the way (what a series with a source that did not answer holds)."""
    for i, f in enumerate(sorted(RECORDED.glob("snapshot-*.json"))):
        doc = json.loads(f.read_text())
        edit(i, doc)
        (directory / f.name).write_text(json.dumps(doc))
    return directory


def test_a_snapshot_that_read_no_partition_is_a_gap_not_a_table_asked_for_nothing(tmp_path):
    # the first snapshot of a live series read one /jmx sample where a rate needs two: it
    # holds no partitions, and its table was replayed as 0 requests/s (CI, the backtest test)
    def drop_all(i: int, doc: dict[str, Any]) -> None:
        if i in (0, 3):
            doc["partitions"] = []

    files = sorted(RECORDED.glob("snapshot-*.json"))
    snaps = load_series(edited_series(tmp_path, drop_all))
    reads = {w["name"]: w for w in scenario_from_snapshots(snaps, "gaps")["workloads"]}["ycsb_c-reads"]["rate"]
    kept = [s for i, s in enumerate(load_series(RECORDED)) if i not in (0, 3)]
    t0 = snaps[0].taken_at
    assert len(reads) == len(files) - 2 and min(r for _, r in reads) > 50
    assert reads[0][0] == 0.0  # the first reading stands from the start
    for s, (t, r) in zip(kept[1:], reads[1:]):
        assert t == pytest.approx((s.taken_at - t0).total_seconds(), abs=1e-3)
        assert r == pytest.approx(sum(p.reads for p in s.partitions if p.table == "ycsb_c"), abs=1e-3)


def test_a_first_snapshot_that_read_some_regions_does_not_set_the_table_s_size(tmp_path):
    # CI: one RegionServer's /jmx did not answer in time for the first snapshot, which held 2
    # of ycsb_c's 4 regions; the replay's table had 2 regions
    def one_server_first(i: int, doc: dict[str, Any]) -> None:
        if i == 0:
            servers = sorted({p["node"] for p in doc["partitions"]})
            doc["partitions"] = [p for p in doc["partitions"] if p["node"] == servers[0]]

    partial = edited_series(tmp_path, one_server_first)
    whole = {w["name"]: w for w in scenario_from_snapshots(load_series(RECORDED), "whole")["workloads"]}
    part = {w["name"]: w for w in scenario_from_snapshots(load_series(partial), "part")["workloads"]}
    assert part["ycsb_c-reads"]["regions"] == whole["ycsb_c-reads"]["regions"] == 4
    assert part["ycsb_c-reads"]["records"] == whole["ycsb_c-reads"]["records"]
