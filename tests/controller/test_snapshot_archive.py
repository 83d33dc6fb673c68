"""Keeping the snapshots metctl takes: a bounded directory of snapshot files that `metctl plan`
reads back; `metctl snapshot --every` and `metctl run --observe` fill it."""
from __future__ import annotations

from datetime import timedelta

import pytest

from controller.cli import main
from controller.snapshot_archive import SnapshotArchive
from controller.snapshot_io import read_snapshot
from tests.controller.test_cli_snapshot import recorded_server
from tests.fixtures.snapshots import make_snapshot, partition


def test_the_archive_keeps_the_newest_and_each_file_reads_back(tmp_path):
    archive = SnapshotArchive(tmp_path / "snaps", keep=3)
    base = make_snapshot([0.5, 0.3], [partition("p", "rs1", reads=10)])
    for i in range(5):
        archive.add(type(base)(base.taken_at + timedelta(seconds=60 * i), base.nodes, base.partitions, ()))
    files = archive.files()
    assert len(files) == 3
    times = [read_snapshot(f).taken_at for f in files]
    assert times == [base.taken_at + timedelta(seconds=60 * i) for i in (2, 3, 4)]
    assert not list((tmp_path / "snaps").glob(".*tmp"))  # nothing half-written left


def test_snapshot_every_keeps_a_bounded_series(jmx_server, capsys, tmp_path):
    a = recorded_server(jmx_server, "rs1")
    keep = tmp_path / "kept"
    assert main(["snapshot", "--hbase-jmx", a.url, "--samples", "1", "--every", "0.05", "--count", "4",
                 "--keep-dir", str(keep), "--keep-snapshots", "3"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.count("snapshot ") >= 4
    files = sorted(keep.glob("snapshot-*.json"))
    assert len(files) == 3
    snaps = [read_snapshot(f) for f in files]
    assert all(s.partitions for s in snaps) and snaps[0].taken_at < snaps[-1].taken_at


@pytest.mark.parametrize("argv,field", [(["--count", "2"], "--count"), (["--every", "-1"], "--every"),
                                        (["--every", "1", "--keep-snapshots", "0"], "--keep-snapshots")])
def test_bad_series_flags_exit_2_naming_the_flag(capsys, argv, field):
    assert main(["snapshot", "--hbase-jmx", "http://127.0.0.1:1", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0]


def test_run_observe_keeps_the_decision_snapshots(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--once", "--observe", "--api", "off", "--snapshots", str(tmp_path / "obs")]) == 0
    capsys.readouterr()
    files = sorted((tmp_path / "obs").glob("snapshot-*.json"))
    assert len(files) == 1 and read_snapshot(files[0]).nodes
