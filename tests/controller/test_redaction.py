"""No credential in any output or file: an OpenStack whose error bodies echo the request (the
password included) through `metctl nodes`, the executor's journal and `metctl status`; files
metctl writes are private."""
from __future__ import annotations

import os
import stat
import time

from actuator.executor import Executor
from tests.fakes.cluster import MirrorDataStore
from actuator.journal import Journal
from actuator.openstack import OpenStackDriver
from actuator.settings import ExecutorSettings, OpenStackSettings
from common.redact import redact
from controller.cli import main
from tests.actuator.plans import run_real_time, scale_out_plan
from tests.fixtures.openstack_api import PASSWORD


def os_config(tmp_path) -> str:
    cfg = tmp_path / "os.yaml"
    cfg.write_text("cluster: demo\ndatastore: {driver: hbase}\nmonitor: {hbase_jmx_urls: ['http://127.0.0.1:16030']}\ninfrastructure:\n  driver: openstack\n  openstack:\n    cloud: double\n"
                   "    image: hbase-node\n    wait_interval_s: 0.1\n")
    return str(cfg)


def test_nodes_commands_never_print_an_echoed_password(tmp_path, openstack_api, capsys):
    openstack_api.echo_errors = True
    cfg = os_config(tmp_path)
    for argv in (["nodes", "list", "--config", cfg],
                 ["nodes", "launch", "--config", cfg, "--profile", "write"]):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code != 0 and err.startswith("metctl:") and len(err.splitlines()) == 1, err
        assert PASSWORD not in out + err and "***" in err, err


def test_the_journal_and_status_never_hold_an_echoed_password(tmp_path, openstack_api, capsys):
    openstack_api.echo_errors = True
    d = OpenStackDriver(OpenStackSettings(cloud="double", image="hbase-node", wait_interval_s=0.1), "demo")
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    path = tmp_path / "state" / "j.sqlite"
    ex = Executor(d, store, ExecutorSettings(launch_attempts=1), time.time, "demo", Journal(path))
    ex.submit(scale_out_plan(), "plan-1")
    run_real_time(ex, limit_s=20.0)
    ex.journal.close()
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir())
    assert PASSWORD.encode() not in raw and b"***" in raw
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    for fmt in ("table", "json"):
        assert main(["status", "--journal", str(path), "--format", fmt]) == 0
        out, err = capsys.readouterr()
        assert PASSWORD not in out + err


def test_redaction_covers_the_shapes_error_bodies_take():
    for text in (f'{{"password": "{PASSWORD}"}}', f"password={PASSWORD}", f"'password': '{PASSWORD}'",
                 f"https://u:{PASSWORD}@h/x", f"X-Auth-Token: {PASSWORD}"):
        assert PASSWORD not in redact(text), text
