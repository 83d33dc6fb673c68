"""A local node is a fixed slice of the machine (deploy/localproc/cgroups.py), on this machine's
real control groups with small stand-in processes (no JVM): a process started with a slice
runs in its own group with the cap set and is throttled by it, its group disappears when it
stops, groups a killed run left behind are removed at the next start, and where groups cannot
be made the refusal is one line with the fix, before anything starts."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from deploy.localproc import LocalCluster, cpu
from deploy.localproc.cgroups import (
    PREFIX, BadSlice, ControlGroups, Hierarchy, QuotaUnavailable, Slice, detect, group_of, load_slices,
)
from tests.fixtures.poll import poll

ROOT = Path(__file__).resolve().parents[2]


class Sleepers(LocalCluster):
    """A local cluster whose nodes are Python processes that sleep (or spin)."""

    default_slices = {"node": Slice(cpu_cores=0.1, cpu_shares=1024), "cluster": Slice(cpu_shares=4096)}

    def start_node(self, name: str, busy: bool = False) -> int:
        conf = self.workdir / "conf" / name
        conf.mkdir(parents=True, exist_ok=True)
        self._record(name, {"conf_dir": str(conf), "pid": None})
        body = "while True: pass" if busy else "import time; time.sleep(600)"
        return self.spawn_process(name, [sys.executable, "-c", body, str(conf)], str(conf),
                                  str(self.workdir / f"{name}.log"), kind="node")

    def stop_node(self, name: str) -> None:
        rec = self._read()["procs"][name]
        self.stop_process(name, rec["pid"], rec["conf_dir"], timeout_s=5)

    def stop(self) -> None:
        for name in list(self._read()["procs"]):
            self.stop_node(name)
        self.release_all()


@pytest.fixture
def cluster(tmp_path):
    c = Sleepers(tmp_path / "w", "test")
    c.prepare_groups()
    yield c
    c.stop()


def test_a_node_runs_in_its_own_group_with_its_cap(cluster):
    pid = cluster.start_node("n1")
    expected = f"/{PREFIX}/{cluster.groups.id}/n1"
    assert group_of(pid) == expected
    assert cluster.groups.members("n1") == [pid]
    assert cluster.groups.cpu_cores("n1") == pytest.approx(0.1)
    h = detect()
    if h.version == 1:
        assert (h.cpu / expected.lstrip("/") / "cpu.cfs_quota_us").read_text().strip() == "10000"
    else:
        assert (h.cpu / expected.lstrip("/") / "cpu.max").read_text().split() == ["10000", "100000"]


def test_a_busy_node_is_throttled_at_its_cap(cluster):
    cluster.start_node("spin", busy=True)
    # the kernel counts the periods in which the group hit its quota
    poll(lambda: cluster.groups.throttling("spin").get("throttled", 0) >= 3, 30,
         "the busy process throttled by its 0.1-core quota", every_s=0.2)


def asleep(cluster: Sleepers, name: str) -> bool:
    """No period of the node's group ran over half a second (the kernel counts a period only
    when the group had something to run)."""
    periods = cluster.groups.throttling(name).get("periods", 0)
    time.sleep(0.5)
    return cluster.groups.throttling(name).get("periods", 0) == periods


def test_where_the_cpu_went_names_the_node_that_ran_at_its_cap(cluster):
    """The readings a capacity bench takes around a measurement (deploy/localproc/cpu.py): a
    spinning node in a 0.1-core slice used about 0.1 core and was throttled in most of its
    periods; a sleeping node used nothing and was never throttled; a process outside the
    cluster (this test) is counted under its label; the machine was at least as busy."""
    cluster.start_node("spin", busy=True)
    cluster.start_node("idle")
    poll(lambda: cluster.groups.throttling("spin").get("throttled", 0) >= 1, 30,
         "the busy process throttled by its 0.1-core quota", every_s=0.2)
    # the sleeper's interpreter starts inside its 0.1-core slice too (tens of ms of CPU, longer
    # on a loaded machine) and may be throttled while it does: measure once it is asleep
    poll(lambda: asleep(cluster, "idle"), 30, "the sleeping node done starting", every_s=0.1)
    before = cpu.reading(cluster, {"this test": os.getpid()})
    time.sleep(3)
    went = cpu.spent(before, cpu.reading(cluster, {"this test": os.getpid()}))
    assert 0.03 <= went["cores"]["spin"] <= 0.13, went
    assert went["cores"]["idle"] < 0.02 and "this test" in went["cores"], went
    assert went["throttled_share"]["spin"] > 0.5, went
    assert went["throttled_share"].get("idle", 0.0) == 0.0, went
    assert went["machine_busy_cores"] >= went["cores"]["spin"] - 0.02, went


def test_the_group_disappears_when_the_node_stops(cluster):
    cluster.start_node("n1")
    group = cluster.groups.path("n1")
    assert group.is_dir()
    cluster.stop_node("n1")
    assert not group.exists()
    cluster.stop()
    assert not any(d.exists() for d in cluster.groups.cluster_dirs())


def test_groups_a_killed_run_left_are_removed_at_the_next_start(tmp_path):
    run = Sleepers(tmp_path / "w", "test")
    run.prepare_groups()
    pids = [run.start_node("n1"), run.start_node("n2")]
    # the run dies with SIGKILL (nothing of it cleans up), and so do its nodes
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    poll(lambda: not run.groups.members("n1") and not run.groups.members("n2"), 10, "the nodes gone")
    assert run.groups.names() == ["n1", "n2"]
    again = Sleepers(tmp_path / "w", "test")
    removed = again.prepare_groups()
    assert sorted(removed) == [f"{again.groups.id}/n1", f"{again.groups.id}/n2"]
    assert again.groups.names() == []
    again.stop()


def test_another_clusters_empty_group_is_removed_only_after_a_minute(tmp_path):
    other = Sleepers(tmp_path / "other", "test")
    other.prepare_groups()
    other.groups.apply("left", Slice(cpu_cores=0.1))
    mine = Sleepers(tmp_path / "mine", "test")
    mine.prepare_groups()
    assert other.groups.names() == ["left"]  # empty, but may be about to be joined
    removed = mine.groups.remove_stale(keep=set(), now=time.time() + 61)
    assert f"{other.groups.id}/left" in removed and other.groups.names() == []
    mine.stop()


def test_a_busy_group_is_never_removed(cluster):
    pid = cluster.start_node("n1")
    assert cluster.groups.remove_stale(keep=set(), now=time.time() + 3600) == []
    assert cluster.groups.remove("n1") is False and group_of(pid).endswith("/n1")


@pytest.fixture
def open_dir():
    """A folder any user may write (pytest's own tmp folders are root's alone)."""
    d = Path(tempfile.mkdtemp(prefix="metctl-cgroup-test-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_without_permission_start_is_one_line_with_the_fix_and_starts_nothing(open_dir):
    work = open_dir / "w"
    # an unprivileged user: the real "Permission denied" of the cgroup file system
    done = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable,
         str(ROOT / "deploy" / "local_hbase" / "cluster.py"), "--workdir", str(work), "start", "--rs", "1"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(open_dir)})
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    line = lines[0]
    assert line.startswith("local-hbase: control groups: cannot create ")
    assert "Permission denied" in line and "run as root" in line and "--no-quota" in line
    assert not (work / "cluster.json").exists()  # nothing recorded, nothing started


def test_groups_that_cannot_be_made_are_refused_before_anything_runs(tmp_path):
    # a cgroup root that is a plain directory with no cpu controller mounted
    with pytest.raises(QuotaUnavailable, match="no cpu controller"):
        detect(tmp_path)
    c = Sleepers(tmp_path / "w", "test")
    c.groups = ControlGroups(c.workdir, Hierarchy(1, tmp_path / "file", None))
    (tmp_path / "file").write_text("")
    with pytest.raises(QuotaUnavailable, match=r"^control groups: cannot create .*--no-quota"):
        c.prepare_groups()
    assert not c.state_file.exists()


def test_on_cgroup_v2_the_slice_is_cpu_max_cpu_weight_and_io_max(tmp_path):
    # This machine mounts v1; v2's files are written the same way into a unified tree
    # (here a folder laid out as /sys/fs/cgroup is on a v2 machine).
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    h = detect(tmp_path)
    assert h == Hierarchy(2, tmp_path, tmp_path)
    groups = ControlGroups(tmp_path / "work", h)
    (tmp_path / "work").mkdir()
    d = groups.apply("rs1", Slice(cpu_cores=0.25, cpu_shares=2048, write_mb_s=10))
    assert (d / "cpu.max").read_text() == "25000 100000" and (d / "cpu.weight").read_text() == "200"
    assert (d / "io.max").read_text().endswith(" rbps=max wbps=10485760")
    for level in (tmp_path, tmp_path / PREFIX, tmp_path / PREFIX / groups.id):
        assert (level / "cgroup.subtree_control").read_text() == "+cpu +io"
    assert groups.cpu_cores("rs1") == 0.25


@pytest.mark.parametrize("doc, field", [
    ('{"rs": {"cpu_cores": 0}}', "rs.cpu_cores"), ('{"rs": {"cpu_cores": "half"}}', "rs.cpu_cores"),
    ('{"rs": {"cpus": 1}}', "'cpus'"), ('{"rs": 1}', "rs: expected a mapping"),
    ('{"rs": {"cpu_shares": 1}}', "rs.cpu_shares"), ("[1]", "expected a mapping of process kinds"),
    ("{", "not JSON"),
])
def test_a_bad_slices_file_names_the_file_and_field(tmp_path, doc, field):
    f = tmp_path / "slices.json"
    f.write_text(doc)
    with pytest.raises(BadSlice) as e:
        load_slices(str(f))
    assert str(f) in str(e.value) and field in str(e.value) and "\n" not in str(e.value)


def test_no_quota_starts_nodes_in_no_group(tmp_path):
    c = Sleepers(tmp_path / "w", "test", quota=False)
    assert c.prepare_groups() == []
    pid = c.start_node("n1")
    assert not group_of(pid).startswith(f"/{PREFIX}/")
    assert Sleepers(tmp_path / "w", "test").slices() == {}  # recorded for later commands
    c.stop()
