"""A quota'd local HBase (its own cluster, not the session's, which runs without quotas for
speed): every process runs in its own control group with its kind's cap (a RegionServer a
0.15 core), a YCSB client in the clients' group, a stopped RegionServer's group is
gone, and the cluster's stop leaves none behind."""
from __future__ import annotations

import pytest

from deploy.local_hbase import cluster as local_hbase
from deploy.local_hbase import ycsb
from deploy.localproc.cgroups import group_of

pytestmark = pytest.mark.integration


@pytest.mark.timeout(600)
def test_every_process_runs_in_its_slice_and_leaves_no_group(tmp_path):
    c = local_hbase.LocalHBase(tmp_path / "hbase", session_timeout_ms=10_000)
    try:
        c.start(rs=2)
        base = f"/metctl/{c.groups.id}"
        for p in c.procs().values():
            assert group_of(p.pid) == f"{base}/{p.name}", p.name
            assert c.groups.cpu_cores(p.name) == pytest.approx(local_hbase.DEFAULT_SLICES[p.kind].cpu_cores)
        assert c.groups.cpu_cores("rs1") == pytest.approx(0.15)
        proc, t0 = ycsb.start(c, "C", "run", records=10, threads=1, seconds=2)
        try:
            assert group_of(proc.pid) == f"{base}/ycsb" and c.groups.cpu_cores("ycsb") == pytest.approx(1.0)
        finally:
            ycsb.stop(proc, t0, "C")
        c.stop_rs("rs2")
        assert "rs2" not in c.groups.names() and not c.groups.path("rs2").exists()
        assert "rs1" in c.groups.names()
    finally:
        c.stop()
    assert not any(d.exists() for d in c.groups.cluster_dirs())
