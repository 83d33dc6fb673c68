"""The OpenStack driver with the REAL openstacksdk over HTTP against the loopback Keystone v3 +
Nova v2.1 + Glance double (tests/fixtures/openstack_api.py)."""
from __future__ import annotations

import json
import logging
import time

import pytest

from actuator.drivers import TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DriverError, NotOwnedError
from actuator.executor import Executor
from tests.fakes.cluster import MirrorDataStore
from actuator.journal import Journal
from actuator.openstack import OpenStackDriver
from actuator.settings import ExecutorSettings, OpenStackSettings
from actuator.userdata import render_user_data
from tests.actuator.plans import run_real_time, scale_out_plan
from tests.fixtures.openstack_api import IMAGES, PASSWORD

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")]


def driver(cluster: str = "demo", **kw) -> OpenStackDriver:
    settings = OpenStackSettings(cloud=kw.pop("cloud", "double"), image=kw.pop("image", "hbase-node"),
                                 flavor=kw.pop("flavor", "m1.medium"), wait_interval_s=0.1, **kw)
    return OpenStackDriver(settings, cluster)


def tags(profile: str, token: str = "plan-x/0/1") -> dict[str, str]:
    return {TAG_MANAGED: "true", TAG_CLUSTER: "demo", TAG_PROFILE: profile, TAG_LAUNCH: token}


def test_launch_creates_a_server_with_metadata_user_data_key_and_groups(openstack_api):
    openstack_api.build_s = 3.0
    d = driver(key_name="ops", security_groups=("hbase",))
    user_data = render_user_data("demo", "scan")
    iid = d.launch("scan", user_data, tags("scan"))
    srv = openstack_api.servers[iid]
    assert srv["metadata"] == tags("scan") and srv["user_data"] == user_data
    assert srv["imageRef"] == IMAGES[0]["id"] and srv["flavor"]["name"] == "m1.medium"
    assert srv["key_name"] == "ops" and srv["security_groups"] == [{"name": "hbase"}]
    assert srv["name"].startswith("metctl-demo-")
    (node,) = d.nodes()
    assert node.state == "booting" and node.address is None and node.profile == "scan"
    ready = d.wait_running(iid, timeout_s=10)
    assert ready.state == "running" and ready.address == srv["ip"]
    paths = [p for _, p in openstack_api.requests]
    assert not any("floating" in p or "/network" in p or "/v2.0/" in p for p in paths)  # auto_ip off


def test_environment_variables_work_without_clouds_yaml(openstack_api, monkeypatch):
    monkeypatch.delenv("OS_CLIENT_CONFIG_FILE")
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", "/nonexistent/clouds.yaml")
    for k, v in {"OS_AUTH_URL": openstack_api.auth_url, "OS_USERNAME": "metctl", "OS_PASSWORD": PASSWORD,
                 "OS_PROJECT_NAME": "demo", "OS_USER_DOMAIN_NAME": "Default",
                 "OS_PROJECT_DOMAIN_NAME": "Default", "OS_REGION_NAME": "RegionOne",
                 "OS_IDENTITY_API_VERSION": "3"}.items():
        monkeypatch.setenv(k, v)
    d = driver(cloud=None)
    iid = d.launch("read", "", tags("read"))
    assert [n.instance_id for n in d.nodes()] == [iid]


def test_only_servers_with_our_metadata_are_listed_or_deleted(openstack_api):
    d, other = driver(), driver(cluster="other")
    mine = d.launch("read", "", tags("read"))
    theirs = other.launch("read", "", {TAG_LAUNCH: "o/0/1"})
    # a server someone created by hand (no metctl metadata), through the same SDK
    conn = d.conn
    foreign = conn.create_server("hand-made", image="hbase-node", flavor="m1.small", auto_ip=False, wait=False)["id"]
    assert [n.instance_id for n in d.nodes()] == [mine]
    for iid in (foreign, theirs, "00000000-0000-0000-0000-000000000000"):
        with pytest.raises(NotOwnedError):
            d.terminate(iid)
    d.terminate(mine)
    d.wait_terminated(mine, timeout_s=10)
    assert d.nodes() == [] and {s["id"] for s in openstack_api.live()} == {foreign, theirs}


def test_quota_and_bad_image_are_not_retryable(openstack_api):
    openstack_api.max_servers = 0
    with pytest.raises(DriverError) as err:
        driver().launch("read", "", tags("read"))
    assert "403" in str(err.value) and "Quota exceeded" in str(err.value) and not err.value.retryable
    openstack_api.max_servers = 10
    with pytest.raises(DriverError) as err:
        driver(image="no-such-image").launch("read", "", tags("read"))
    assert not err.value.retryable




def test_executor_scales_out_through_nova(openstack_api, tmp_path, capsys):
    d = driver()
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(scale_out_plan(), "plan-1")
    t0 = time.monotonic()
    assert run_real_time(ex, limit_s=30.0).state == "done"
    (node,) = d.nodes()
    assert store.layout["p0"] == f"{node.address},16020"
    with capsys.disabled():
        print(f"\nopenstack double (BUILD {openstack_api.build_s} s): scale-out plan {time.monotonic() - t0:.2f} s")


def test_a_server_stuck_in_build_is_retried_then_abandoned_and_deleted(openstack_api, tmp_path):
    openstack_api.never_active = True
    d = driver()
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    settings = ExecutorSettings(booting_timeout_s=0.5, launch_attempts=2, launch_backoff_s=0.1)
    ex = Executor(d, store, settings, time.time, "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(scale_out_plan(), "plan-1")
    status = run_real_time(ex, limit_s=30.0)
    assert status.state == "abandoned" and "booting" in status.reason
    posts = [p for m, p in openstack_api.requests if m == "POST" and p.endswith("/servers")]
    deletes = [p for m, p in openstack_api.requests if m == "DELETE"]
    assert len(posts) == 2 and len(set(deletes)) == 2
    time.sleep(openstack_api.delete_s + 0.1)
    assert openstack_api.live() == [] and store.calls == []


def test_nova_quota_abandons_the_plan(openstack_api, tmp_path):
    openstack_api.max_servers = 0
    d = driver()
    ex = Executor(d, MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")}), ExecutorSettings(), time.time,
                  "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(scale_out_plan(), "plan-q")
    status = run_real_time(ex, limit_s=30.0)
    assert status.state == "abandoned" and "Quota exceeded" in status.reason
    assert len([1 for m, p in openstack_api.requests if m == "POST" and p.endswith("/servers")]) == 1


def test_password_and_token_never_reach_logs_journal_or_status(openstack_api, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    d = driver()
    journal_path = tmp_path / "j.sqlite"
    ex = Executor(d, MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")}), ExecutorSettings(), time.time,
                  "demo", Journal(journal_path))
    ex.submit(scale_out_plan(), "plan-c")
    assert run_real_time(ex, limit_s=30.0).state == "done"
    with pytest.raises(DriverError) as err:
        driver(image="no-such-image").launch("read", "", tags("read"))
    ex.journal.close()
    from controller.cli import main

    assert main(["status", "--journal", str(journal_path), "--format", "json"]) == 0
    out = capsys.readouterr().out
    texts = [caplog.text, out, str(err.value), journal_path.read_bytes().decode("latin-1"),
             json.dumps(ex.status().to_dict())]
    assert openstack_api.tokens
    for text in texts:
        assert PASSWORD not in text
        for token in openstack_api.tokens:
            assert token not in text
