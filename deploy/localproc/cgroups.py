"""A fixed slice of this machine per local node: each process a local cluster starts (a
RegionServer, a Cassandra node, the master, ZooKeeper, the YCSB clients) runs in a control
group of its own with a CPU cap (cgroup v1 `cpu.cfs_quota_us` / v2 `cpu.max`), a weight under
contention (`cpu.shares` / `cpu.weight`) and optionally a disk throttle on the work
directory's device (`blkio.throttle.*_bps_device` / `io.max`), so that adding a node adds
capacity. Which hierarchy is mounted is detected, never assumed.

Groups live under <cpu root>/metctl/<cluster id>/<process name>, the cluster id a hash of its
work directory. A group is removed when its process stops and all of a cluster's at its stop;
at start a cluster removes its own groups whose process is gone (a run that was SIGKILLed) and
any other metctl cluster's group that has been empty for a minute.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Iterator, Mapping

from deploy.localproc.process import ClusterError

BASE = Path("/sys/fs/cgroup")
PREFIX = "metctl"
PERIOD_US = 100_000  # the kernel's default CFS period; a quota is a share of it
STALE_EMPTY_S = 60  # another cluster's empty group is left alone this long (it may be filling)
FIX = ("run as root on a machine whose cgroup cpu controller is mounted read-write "
       "(/sys/fs/cgroup/cpu for cgroup v1, /sys/fs/cgroup with +cpu for v2), "
       "or pass --no-quota for nodes without a CPU slice")


class QuotaUnavailable(ClusterError):
    """Control groups cannot be made here; the message is one line with the fix."""


class BadSlice(ClusterError):
    """A slice in a config file is not one (exit 2: bad input); names the file and field."""


@dataclass(frozen=True)
class Slice:
    """What one process may use. None: no limit of that kind."""

    cpu_cores: float | None = None  # cap: cores' worth of CPU time per period
    cpu_shares: int | None = None  # weight when the machine is busy (v1 shares; 1024 = one task)
    read_mb_s: float | None = None  # disk throttle on the work directory's device
    write_mb_s: float | None = None

    @classmethod
    def parse(cls, where: str, doc: Any) -> "Slice":
        """From a mapping (a config file's entry); one line naming `where` and the field."""
        if not isinstance(doc, Mapping):
            raise BadSlice(f"{where}: expected a mapping of {', '.join(f.name for f in fields(cls))}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(doc) - names)
        if unknown:
            raise BadSlice(f"{where}: unknown field {unknown[0]!r} (expected {', '.join(sorted(names))})")
        values: dict[str, Any] = {}
        for name, value in doc.items():
            if value is None:
                continue
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not value > 0 or value != value or value == float("inf"):
                raise BadSlice(f"{where}.{name}: expected a positive number, got {value!r}")
            if name == "cpu_shares" and not 2 <= value <= 262_144:
                raise BadSlice(f"{where}.cpu_shares: expected 2..262144, got {value!r}")
            if name == "cpu_cores" and not 0.01 <= value <= 1024:
                raise BadSlice(f"{where}.cpu_cores: expected 0.01..1024, got {value!r}")
            values[name] = int(value) if name == "cpu_shares" else float(value)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class Hierarchy:
    version: int  # 1 or 2
    cpu: Path  # where cpu groups are made
    blkio: Path | None  # where disk groups are made (v1: its own hierarchy; v2: = cpu)


def detect(base: Path = BASE) -> Hierarchy:
    """The mounted hierarchy with a cpu controller: v1 (`base`/cpu with CFS quotas) or v2
    (`base` itself lists cpu among its controllers)."""
    if (base / "cpu" / "cpu.cfs_quota_us").exists():
        blkio = base / "blkio"
        return Hierarchy(1, base / "cpu", blkio if (blkio / "blkio.throttle.read_bps_device").exists() else None)
    controllers = base / "cgroup.controllers"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return Hierarchy(2, base, base if "io" in controllers.read_text().split() else None)
    raise QuotaUnavailable(f"control groups: no cpu controller at {base}/cpu (v1) or in "
                           f"{base}/cgroup.controllers (v2); {FIX}")


def cluster_id(workdir: Path) -> str:
    return hashlib.sha1(str(workdir).encode()).hexdigest()[:10]


def disk_device(path: Path) -> str:
    """MAJOR:MINOR of the whole disk holding `path` (throttles take a disk, not a partition)."""
    dev = os.stat(path).st_dev
    ident = f"{os.major(dev)}:{os.minor(dev)}"
    sys_dev = Path("/sys/dev/block") / ident
    if (sys_dev / "partition").exists():
        return (sys_dev.resolve().parent / "dev").read_text().strip()
    return ident


class ControlGroups:
    """One local cluster's groups. `hierarchy` None: detected at first use."""

    def __init__(self, workdir: Path, hierarchy: Hierarchy | None = None):
        self.workdir = workdir
        self.id = cluster_id(workdir)
        self._hierarchy = hierarchy

    @property
    def hierarchy(self) -> Hierarchy:
        if self._hierarchy is None:
            self._hierarchy = detect()
        return self._hierarchy

    def _roots(self) -> list[Path]:
        h = self.hierarchy
        return [h.cpu] + ([h.blkio] if h.blkio is not None and h.blkio != h.cpu else [])

    def cluster_dirs(self) -> list[Path]:
        return [root / PREFIX / self.id for root in self._roots()]

    def path(self, name: str) -> Path:
        """The process's group in the cpu hierarchy (what /proc/PID/cgroup names)."""
        return self.hierarchy.cpu / PREFIX / self.id / name

    # -- making groups ------------------------------------------------------------------------

    def _mkdir(self, d: Path) -> None:
        try:
            d.mkdir(parents=True, exist_ok=True)  # parents: another cluster may just have removed them
        except OSError as e:
            raise QuotaUnavailable(f"control groups: cannot create {d}: "
                                   f"{os.strerror(e.errno) if e.errno else e}; {FIX}") from None

    def _write(self, f: Path, value: str) -> None:
        try:
            f.write_text(value)
        except OSError as e:
            raise QuotaUnavailable(f"control groups: cannot write {value.strip()!r} to {f}: "
                                   f"{os.strerror(e.errno) if e.errno else e}; {FIX}") from None

    def ensure(self, cluster_shares: int | None = None) -> None:
        """Make (or find) metctl's and this cluster's groups; on v2 hand the cpu and io
        controllers down to them. Raises QuotaUnavailable in one line when that fails: before
        the cluster starts anything."""
        h = self.hierarchy
        for root in self._roots():
            parent = root
            for part in (PREFIX, self.id):
                if h.version == 2:
                    self._enable_controllers(parent)
                parent = parent / part
                self._mkdir(parent)
            if h.version == 2:
                self._enable_controllers(parent)
        if cluster_shares:
            # both levels: metctl's group competes with every other task on the machine, and a
            # cluster's with other metctl clusters
            self._set_weight(self.hierarchy.cpu / PREFIX, cluster_shares)
            self._set_weight(self.hierarchy.cpu / PREFIX / self.id, cluster_shares)

    def _enable_controllers(self, d: Path) -> None:
        wanted = ["cpu"] + (["io"] if self.hierarchy.blkio is not None else [])
        enabled = (d / "cgroup.subtree_control").read_text().split() if (d / "cgroup.subtree_control").exists() else []
        missing = [c for c in wanted if c not in enabled]
        if missing:
            self._write(d / "cgroup.subtree_control", " ".join(f"+{c}" for c in missing))

    def _set_weight(self, d: Path, shares: int) -> None:
        if self.hierarchy.version == 1:
            self._write(d / "cpu.shares", str(shares))
        else:  # cpu.weight 1..10000, 100 = one default task (v1's 1024)
            self._write(d / "cpu.weight", str(max(1, min(10_000, round(shares * 100 / 1024)))))

    def apply(self, name: str, s: Slice) -> Path:
        """The group `name` with slice `s` (made or updated); returns its cpu path."""
        self.ensure()
        h = self.hierarchy
        cpu = self.path(name)
        self._mkdir(cpu)
        quota = int(round(s.cpu_cores * PERIOD_US)) if s.cpu_cores else None
        if h.version == 1:
            self._write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
            self._write(cpu / "cpu.cfs_quota_us", str(quota if quota else -1))
        else:
            self._write(cpu / "cpu.max", f"{quota if quota else 'max'} {PERIOD_US}")
        if s.cpu_shares:
            self._set_weight(cpu, s.cpu_shares)
        if h.blkio is not None and (s.read_mb_s or s.write_mb_s):
            dev = disk_device(self.workdir)
            blk = h.blkio / PREFIX / self.id / name
            self._mkdir(blk)
            rbps = int(s.read_mb_s * 2**20) if s.read_mb_s else 0
            wbps = int(s.write_mb_s * 2**20) if s.write_mb_s else 0
            if h.version == 1:
                # v1: 0 removes a device's limit
                self._write(blk / "blkio.throttle.read_bps_device", f"{dev} {rbps}")
                self._write(blk / "blkio.throttle.write_bps_device", f"{dev} {wbps}")
            else:
                self._write(blk / "io.max", f"{dev} rbps={rbps or 'max'} wbps={wbps or 'max'}")
        return cpu

    def join(self, name: str, pid: int) -> None:
        """Move `pid` (its threads, and the children it starts later) into group `name`."""
        for root in self._roots():
            d = root / PREFIX / self.id / name
            if d.is_dir():
                self._write(d / "cgroup.procs", str(pid))

    # -- reading ------------------------------------------------------------------------------

    def names(self) -> list[str]:
        d = self.hierarchy.cpu / PREFIX / self.id
        return sorted(p.name for p in d.iterdir() if p.is_dir()) if d.is_dir() else []

    def members(self, name: str) -> list[int]:
        f = self.path(name) / "cgroup.procs"
        try:
            return [int(x) for x in f.read_text().split()]
        except OSError:
            return []

    def cpu_cores(self, name: str) -> float | None:
        """The cap the kernel holds for group `name` (None: no cap or no group)."""
        d = self.path(name)
        try:
            if self.hierarchy.version == 1:
                quota = int((d / "cpu.cfs_quota_us").read_text())
                period = int((d / "cpu.cfs_period_us").read_text())
            else:
                q, p = (d / "cpu.max").read_text().split()
                if q == "max":
                    return None
                quota, period = int(q), int(p)
        except (OSError, ValueError):
            return None
        return quota / period if quota > 0 else None

    def throttling(self, name: str) -> dict[str, int]:
        """cpu.stat of group `name`: periods, periods it was throttled in, time throttled (µs)."""
        try:
            rows = dict(line.split() for line in (self.path(name) / "cpu.stat").read_text().splitlines())
        except (OSError, ValueError):
            return {}
        if self.hierarchy.version == 1:
            return {"periods": int(rows.get("nr_periods", 0)), "throttled": int(rows.get("nr_throttled", 0)),
                    "throttled_us": int(rows.get("throttled_time", 0)) // 1000}
        return {"periods": int(rows.get("nr_periods", 0)), "throttled": int(rows.get("nr_throttled", 0)),
                "throttled_us": int(rows.get("throttled_usec", 0))}

    # -- removing -----------------------------------------------------------------------------

    def remove(self, name: str) -> bool:
        """Remove group `name` once no process is left in it; False if one still is."""
        if self.members(name):
            return False
        for root in self._roots():
            _rmdir(root / PREFIX / self.id / name)
        return True

    def remove_all(self) -> list[str]:
        """Remove every group of this cluster that no process is in (and the cluster's own
        when none is left); the names of those that still hold one."""
        busy = [n for n in self.names() if not self.remove(n)]
        if not busy:
            for d in self.cluster_dirs():
                _rmdir(d)
                _rmdir(d.parent)  # metctl's own, once no cluster is left in it
        return busy

    def remove_stale(self, keep: set[str], now: float | None = None) -> list[str]:
        """At start: this cluster's groups not in `keep` that no process is in (left by a run
        that was killed), and other metctl clusters' groups that have held no process for
        STALE_EMPTY_S. Returns what was removed ("<cluster>/<name>")."""
        removed = []
        try:
            for n in self.names():
                if n not in keep and self.remove(n):
                    removed.append(f"{self.id}/{n}")
            top = self.hierarchy.cpu / PREFIX
            clusters = [d for d in top.iterdir() if d.is_dir() and d.name != self.id] if top.is_dir() else []
        except QuotaUnavailable:
            return removed
        now = time.time() if now is None else now
        for d in clusters:
            other = ControlGroups(self.workdir, self.hierarchy)
            other.id = d.name
            for n in other.names():
                if not other.members(n) and now - (d / n).stat().st_mtime >= STALE_EMPTY_S:
                    other.remove(n)
                    removed.append(f"{d.name}/{n}")
            if not other.names() and now - d.stat().st_mtime >= STALE_EMPTY_S:
                for cd in other.cluster_dirs():
                    _rmdir(cd)
        return removed


def _rmdir(d: Path) -> None:
    try:
        d.rmdir()
    except FileNotFoundError:
        pass
    except OSError as e:
        if e.errno not in (errno.EBUSY, errno.ENOTEMPTY):
            raise


def group_of(pid: int, controller: str = "cpu") -> str | None:
    """The cgroup path /proc/PID/cgroup names for `controller` (v1) or the unified one."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return None
    unified = None
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        if controller in ctrls.split(","):
            return path
        if ctrls == "":
            unified = path
    return unified


def iter_slices(doc: Mapping[str, Any], where: str) -> Iterator[tuple[str, Slice]]:
    for key, value in doc.items():
        yield str(key), Slice.parse(f"{where}: {key}", value)


def load_slices(path: str | None) -> dict[str, Slice] | None:
    """Process slices from a JSON or YAML file ({kind: {cpu_cores, …}}); None without a file."""
    if not path:
        return None
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise BadSlice(f"{path}: cannot read: {e.strerror}") from None
    if path.endswith(".json"):
        try:
            doc = json.loads(text)
        except ValueError as e:
            raise BadSlice(f"{path}: not JSON: {e}") from None
    else:
        import yaml  # metctl's environment; a JSON file needs nothing beyond python3

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise BadSlice(f"{path}: not YAML: {' '.join(str(e).split())}") from None
    if not isinstance(doc, dict):
        raise BadSlice(f"{path}: expected a mapping of process kinds to slices")
    return dict(iter_slices(doc, path))


def add_quota_arguments(ap: Any) -> None:
    """--no-quota and --slices on a script's argparse parser (the local clusters' scripts)."""
    ap.add_argument("--no-quota", action="store_true",
                    help="no control groups: every process shares the machine's cores (the old mode)")
    ap.add_argument("--slices", help="a JSON or YAML file of process slices ({kind: {cpu_cores, cpu_shares, "
                    "read_mb_s, write_mb_s}}) instead of the cluster's defaults")


def quota_options(args: Any) -> dict[str, Any]:
    """The cluster constructor's quota/slices from add_quota_arguments' options."""
    return {"quota": False if getattr(args, "no_quota", False) else None,
            "slices": load_slices(getattr(args, "slices", None))}
