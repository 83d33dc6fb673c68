"""bench/bench_hbase_observation.py on the session's real HBase: it times every part of what an
executor tick observes and lists the same regions both ways (one hbase:meta scan, one
RegionLocator per table)."""
from __future__ import annotations

import json

import pytest

from bench import bench_hbase_observation as bench

pytestmark = pytest.mark.integration


def test_every_part_of_the_observation_is_timed(hbase_cluster, hbase_table, capsys):
    assert bench.main(["--workdir", str(hbase_cluster.workdir), "--rounds", "2"]) == 0
    out, err = capsys.readouterr()
    figures = json.loads(out)
    for part in ("cluster_metrics_all", "cluster_metrics_live", "locations_per_table",
                 "partitions_per_table", "servers", "partitions", "tick_observation"):
        assert figures[part]["p50"] > 0, part
    assert figures["regions"] >= 1 and figures["user_tables"] >= 1
    assert "differ" not in err
