"""Backtest on real traffic: `metctl snapshot --every` keeps snapshots of the local HBase while
YCSB tenants run (reads all along, scans joining half-way); `metctl scenario from-snapshots`
turns them into an open-loop scenario whose rate tables follow what was recorded, and
`metctl simulate` prices a policy on it."""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
import yaml

from controller.cli import main
from controller.snapshot_io import read_snapshot
from tests.fixtures.hbase import YCSB_RECORDS, spread_regions
from tests.fixtures.poll import poll

STATUS = re.compile(r"\d+ sec: [1-9]\d* operations")


def serving(client) -> None:
    """Wait until a YCSB client's status lines count operations (its JVM takes a while)."""
    proc, _ = client
    poll(lambda: bool(STATUS.search(Path(f"{proc.ycsb_stem}.err").read_text(errors="replace"))), 120,
         "the YCSB client reports operations", every_s=0.5)

pytestmark = pytest.mark.integration


def record_series(cluster, driver, ycsb, directory: Path) -> None:
    """Four snapshots with C reading at 200 ops/s, then four more with E scanning beside it."""
    spread_regions(driver)  # an empty RegionServer has no per-region bean to read
    urls = [p.info_url for p in cluster.region_servers() if cluster.running(p.name)]
    flags = [f for u in urls for f in ("--hbase-jmx", u)]
    series = ["--samples", "2", "--interval", "2", "--every", "4", "--count", "4", "--keep-dir", str(directory)]
    reads = ycsb.start(cluster, "C", "run", records=YCSB_RECORDS, threads=2, seconds=240, target_ops=200)
    try:
        serving(reads)
        assert main(["snapshot", *flags, *series]) == 0
        scans = ycsb.start(cluster, "E", "run", records=YCSB_RECORDS, threads=1, seconds=180, target_ops=40)
        try:
            serving(scans)
            time.sleep(2)
            assert main(["snapshot", *flags, *series]) == 0
        finally:
            ycsb.stop(*scans, "E")
    finally:
        ycsb.stop(*reads, "C")
    if os.environ.get("METCTL_KEEP_BACKTEST"):  # to refresh the recorded copy the unit tests use
        shutil.copytree(directory, os.environ["METCTL_KEEP_BACKTEST"], dirs_exist_ok=True)


def test_recorded_traffic_becomes_a_scenario_that_replays_it(hbase_cluster, hbase_driver, ycsb, tmp_path, capsys):
    kept = tmp_path / "kept"
    record_series(hbase_cluster, hbase_driver, ycsb, kept)
    snaps = [read_snapshot(f) for f in sorted(kept.glob("snapshot-*.json"))]
    assert len(snaps) == 8
    out = tmp_path / "replay.yaml"
    assert main(["scenario", "from-snapshots", str(kept), "--out", str(out)]) == 0
    data = yaml.safe_load(out.read_text())
    tenants = {w["name"]: w for w in data["workloads"]}
    reads = tenants["ycsb_c-reads"]
    # a snapshot whose /jmx reads gave no rate (one sample of two answered in time) holds no
    # partition: a gap in the replay, not a table asked for nothing (controller/backtest.py)
    read = [i for i, s in enumerate(snaps) if any(p.table == "ycsb_c" for p in s.partitions)]
    assert len(read) >= 6
    recorded = [sum(p.reads for p in snaps[i].partitions if p.table == "ycsb_c") for i in read]
    assert [r for _, r in reads["rate"]] == pytest.approx(recorded, rel=1e-3, abs=1e-3)
    assert min(recorded) > 50  # YCSB C read all along at ~200 ops/s
    scans = dict(zip(read, (r for _, r in tenants["ycsb_e-scans"]["rate"])))
    # E joined half-way
    assert max(r for i, r in scans.items() if i < 4) == 0 and min(r for i, r in scans.items() if i >= 5) > 5
    assert reads["regions"] == 4 and data["initial_nodes"] == 2
    capsys.readouterr()
    sim_out = tmp_path / "sim"
    assert main(["simulate", "--scenario", str(out), "--policy", "static", "--no-plots", "--out", str(sim_out)]) == 0
    summary = json.loads((sim_out / "summary.json").read_text())
    # the replay offers what the cluster was asked for: the recorded requests over its span
    span = [t for t, _ in reads["rate"]]
    asked = sum((a + b) / 2 * (t1 - t0) for a, b, t0, t1 in zip(recorded, recorded[1:], span, span[1:]))
    c_offered = summary["ops_offered_by_workload"]["ycsb_c-reads"]
    assert c_offered == pytest.approx(asked + recorded[-1] * (summary["duration_s"] - span[-1]), rel=0.15)
    assert summary["ops_offered"] > 0 and summary["slo_attainment"] > 0
