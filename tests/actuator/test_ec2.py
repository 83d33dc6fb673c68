"""The EC2 driver against a real moto EC2 server on loopback (AMI and instance-type validation
on), through boto3 with endpoint_url and the standard credential chain."""
from __future__ import annotations

import base64
import json
import logging
import time

import boto3
import pytest

from actuator.drivers import TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DriverError, NotOwnedError
from actuator.ec2 import Ec2Driver
from actuator.executor import Executor
from tests.fakes.cluster import MirrorDataStore
from actuator.journal import Journal
from actuator.settings import Ec2Settings, ExecutorSettings
from actuator.userdata import render_user_data
from tests.actuator.plans import run_real_time, scale_out_plan

pytestmark = pytest.mark.integration


def raw(moto_ec2, service: str = "ec2"):
    return boto3.client(service, region_name=moto_ec2.region, endpoint_url=moto_ec2.endpoint_url)


def driver(moto_ec2, cluster: str = "demo", endpoint: str | None = None, **kw) -> Ec2Driver:
    settings = Ec2Settings(region=moto_ec2.region, endpoint_url=endpoint or moto_ec2.endpoint_url,
                           image_id=moto_ec2.image_id, instance_type=kw.pop("instance_type", "t3.micro"), **kw)
    return Ec2Driver(settings, cluster)


def tags(profile: str, token: str = "plan-x/0/1") -> dict[str, str]:
    return {TAG_MANAGED: "true", TAG_CLUSTER: "demo", TAG_PROFILE: profile, TAG_LAUNCH: token}


def test_launch_sets_image_type_network_key_profile_tags_and_user_data(moto_ec2):
    ec2, iam = raw(moto_ec2), raw(moto_ec2, "iam")
    subnet = ec2.describe_subnets()["Subnets"][0]
    sg = ec2.create_security_group(GroupName="hbase", Description="hbase rs", VpcId=subnet["VpcId"])["GroupId"]
    ec2.create_key_pair(KeyName="ops")
    iam.create_instance_profile(InstanceProfileName="hbase-node")
    d = driver(moto_ec2, instance_type="m5.large", subnet_id=subnet["SubnetId"], security_group_ids=(sg,),
               key_name="ops", iam_instance_profile="hbase-node", extra_tags={"team": "storage"})
    user_data = render_user_data("demo", "write")
    iid = d.launch("write", user_data, tags("write"))
    inst = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]
    assert inst["ImageId"] == moto_ec2.image_id and inst["InstanceType"] == "m5.large"
    assert inst["SubnetId"] == subnet["SubnetId"] and inst["KeyName"] == "ops"
    assert [g["GroupId"] for g in inst["SecurityGroups"]] == [sg]
    assert inst["IamInstanceProfile"]["Arn"].endswith("instance-profile/hbase-node")
    got_tags = {t["Key"]: t["Value"] for t in inst["Tags"]}
    assert got_tags == {**tags("write"), "team": "storage"}
    attr = ec2.describe_instance_attribute(InstanceId=iid, Attribute="userData")["UserData"]["Value"]
    text = base64.b64decode(attr).decode()
    assert text == user_data and '"profile": "write"' in text
    (node,) = d.nodes()
    assert node.instance_id == iid and node.profile == "write" and node.state == "running"
    assert node.address == inst["PrivateDnsName"] and node.tags[TAG_LAUNCH] == "plan-x/0/1"
    running = d.wait_running(iid, timeout_s=30, interval_s=1)
    assert running.state == "running"


def test_only_owned_nodes_are_listed_and_terminated(moto_ec2):
    ec2 = raw(moto_ec2)
    d, other = driver(moto_ec2), driver(moto_ec2, cluster="other")
    foreign = ec2.run_instances(ImageId=moto_ec2.image_id, InstanceType="t3.micro", MinCount=1,
                                MaxCount=1)["Instances"][0]["InstanceId"]
    mine = d.launch("read", "", tags("read"))
    theirs = other.launch("read", "", {TAG_LAUNCH: "p/0/1"})
    assert [n.instance_id for n in d.nodes()] == [mine]
    assert [n.instance_id for n in other.nodes()] == [theirs]
    with pytest.raises(NotOwnedError):
        d.terminate(foreign)
    with pytest.raises(NotOwnedError):
        d.terminate(theirs)
    with pytest.raises(NotOwnedError):
        d.terminate("i-0123456789abcdef0")
    d.terminate(mine)
    d.wait_terminated(mine, timeout_s=30, interval_s=1)
    assert d.nodes() == []
    d.terminate(mine)  # idempotent on an already terminated node
    states = {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances()["Reservations"]
              for i in r["Instances"]}
    assert states[foreign] == "running" and states[theirs] == "running" and states[mine] == "terminated"


@pytest.mark.parametrize("field,value,code", [
    ("image_id", "ami-00000000deadbeef0", "InvalidAMIID"),
    ("instance_type", "m9.gigantic", "InvalidInstanceType"),
])
def test_bad_ids_fail_as_on_aws_and_are_not_retried(moto_ec2, field, value, code):
    settings = Ec2Settings(region=moto_ec2.region, endpoint_url=moto_ec2.endpoint_url,
                           image_id=moto_ec2.image_id, instance_type="t3.micro").model_copy(update={field: value})
    with pytest.raises(DriverError) as err:
        Ec2Driver(settings, "demo").launch("read", "", tags("read"))
    assert code in str(err.value) and err.value.retryable is False




def test_executor_scales_out_on_moto_and_reports_launch_to_ready(moto_ec2, tmp_path, capsys):
    d = driver(moto_ec2)
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(tmp_path / "j.sqlite"))
    ex.submit(scale_out_plan(), "plan-1")
    t0 = time.monotonic()
    ready_after = None
    status = ex.tick()
    while status.state == "running" and time.monotonic() - t0 < 60:
        if ready_after is None and status.actions_done >= 1:  # the launch is the first action
            ready_after = time.monotonic() - t0
        time.sleep(0.01)
        status = ex.tick()
    elapsed = time.monotonic() - t0
    assert status.state == "done", status
    (node,) = d.nodes()
    assert store.layout["p0"] == f"{node.address},16020"
    # the driver alone: launch -> listed as running, five times
    direct = []
    for k in range(5):
        t1 = time.monotonic()
        iid = d.launch("read", "", tags("read", f"direct/{k}/1"))
        while next(n for n in d.nodes() if n.instance_id == iid).state != "running":
            time.sleep(0.01)
        direct.append(time.monotonic() - t1)
    with capsys.disabled():
        print(f"\nmoto: executor launch-to-ready {ready_after or elapsed:.3f} s, whole scale-out plan "
              f"{elapsed:.3f} s; driver launch-to-running min/median/max "
              f"{min(direct):.3f}/{sorted(direct)[2]:.3f}/{max(direct):.3f} s")


def test_quota_error_abandons_the_plan_without_retrying(moto_ec2, ec2_quota_proxy, tmp_path):
    ec2_quota_proxy.limit = 0
    d = driver(moto_ec2, endpoint=ec2_quota_proxy.url)
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    ex = Executor(d, store, ExecutorSettings(launch_backoff_s=0), time.time, "demo",
                  Journal(tmp_path / "j.sqlite"))
    ex.submit(scale_out_plan(), "plan-q")
    status = run_real_time(ex)
    assert status.state == "abandoned" and "InstanceLimitExceeded" in status.reason
    assert ec2_quota_proxy.refused == 1  # quota is not retried
    assert d.nodes() == [] and store.calls == []


def test_quota_then_room_again_a_retryable_capacity_error_is_retried(moto_ec2, ec2_quota_proxy):
    # driver-level: quota is fatal, everything else (e.g. a connection refused) is retryable
    ec2_quota_proxy.limit = 0
    d = driver(moto_ec2, endpoint=ec2_quota_proxy.url)
    with pytest.raises(DriverError) as err:
        d.launch("read", "", tags("read"))
    assert err.value.retryable is False
    dead = driver(moto_ec2, endpoint="http://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(DriverError) as err:
        dead.nodes()
    assert err.value.retryable is True


def test_credentials_never_reach_logs_journal_or_status(moto_ec2, tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    d = driver(moto_ec2)
    store = MirrorDataStore(d, static={"rs1,16020": ("p0", "p1")})
    journal_path = tmp_path / "j.sqlite"
    ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(journal_path))
    ex.submit(scale_out_plan(), "plan-c")
    assert run_real_time(ex).state == "done"
    bad = Ec2Driver(Ec2Settings(region=moto_ec2.region, endpoint_url=moto_ec2.endpoint_url,
                                image_id="ami-00000000deadbeef0"), "demo")
    with pytest.raises(DriverError) as err:
        bad.launch("read", "", tags("read"))
    ex.journal.close()
    from controller.cli import main

    assert main(["status", "--journal", str(journal_path), "--format", "json"]) == 0
    status_out = capsys.readouterr().out
    everything = [caplog.text, status_out, str(err.value), journal_path.read_bytes().decode("latin-1"),
                  json.dumps(ex.status().to_dict())]
    for text in everything:
        assert moto_ec2.secret not in text
    metctl_logs = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("metctl"))
    assert moto_ec2.key_id not in metctl_logs and "launched" in metctl_logs
