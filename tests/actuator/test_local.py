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
from tests.fakes.cluster import MirrorDataStore
from actuator.journal import Journal
from actuator.local import LocalDriver
from actuator.settings import ExecutorSettings, LocalSettings
from tests.actuator.plans import run_real_time, scale_out_plan

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


def test_a_node_gets_a_minimal_environment_and_private_files(tmp_path, monkeypatch):
    # Nodes inherited the controller's whole environment: its cloud credentials were readable
    # in /proc/PID/environ; node directories were 0755 and their files 0644.
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-x")
    monkeypatch.setenv("OS_PASSWORD", "os-password-x")
    monkeypatch.setenv("SOME_OTHER_SETTING", "y")
    d = local(tmp_path)
    a = d.launch("write", "#cloud-config\n", {TAG_LAUNCH: "p/0/1"})
    try:
        seen_file = d.root / a / "seen.json"
        wait_for(lambda: seen_file.exists() and seen_file.read_text().endswith("}") and seen_file)
        keys = set(json.loads(seen_file.read_text())["env_keys"])
        assert not {"AWS_SECRET_ACCESS_KEY", "OS_PASSWORD", "SOME_OTHER_SETTING"} & keys
        assert "PATH" in keys and "METCTL_NODE_NAME" in keys
        assert oct(os.stat(d.root / a).st_mode & 0o777) == oct(0o700)
        for name in ("user-data", "profile.json", "node.json", "node.log"):
            assert oct(os.stat(d.root / a / name).st_mode & 0o777) == oct(0o600), name
    finally:
        d.terminate(a)
        assert d.wait_gone(a)


def crashed_mid_launch(d: LocalDriver, instance_id: str) -> None:
    """The record as a controller SIGKILLed inside launch() leaves it: written "starting"
    before the process was spawned, its PID never recorded (seen in the chaos run, issue 11)."""
    path = d.root / instance_id / "node.json"
    rec = json.loads(path.read_text())
    rec.update(state="starting", pid=None, start_time=None)
    path.write_text(json.dumps(rec))


def test_a_node_started_by_a_controller_killed_mid_launch_is_found_and_can_be_stopped(tmp_path):
    d = local(tmp_path, ready_port=True)
    a = d.launch("write", "", {TAG_LAUNCH: "p/0/1"})
    pid = json.loads((d.root / a / "node.json").read_text())["pid"]
    crashed_mid_launch(d, a)
    restarted = local(tmp_path, base_port=d.settings.base_port, ready_port=True)  # the next controller
    try:
        wait_for(lambda: [n.state for n in restarted.nodes()] == ["running"])
        assert json.loads((d.root / a / "node.json").read_text())["pid"] == pid
    finally:
        restarted.terminate(a)
        assert restarted.wait_gone(a)
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


def test_a_launch_killed_before_its_process_started_is_a_failed_node(tmp_path):
    d = local(tmp_path)
    a = d.launch("write", "", {TAG_LAUNCH: "p/0/1"})
    d.terminate(a)
    assert d.wait_gone(a)
    crashed_mid_launch(d, a)  # as if the process had never been started
    assert [(n.instance_id, n.state) for n in local(tmp_path, base_port=d.settings.base_port).nodes()] == [
        (a, "failed")]


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
    # 3 s: long enough that a loaded machine still sees the node stopping before the SIGKILL
    d = local(tmp_path, ignore_term=True, stop_timeout_s=3.0)
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




def test_executor_scales_out_with_a_real_local_node(tmp_path):
    d = local(tmp_path, ready_port=True)
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(scale_out_plan(), "plan-1")
    try:
        assert run_real_time(ex, limit_s=30.0).state == "done"
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
    ex.submit(scale_out_plan(), "plan-1")
    status = run_real_time(ex, limit_s=30.0)
    assert status.state == "abandoned" and "booting" in status.reason
    launched = sorted(p.name for p in d.root.glob("local-demo-*"))
    assert len(launched) == 2
    for iid in launched:
        assert d.wait_gone(iid)
    assert store.calls == []


def test_restart_with_a_profile_keeps_the_node_running_under_its_new_pid(tmp_path):
    d = local(tmp_path, ready_port=True)
    a = d.launch("read", "", {TAG_LAUNCH: "p/0/1"})
    try:
        wait_for(lambda: [n.state for n in d.nodes()] == ["running"])
        before = json.loads((d.root / a / "node.json").read_text())
        d.restart(a, "write")
        after = json.loads((d.root / a / "node.json").read_text())
        assert after["pid"] != before["pid"]
        assert not Path(f"/proc/{before['pid']}").exists() or \
            "Z" in Path(f"/proc/{before['pid']}/stat").read_text().split(")")[1][:3]
        (node,) = wait_for(lambda: (ns := d.nodes()) and ns[0].state == "running" and ns)
        assert node.instance_id == a and node.profile == "write" and node.address == before["address"]
        assert node.tags[TAG_LAUNCH] == "p/0/1"
        assert json.loads((d.root / a / "profile.json").read_text())["profile"] == "write"
        wait_for(lambda: "profile=write" in json.loads((d.root / a / "seen.json").read_text())["argv"])
        # still metctl's own: terminate stops the new process
        d.terminate(a)
        assert d.wait_gone(a)
        assert not Path(f"/proc/{after['pid']}").exists() or \
            "Z" in Path(f"/proc/{after['pid']}/stat").read_text().split(")")[1][:3]
    finally:
        if any(n.instance_id == a for n in d.nodes()):
            d.terminate(a)
            d.wait_gone(a)


def test_local_restarter_restarts_launched_servers_through_the_driver_and_others_by_command(tmp_path):
    from actuator.drivers import DriverError
    from actuator.local import PROFILE_KEY, LocalRestarter

    d = local(tmp_path)
    a = d.launch("read", "", {})
    by_command: list[tuple[str, dict]] = []
    restarter = LocalRestarter(d, fallback=lambda sid, settings: by_command.append((sid, dict(settings))),
                               host_format="{host}:{port}")
    try:
        wait_for(lambda: [n.state for n in d.nodes()] == ["running"])
        pid = json.loads((d.root / a / "node.json").read_text())["pid"]
        port = d.settings.base_port
        restarter(f"127.0.0.1,{port}", {PROFILE_KEY: "scan", "hfile.block.cache.size": "0.5"})
        rec = json.loads((d.root / a / "node.json").read_text())
        assert rec["pid"] != pid and rec["profile"] == "scan" and by_command == []
        restarter("127.0.0.1,16020", {PROFILE_KEY: "write"})  # not a node it launched
        assert by_command == [("127.0.0.1,16020", {PROFILE_KEY: "write"})]
        with pytest.raises(DriverError, match="restart_command"):
            LocalRestarter(d, host_format="{host}:{port}")("127.0.0.1,16020", {PROFILE_KEY: "write"})
    finally:
        d.terminate(a)
        d.wait_gone(a)
