"""bench/bench_hbase_observation.py without a cluster says so in one line and exits 2 (on the
real HBase: tests/integration/test_bench_hbase_observation.py)."""
from __future__ import annotations

from bench import bench_hbase_observation as bench


def test_without_a_cluster_it_exits_2(tmp_path, capsys):
    assert bench.main(["--workdir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"bench_hbase_observation: no cluster.json in {tmp_path}: start a cluster first")
