"""The local-process driver with real processes: templates, ports, readiness, ownership,
stop by recorded PID only (never a stranger that reused it), SIGTERM then SIGKILL, and the
executor launching and abandoning real local nodes."""
from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from actuator.drivers import TAG_LAUNCH, NotOwnedError
from actuator.executor import Executor
from actuator.fake import MirrorDataStore
from actuator.journal import Journal
from actuator.local import LocalDriver
from actuator.settings import ExecutorSettings, LocalSettings
from decision.model import Action
from tests.actuator.plans import make_plan

pytestmark = pytest.mark.integration
NODE = str(Path(__file__).with_name("local_node.py"))


def free_base_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return min(s.getsockname()[1], 60000)


def local(tmp_path, *, listen: bool = True, ignore_term: bool = False, **kw) -> LocalDriver:
    settings = LocalSettings(
        state_dir=str(tmp_path / "nodes"), base_port=kw.pop("base_port", free_base_port()), port_stride=2,
        command=(sys.executable, NODE, "port={port}", "info={port1}", "settings={settings_file}",
                 "profile={profile}", f"listen={int(listen)}", f"ignore_term={int(ignore_term)}"),
        env={"METCTL_NODE_NAME": "{node}", "METCTL_NODE_ADDRESS": "{address}"}, **kw)
    return LocalDriver(settings, "demo")


def wait_for(cond, timeout_s: float = 15.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def test_launch_two_nodes_with_their_own_ports_settings_and_env(tmp_path):
    d = local(tmp_path, ready_port=True)
    a = d.launch("write", "#cloud-config\n", {TAG_LAUNCH: "p/0/1"})
    b = d.launch("read", "", {TAG_LAUNCH: "p/1/1"})
    try:
        nodes = wait_for(lambda: (ns := d.nodes()) and all(n.state == "running" for n in ns) and ns)
        by_id = {n.instance_id: n for n in nodes}
        base = d.settings.base_port
        assert by_id[a].address == f"127.0.0.1:{base}" and by_id[b].address == f"127.0.0.1:{base + 2}"
        assert by_id[a].profile == "write" and by_id[a].tags[TAG_LAUNCH] == "p/0/1"
        seen = json.loads((d.root / a / "seen.json").read_text())
        assert f"port={base}" in seen["argv"] and f"info={base + 1}" in seen["argv"]
        assert seen["cwd"] == str((d.root / a).absolute())
        assert seen["env"] == {"METCTL_NODE_NAME": a, "METCTL_NODE_ADDRESS": f"127.0.0.1:{base}"}
        settings = json.loads((d.root / a / "profile.json").read_text())
        assert settings["profile"] == "write" and settings["cluster"] == "demo"
        assert (d.root / a / "user-data").read_text() == "#cloud-config\n"
    finally:
        for iid in (a, b):
            d.terminate(iid)
        assert d.wait_gone(a) and d.wait_gone(b)


def test_a_freed_slot_is_reused_and_a_node_not_listening_is_booting(tmp_path):
    d = local(tmp_path, listen=False, ready_port=True)
    a = d.launch("read", "", {})
    try:
        time.sleep(0.3)
        assert [n.state for n in d.nodes()] == ["booting"]
        d.terminate(a)
        assert d.wait_gone(a)
        b = d.launch("read", "", {})
        rec = json.loads((d.root / b / "node.json").read_text())
        assert rec["port"] == d.settings.base_port  # slot 0 again
        d.terminate(b)
        assert d.wait_gone(b)
    finally:
        for n in d.nodes():
            d.terminate(n.instance_id)


def test_terminate_escalates_to_sigkill_after_the_stop_timeout(tmp_path):
    d = local(tmp_path, ignore_term=True, stop_timeout_s=0.5)
    a = d.launch("read", "", {})
    pid = json.loads((d.root / a / "node.json").read_text())["pid"]
    wait_for(lambda: (d.root / a / "seen.json").exists())
    d.terminate(a)
    time.sleep(0.2)
    assert [n.state for n in d.nodes()] == ["stopping"]
    assert d.wait_gone(a, timeout_s=10)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


def test_only_recorded_processes_of_this_cluster_are_stopped_never_a_pid_reuser(tmp_path):
    d = local(tmp_path)
    with pytest.raises(NotOwnedError):
        d.terminate("local-demo-99")
    other = LocalDriver(d.settings, "other-cluster")
    a = d.launch("read", "", {})
    try:
        with pytest.raises(NotOwnedError):
            other.terminate(a)
        # simulated PID reuse: the record's start time no longer matches the process now holding
        # that PID (as after the node died and the PID went to another process) -> the node is
        # reported failed, and terminate never signals the process holding the PID
        rec_path = d.root / a / "node.json"
        rec = json.loads(rec_path.read_text())
        real_pid = rec["pid"]
        rec.update(start_time=rec["start_time"] - 1)
        rec_path.write_text(json.dumps(rec))
        assert [n.state for n in d.nodes()] == ["failed"]
        d.terminate(a)
        time.sleep(0.3)
        assert Path(f"/proc/{real_pid}").exists()  # untouched
        assert d.nodes() == []
    finally:
        os.killpg(json.loads((d.root / a / "node.json").read_text())["pid"], 9)


def _plan():
    actions = [Action("launch", "scale out", node="new-1", profile="read"),
               Action("move", "to new", partition="p0", source="rs1,16020", target="new-1")]
    return make_plan(actions, {"rs1,16020": ("default", ["p1"]), "new-1": ("read", ["p0"])})


def run_real_time(ex: Executor, limit_s: float = 30.0):
    deadline = time.monotonic() + limit_s
    status = ex.tick()
    while status.state == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        status = ex.tick()
    return status


def test_executor_scales_out_with_a_real_local_node(tmp_path):
    d = local(tmp_path, ready_port=True)
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(_plan(), "plan-1")
    try:
        assert run_real_time(ex).state == "done"
        (node,) = d.nodes()
        assert store.layout["p0"] == f"{node.address},16020" and node.profile == "read"
    finally:
        for n in d.nodes():
            d.terminate(n.instance_id)
            d.wait_gone(n.instance_id)


def test_a_local_node_that_never_gets_ready_is_retried_then_abandoned_and_stopped(tmp_path):
    d = local(tmp_path, listen=False, ready_port=True)
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    settings = ExecutorSettings(booting_timeout_s=0.5, launch_attempts=2, launch_backoff_s=0.1)
    ex = Executor(d, store, settings, time.time, "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(_plan(), "plan-1")
    status = run_real_time(ex)
    assert status.state == "abandoned" and "booting" in status.reason
    launched = sorted(p.name for p in d.root.glob("local-demo-*"))
    assert len(launched) == 2
    for iid in launched:
        assert d.wait_gone(iid)
    assert store.calls == []
