"""bench/bench_hbase_observation.py on the session's real HBase: it times every part of what an
executor tick observes and lists the same regions both ways (one hbase:meta scan, one
RegionLocator per table); without a cluster it says so in one line and exits 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from common.loading import load_file

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    return load_file("metctl_bench_hbase_observation", ROOT / "bench" / "bench_hbase_observation.py")


@pytest.mark.integration
def test_every_part_of_the_observation_is_timed(hbase_cluster, hbase_table, capsys):
    assert load_bench().main(["--workdir", str(hbase_cluster.workdir), "--rounds", "2"]) == 0
    out, err = capsys.readouterr()
    figures = json.loads(out)
    for part in ("cluster_metrics_all", "cluster_metrics_live", "locations_per_table",
                 "partitions_per_table", "servers", "partitions", "tick_observation"):
        assert figures[part]["p50"] > 0, part
    assert figures["regions"] >= 1 and figures["user_tables"] >= 1
    assert "differ" not in err


def test_without_a_cluster_it_exits_2(tmp_path, capsys):
    assert load_bench().main(["--workdir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"bench_hbase_observation: no cluster.json in {tmp_path}: start a cluster first")
