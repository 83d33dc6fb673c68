"""Local-process infrastructure driver: a "node" is a process on this machine (a real HBase
RegionServer in the local-HBase setup, a stand-in in demos and tests).

Each node gets a directory `<state_dir>/<instance id>/` holding `node.json` (PID, process start
time, profile, tags, port, address, cluster), its user data, its profile settings file
(`profile.json`: cluster, profile and the profile's settings, as in the cloud user data) and
its log. The process is started from a configurable argv template in that directory with a
configurable environment, in its own session, and is stopped by the recorded PID only — and only
while that PID still belongs to the process metctl started (same start time in /proc), never by
name. Terminate sends SIGTERM, then SIGKILL after `stop_timeout_s` (escalated on later calls,
so the driver never blocks).

Ports: node k gets `base_port + k * port_stride` (the lowest free slot); templates see
`{port}` and `{port1}`…`{portN}` (= port + i, within the stride), e.g. an HBase RegionServer's
RPC and info ports. `address_template` (default `127.0.0.1:{port}`) is what the data store must
report as the node's host.

Adoption (`infrastructure.adopt`, hosts only): a process this driver did not start but that
listens on an adopted host:port (e.g. a RegionServer `cluster.py start` started) is found
through /proc (its listening socket's inode, then the PID holding it; only processes of this
user are visible) and recorded like a node, with its PID and start time, as
`local-<cluster>-adopted-<port>-<pid>`. It is listed while alive and may be terminated: SIGTERM
then SIGKILL to that PID alone (it is not in a session metctl created, so never its group). It
is never restarted by this driver (its command is unknown). A process at no adopted address is
never touched.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from actuator import adoption
from actuator.drivers import TAG_CLUSTER, TAG_MANAGED, TAG_PROFILE, DriverError, ManagedNode, NotOwnedError
from actuator.settings import AdoptEntry, LocalSettings
from actuator.userdata import node_document
from common.locking import locked

log = logging.getLogger("metctl.actuator.local")

# The settings key naming the profile a RegionServer restart asks for (actuator.hbase.PROFILE_KEY;
# spelled out here so this module does not load the py4j gateway's).
PROFILE_KEY = "metctl.profile"

# prepare(node_dir, profile, variables) -> extra template variables (e.g. the hbase-site.xml it wrote)
PrepareHook = Callable[[Path, str, Mapping[str, str]], Mapping[str, str] | None]


# set in every node process's environment (inherited through exec and by its children): finds
# the process a controller killed mid-launch started but never recorded
INSTANCE_ENV = "METCTL_LOCAL_INSTANCE"


def _spawned_for(instance_id: str) -> int | None:
    """PID of the session leader (LocalDriver._spawn starts each node in its own session) whose
    environment names `instance_id` in INSTANCE_ENV, or None."""
    mark = f"{INSTANCE_ENV}={instance_id}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            if os.getsid(pid) == pid and mark in (entry / "environ").read_bytes().split(b"\0"):
                return pid
        except OSError:  # exited meanwhile, or not ours to read
            continue
    return None


def _proc_start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), or None
    when no such process is alive (a zombie counts as gone)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rfind(")") + 2:].split()  # after "pid (comm) "
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass



# What a node process inherits from the controller: enough to find programs, Java and HBase,
# never the controller's credentials (AWS_SECRET_ACCESS_KEY, OS_PASSWORD were readable in
# /proc/PID/environ of every node). Anything else a node needs goes in infrastructure.local.env.
_CHILD_VARS = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "JAVA_HOME",
               "PYTHONPATH", "VIRTUAL_ENV")
_CHILD_PREFIXES = ("LC_", "HBASE_", "HADOOP_")
_SECRET_NAME = ("SECRET", "PASSWORD", "TOKEN", "KEY", "CREDENTIAL", "AUTH")


def child_environment() -> dict[str, str]:
    """The minimal, explicit environment of a local node process."""
    return {k: v for k, v in os.environ.items()
            if (k in _CHILD_VARS or k.startswith(_CHILD_PREFIXES))
            and not any(w in k.upper() for w in _SECRET_NAME)}


def _listening_inodes(ip: str, port: int) -> set[str]:
    """Inodes of the TCP sockets listening on ip:port (or on every address) in /proc/net/tcp{,6}."""
    v4 = socket.inet_aton(ip)[::-1].hex().upper()  # /proc writes IPv4 little-endian
    wanted = {v4, "00000000", "0" * 24 + v4, "0000000000000000FFFF0000" + v4, "0" * 32}
    if ip.startswith("127."):
        wanted.add("00000000000000000000000001000000")  # ::1
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            addr, _, hex_port = f[1].partition(":")
            if f[3] == "0A" and int(hex_port, 16) == port and addr in wanted:  # 0A = LISTEN
                out.add(f[9])
    return out


def listener_pid(address: str) -> int | None:
    """The PID of a process of this user listening on `address` (host:port), if any."""
    host, _, port = address.rpartition(":")
    try:
        ip = socket.gethostbyname(host.strip("[]"))
    except OSError:
        return None
    inodes = {f"socket:[{i}]" for i in _listening_inodes(ip, int(port))}
    if not inodes:
        return None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(proc.name)
        except OSError:  # another user's process, or it exited meanwhile
            continue
    return None


def _private_write(path: Path, text: str) -> None:
    """Write `text` to a file only its owner can read (user data may carry secrets)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)

class LocalDriver:
    """InfrastructureDriver over processes on this machine."""

    def __init__(self, settings: LocalSettings, cluster: str, *, prepare: PrepareHook | None = None,
                 clock: Callable[[], float] = time.time, adopt: tuple[AdoptEntry, ...] = (),
                 profile_settings: Callable[[str], Mapping[str, Any]] | None = None):
        """profile_settings(profile): the fields of the profile a node starts with (default:
        the shipped profiles/<profile>.yaml)."""
        self.settings, self.cluster, self.prepare, self.clock = settings, cluster, prepare, clock
        self.profile_settings = profile_settings
        self.root = Path(settings.state_dir)
        self.adopt_hosts = tuple(h for e in adopt for h in e.hosts)
        self._adopt_scanned: dict[str, float] = {}  # host -> when /proc was last searched for it

    # ------------------------------------------------------------------ bookkeeping
    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        with locked(self.root / ".lock"):
            yield

    def _records(self) -> list[dict[str, Any]]:
        out = []
        if not self.root.is_dir():
            return out
        for f in sorted(self.root.glob("*/node.json")):
            try:
                rec = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            if rec.get("cluster") == self.cluster:
                out.append(rec)
        return out

    def _write(self, rec: Mapping[str, Any]) -> None:
        path = self.root / rec["instance_id"] / "node.json"
        tmp = path.with_suffix(".tmp")
        _private_write(tmp, json.dumps(rec, indent=2, sort_keys=True))
        os.replace(tmp, path)

    def _alive(self, rec: Mapping[str, Any]) -> bool:
        pid = rec.get("pid")
        if not pid:
            return False
        _reap(pid)
        return _proc_start_time(pid) == rec.get("start_time")

    def _port_ready(self, rec: Mapping[str, Any]) -> bool:
        try:
            with socket.create_connection((self.settings.host, rec["port"]), timeout=0.2):
                return True
        except OSError:
            return False

    # ------------------------------------------------------------------ protocol
    def launch(self, profile: str, user_data: str, tags: Mapping[str, str]) -> str:
        s = self.settings
        with self._locked():
            records = self._records()
            live = [r for r in records if r.get("state") != "terminated" and self._alive(r)]
            used = {r["slot"] for r in live}
            taken = {r["port"] for r in live}  # adopted processes hold ports outside the slots' bookkeeping
            slot = next((k for k in range(s.max_nodes)
                         if k not in used and s.base_port + k * s.port_stride not in taken), None)
            if slot is None:
                raise DriverError(f"all {s.max_nodes} local node slots are in use (infrastructure.local.max_nodes)",
                                  retryable=False)
            seq_file = self.root / ".seq"
            seq = int(seq_file.read_text() or 0) + 1 if seq_file.exists() else 1
            seq_file.write_text(str(seq))
            iid = f"local-{self.cluster}-{seq}"
            node_dir = (self.root / iid).absolute()
            node_dir.mkdir(parents=True, exist_ok=False, mode=0o700)
            port = s.base_port + slot * s.port_stride
            _private_write(node_dir / "user-data", user_data)
            variables, argv, env = self._command(iid, node_dir, port, profile)
            all_tags = {**tags, TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile}
            rec: dict[str, Any] = {
                "instance_id": iid, "cluster": self.cluster, "profile": profile, "tags": all_tags,
                "slot": slot, "port": port, "address": variables["address"], "argv": argv,
                "state": "starting", "pid": None, "start_time": None, "launched_at": self.clock(),
            }
            self._write(rec)  # recorded before the process exists: a crash leaves a trace, not an orphan
            pid = self._spawn(rec, node_dir, argv, env)
        log.info("started local node %s (pid %s, profile %s, port %s)", iid, pid, profile, port)
        return iid

    def _command(self, iid: str, node_dir: Path, port: int, profile: str) -> tuple[dict[str, str], list[str], dict[str, str]]:
        """The node's template variables, argv and environment for `profile` (writes its profile.json)."""
        s = self.settings
        variables = {"node": iid, "cluster": self.cluster, "profile": profile, "port": str(port),
                     "host": s.host, "node_dir": str(node_dir)}
        variables.update({f"port{i}": str(port + i) for i in range(1, s.port_stride)})
        variables["address"] = s.address_template.format(**variables)
        settings_file = node_dir / "profile.json"
        fields = self.profile_settings(profile) if self.profile_settings is not None else None
        _private_write(settings_file, json.dumps(node_document(self.cluster, profile, fields), indent=2,
                                                 sort_keys=True))
        variables.update(settings_file=str(settings_file), user_data_file=str(node_dir / "user-data"))
        if self.prepare is not None:
            variables.update(self.prepare(node_dir, profile, dict(variables)) or {})
        try:
            argv = [part.format(**variables) for part in s.command]
            env = dict(child_environment(), **{k: v.format(**variables) for k, v in s.env.items()})
        except (KeyError, IndexError, ValueError) as err:
            raise DriverError(f"infrastructure.local.command/env: unknown placeholder {err}", retryable=False) from None
        return variables, argv, env

    def _spawn(self, rec: dict[str, Any], node_dir: Path, argv: list[str], env: Mapping[str, str]) -> int:
        """Start the node's process in its own session; record its PID and start time."""
        logf = os.fdopen(os.open(node_dir / "node.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab")
        try:
            proc = subprocess.Popen(argv, cwd=node_dir, env={**env, INSTANCE_ENV: rec["instance_id"]},
                                    stdin=subprocess.DEVNULL, stdout=logf,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as err:
            rec["state"] = "failed"
            self._write(rec)
            raise DriverError(f"could not start {argv[0]!r}: {err.strerror or err}", retryable=False) from None
        finally:
            logf.close()
        start = None
        for _ in range(50):  # /proc entry appears at once; be tolerant anyway
            start = _proc_start_time(proc.pid)
            if start is not None or proc.poll() is not None:
                break
            time.sleep(0.01)
        rec.update(pid=proc.pid, start_time=start, state="running")
        self._write(rec)
        return proc.pid

    # ------------------------------------------------------------------ adoption
    def _adopted_here(self, rec: Mapping[str, Any]) -> bool:
        """An adopted record whose host the config still adopts (dropping the entry disowns it)."""
        return bool(rec.get("adopted")) and rec.get("address") in self.adopt_hosts

    def _owned(self, rec: Mapping[str, Any]) -> bool:
        return adoption.launched_here(rec.get("tags", {}), self.cluster) or self._adopted_here(rec)

    def _adopt(self) -> None:
        """Record the process listening on each adopted host not yet recorded alive. /proc is
        searched at most every 5 s per host while nothing listens there."""
        if not self.adopt_hosts:
            return
        records = self._records()
        live = {r["address"] for r in records if r.get("state") != "terminated" and self._alive(r)}
        launched_pids = {r.get("pid") for r in records if not r.get("adopted")}
        for host in self.adopt_hosts:
            if host in live or time.monotonic() - self._adopt_scanned.get(host, -1e9) < 5.0:
                continue
            self._adopt_scanned[host] = time.monotonic()
            pid = listener_pid(host)
            if pid is None:
                continue
            try:
                session = os.getsid(pid)
            except OSError:  # it exited meanwhile
                continue
            if pid in launched_pids or session in launched_pids:
                continue  # one of the nodes this driver started (owned already)
            start = _proc_start_time(pid)
            if start is None:
                continue
            port = int(host.rpartition(":")[2])
            iid = f"local-{self.cluster}-adopted-{port}-{pid}"
            with self._locked():
                (self.root / iid).mkdir(parents=True, exist_ok=True, mode=0o700)
                self._write({"instance_id": iid, "cluster": self.cluster, "profile": "default",
                             "tags": {}, "adopted": True, "slot": None, "port": port, "address": host,
                             "state": "running", "pid": pid, "start_time": start,
                             "launched_at": None, "adopted_at": self.clock()})
            log.info("adopted local process %s at %s as %s", pid, host, iid)

    def _recover_unrecorded_spawn(self, rec: dict[str, Any]) -> dict[str, Any]:
        """A record still "starting" without a PID outside launch() (which holds the lock from
        writing it to recording the PID) was left by a controller killed in between: the node's
        process may run, unknown to every later controller, never ready in its eyes and never
        stopped by a terminate. Find it (the session leader with the node's INSTANCE_ENV) and
        record it; no such process: the spawn never happened, the node failed."""
        with self._locked():
            path = self.root / rec["instance_id"] / "node.json"
            try:
                rec = json.loads(path.read_text())
            except (OSError, ValueError):
                return rec
            if rec.get("state") != "starting" or rec.get("pid") is not None:
                return rec  # launch() finished it meanwhile
            pid = _spawned_for(rec["instance_id"])
            start = _proc_start_time(pid) if pid is not None else None
            if pid is None or start is None:
                rec.update(state="failed")
                log.warning("local node %s: launched by a controller that stopped before starting it; "
                            "no process of it runs: failed", rec["instance_id"])
            else:
                rec.update(pid=pid, start_time=start, state="running")
                log.warning("local node %s: its process %d was started by a controller that stopped "
                            "before recording it; recorded now", rec["instance_id"], pid)
            self._write(rec)
            return rec

    def nodes(self) -> list[ManagedNode]:
        self._adopt()
        out = []
        for rec in self._records():
            if rec.get("state") == "starting" and rec.get("pid") is None and not rec.get("adopted"):
                rec = self._recover_unrecorded_spawn(rec)
            if rec.get("adopted") and not self._adopted_here(rec):
                continue  # no longer adopted by the config: not metctl's
            if rec.get("state") == "terminated":
                continue
            alive = self._alive(rec)
            if rec.get("adopted") and not alive and rec.get("state") != "terminating":
                self._mark_terminated(rec)  # it exited: metctl never restarts what it adopted
                continue
            if rec.get("state") == "terminating":
                if not alive:
                    self._mark_terminated(rec)
                    continue
                self._escalate(rec)
                state = "stopping"
            elif rec.get("state") == "starting":
                state = "requested"
            elif rec.get("state") == "restarting":
                state = "booting"  # its old process stops, the new one starts (restart())
            elif not alive:
                state = "failed"
            elif self.settings.ready_port and not self._port_ready(rec):
                state = "booting"
            else:
                state = "running"
            out.append(ManagedNode(instance_id=rec["instance_id"], state=state, profile=rec["profile"],
                                   address=rec["address"] if state in ("running", "stopping") else None,
                                   launched_at=rec.get("launched_at"), tags=dict(rec.get("tags", {})),
                                   adopted=bool(rec.get("adopted"))))
        return out

    def _mark_terminated(self, rec: dict[str, Any]) -> None:
        rec["state"] = "terminated"
        rec["terminated_at"] = self.clock()
        self._write(rec)

    @staticmethod
    def _signal(rec: Mapping[str, Any], sig: int) -> None:
        """A launched node: its session's group (metctl created it). An adopted process: its
        PID alone (its group may be the operator's shell)."""
        try:
            if rec.get("adopted"):
                os.kill(rec["pid"], sig)
            else:
                os.killpg(rec["pid"], sig)
        except ProcessLookupError:
            pass

    def _escalate(self, rec: dict[str, Any]) -> None:
        if self.clock() - rec.get("term_sent_at", self.clock()) >= self.settings.stop_timeout_s and self._alive(rec):
            self._signal(rec, signal.SIGKILL)

    def terminate(self, instance_id: str) -> None:
        with self._locked():
            rec = next((r for r in self._records() if r["instance_id"] == instance_id), None)
            if rec is None or not self._owned(rec):
                raise NotOwnedError(f"{instance_id} is not a local node of cluster {self.cluster} in "
                                    f"{self.root}: metctl stops only processes it started or adopted "
                                    f"({adoption.ADOPT_KEY})")
            if rec.get("state") == "terminated":
                return
            if not self._alive(rec):  # exited (or its PID now belongs to someone else): never signal it
                self._mark_terminated(rec)
                return
            if rec.get("state") != "terminating":
                rec.update(state="terminating", term_sent_at=self.clock())
                self._write(rec)
                self._signal(rec, signal.SIGTERM)
                log.info("stopping local node %s (pid %s)", instance_id, rec["pid"])
            else:
                self._escalate(rec)

    def restart(self, instance_id: str, profile: str) -> None:
        """Stop the node's process gracefully (SIGTERM to its group, SIGKILL after
        `stop_timeout_s`) and start it again in the same directory, slot and port with
        `profile` (profile.json rewritten, the command templated anew). node.json records the
        new PID, so the node stays this driver's, running, with the new profile. Blocks until the
        old process is gone and the new one started (at most stop_timeout_s + 5 s)."""
        with self._locked():
            rec = next((r for r in self._records() if r["instance_id"] == instance_id), None)
            if rec is None or rec.get("tags", {}).get(TAG_MANAGED) != "true":
                raise NotOwnedError(f"{instance_id} is not a local node of cluster {self.cluster} in "
                                    f"{self.root}: metctl restarts only processes it started")
            if rec.get("state") in ("terminating", "terminated"):
                raise DriverError(f"{instance_id} is {rec['state']}: not restarted", retryable=False)
            alive = self._alive(rec)
            rec.update(state="restarting", restart_started_at=self.clock())
            self._write(rec)
            if alive:
                try:
                    os.killpg(rec["pid"], signal.SIGTERM)
                except ProcessLookupError:
                    pass
                log.info("restarting local node %s (pid %s) with profile %s", instance_id, rec["pid"], profile)
                deadline = time.monotonic() + self.settings.stop_timeout_s
                while self._alive(rec) and time.monotonic() < deadline:
                    time.sleep(0.05)
                if self._alive(rec):
                    try:
                        os.killpg(rec["pid"], signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    deadline = time.monotonic() + 5.0
                    while self._alive(rec) and time.monotonic() < deadline:
                        time.sleep(0.05)
                if self._alive(rec):
                    rec["state"] = "running"  # still the old process: leave it as it was
                    self._write(rec)
                    raise DriverError(f"{instance_id} (pid {rec['pid']}) did not stop for its restart")
            node_dir = (self.root / instance_id).absolute()
            _, argv, env = self._command(instance_id, node_dir, rec["port"], profile)
            tags = {**rec.get("tags", {}), TAG_PROFILE: profile}
            rec.update(profile=profile, tags=tags, argv=argv, pid=None, start_time=None)
            pid = self._spawn(rec, node_dir, argv, env)
        log.info("restarted local node %s (pid %s, profile %s)", instance_id, pid, profile)

    def node_at(self, address: str) -> str | None:
        """The instance id of this driver's live node with `address`, if any."""
        for rec in self._records():
            if (rec.get("address") == address and rec.get("state") in ("running", "restarting")
                    and not rec.get("adopted")):  # an adopted process is restarted by the restart command
                return rec["instance_id"]
        return None

    # ------------------------------------------------------------------ blocking helper (CLI, tests)
    def wait_gone(self, instance_id: str, timeout_s: float = 60.0, interval_s: float = 0.1) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if all(n.instance_id != instance_id for n in self.nodes()):
                return True
            time.sleep(interval_s)
        return False


class LocalRestarter:
    """The HBase driver's restarter when nodes are local processes: a RegionServer this driver
    launched is restarted through `LocalDriver.restart` (so the driver records its new PID and
    keeps it as a running node); any other server (e.g. one `cluster.py start` started) through
    `fallback`, e.g. the configured restart command. `host_format` is the HBase driver's: how a
    server's host and port make a node address."""

    def __init__(self, driver: LocalDriver, fallback: Callable[[str, Mapping[str, str]], None] | None = None,
                 host_format: str = "{host}"):
        self.driver, self.fallback, self.host_format = driver, fallback, host_format

    def __call__(self, server_id: str, settings: Mapping[str, str]) -> None:
        host, _, port = server_id.partition(",")
        port = port.split(",")[0]
        iid = self.driver.node_at(self.host_format.format(host=host, port=port))
        if iid is None:
            if self.fallback is None:
                raise DriverError(f"{server_id} is not a node metctl launched and no restart command "
                                  "is configured (datastore.hbase.restart_command)", retryable=False)
            self.fallback(server_id, settings)
            return
        profile = settings.get(PROFILE_KEY)
        if not profile:
            raise DriverError(f"restart of {server_id}: no profile named in its settings ({PROFILE_KEY})",
                              retryable=False)
        self.driver.restart(iid, profile)
