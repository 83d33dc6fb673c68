"""Adopting nodes metctl did not launch (infrastructure.adopt): only an adopted node of an
existing cluster is terminated by a scale-in; any other is drained (its server decommissioned)
and left running, with the reason in the journal and in `metctl status`. Against a real moto EC2
server and real local processes; the config checks through `metctl validate`."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

from actuator import adoption
from actuator.drivers import TAG_CLUSTER, TAG_MANAGED, NotOwnedError
from actuator.ec2 import Ec2Driver
from actuator.executor import Executor
from tests.fakes.cluster import MirrorDataStore
from actuator.journal import Journal
from actuator.local import LocalDriver, _proc_start_time
from actuator.settings import AdoptEntry, Ec2Settings, ExecutorSettings, LocalSettings
from controller.cli import main
from decision.model import Action
from tests.actuator.plans import make_plan, run_real_time
from tests.actuator.test_local import free_base_port

KEPT = "rs1,16020"


def scale_in_plan(leaving: dict[str, str]) -> object:
    """Remove each server of `leaving` (server id -> its partition): move the partition to the
    kept server, drain, terminate."""
    actions = [Action("move", "scale in", partition=p, source=sid, target=KEPT, cause="scale_in")
               for sid, p in leaving.items()]
    for sid in leaving:
        actions += [Action("drain", "scale in", node=sid, cause="scale_in"),
                    Action("terminate", "scale in", node=sid, cause="scale_in")]
    return make_plan(actions, {KEPT: ("default", ["p0", *leaving.values()])})


def status_of(capsys, journal_path: Path) -> tuple[dict, str]:
    assert main(["status", "--journal", str(journal_path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["status", "--journal", str(journal_path)]) == 0
    return doc, capsys.readouterr().out


# ------------------------------------------------------------------ who counts as owned


def test_an_entry_matches_only_when_every_criterion_it_gives_matches():
    entries = (AdoptEntry(tags={"Role": "hbase-rs"}, hosts=("rs7",)), AdoptEntry(instance_ids=("i-1",)))
    match = lambda iid, host, tags: adoption.adopted(entries, "prod", instance_id=iid, address=host, tags=tags)
    assert match("i-9", "rs7", {"Role": "hbase-rs", "team": "x"})
    assert not match("i-9", "rs8", {"Role": "hbase-rs"})  # tag matches, host does not
    assert not match("i-9", "rs7", {"Role": "zookeeper"})
    assert match("i-1", None, {})
    # another metctl cluster's node is never adopted, whatever the entry says
    assert not match("i-1", None, {TAG_MANAGED: "true", TAG_CLUSTER: "staging"})
    assert adoption.owned((), "prod", instance_id="i-2", address=None,
                          tags={TAG_MANAGED: "true", TAG_CLUSTER: "prod"})


@pytest.mark.parametrize("adopt, expected", [
    ("[{}]", "needs instance_ids, hosts or tags"),
    ("[{tags: {'metctl:managed': 'true'}}]", "metctl:* tags mark the nodes metctl launched"),
    ("[{hostz: [rs1]}]", "hostz"),
])
def test_a_bad_adopt_entry_is_refused_in_one_line_naming_the_key(tmp_path, capsys, adopt, expected):
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text(f"cluster: prod\ndatastore: {{driver: hbase}}\ninfrastructure:\n  driver: ec2\n  adopt: {adopt}\n")
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "infrastructure.adopt" in err and expected in err


def test_the_local_driver_adopts_by_host_and_port_only(tmp_path, capsys):
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text("cluster: demo\ndatastore: {driver: hbase}\nmonitor: {hbase_jmx_urls: ['http://127.0.0.1:16030']}\n"
                   "infrastructure:\n  driver: local\n  adopt: [{instance_ids: [i-1]}]\n")
    assert main(["validate", str(cfg)]) == 2
    assert "adopts by hosts only" in capsys.readouterr().err
    cfg.write_text("cluster: demo\ndatastore: {driver: hbase}\nmonitor: {hbase_jmx_urls: ['http://127.0.0.1:16030']}\n"
                   "infrastructure:\n  driver: local\n  adopt: [{hosts: [localhost]}]\n")
    assert main(["validate", str(cfg)]) == 2
    assert "host:port" in capsys.readouterr().err
    cfg.write_text("cluster: demo\ndatastore: {driver: hbase}\nmonitor: {hbase_jmx_urls: ['http://127.0.0.1:16030']}\n"
                   "infrastructure:\n  driver: local\n  adopt: [{hosts: ['localhost:16020']}]\n")
    assert main(["validate", str(cfg)]) == 0


# ------------------------------------------------------------------ EC2 (moto)


@pytest.mark.integration
def test_ec2_scale_in_terminates_the_adopted_instance_and_only_drains_the_untagged_one(moto_ec2, tmp_path, capsys):
    ec2 = boto3.client("ec2", region_name=moto_ec2.region, endpoint_url=moto_ec2.endpoint_url)

    def existing(tags: dict[str, str]) -> dict:
        spec = [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]
        return ec2.run_instances(ImageId=moto_ec2.image_id, InstanceType="t3.micro", MinCount=1, MaxCount=1,
                                 TagSpecifications=spec)["Instances"][0]

    untagged, adopted = existing({"Name": "rs-a"}), existing({"Name": "rs-b", "Role": "hbase-rs"})
    by_id = {adopted["InstanceId"]: adopted, untagged["InstanceId"]: untagged}
    host = {iid: inst["PrivateDnsName"] for iid, inst in by_id.items()}
    settings = Ec2Settings(region=moto_ec2.region, endpoint_url=moto_ec2.endpoint_url, image_id=moto_ec2.image_id)
    d = Ec2Driver(settings, "demo", adopt=(AdoptEntry(tags={"Role": "hbase-rs"}),))
    assert [(n.instance_id, n.adopted) for n in d.nodes()] == [(adopted["InstanceId"], True)]
    with pytest.raises(NotOwnedError, match="infrastructure.adopt"):
        d.terminate(untagged["InstanceId"])

    sid = {iid: f"{h},16020" for iid, h in host.items()}
    store = MirrorDataStore(d, static={KEPT: ("p0",), sid[untagged["InstanceId"]]: ("pa",),
                                       sid[adopted["InstanceId"]]: ("pb",)})
    journal_path = tmp_path / "j.sqlite"
    ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(journal_path))
    ex.submit(scale_in_plan({sid[untagged["InstanceId"]]: "pa", sid[adopted["InstanceId"]]: "pb"}), "plan-in")
    assert run_real_time(ex).state == "done"
    states = {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances()["Reservations"]
              for i in r["Instances"]}
    assert states[untagged["InstanceId"]] == "running"
    assert states[adopted["InstanceId"]] in ("shutting-down", "terminated")
    assert {c for c in store.calls if c[0] == "decommission"} == {("decommission", s) for s in sid.values()}
    ex.journal.close()

    doc, table = status_of(capsys, journal_path)
    why = (f"drained, not terminated: metctl did not launch {host[untagged['InstanceId']]}; adopt it "
           "with infrastructure.adopt to let metctl terminate it")
    terms = {a["node"]: a for a in doc["actions"] if a["op"] == "terminate"}
    assert terms[sid[untagged["InstanceId"]]]["state"] == "skipped"
    assert terms[sid[untagged["InstanceId"]]]["note"] == why
    assert terms[sid[adopted["InstanceId"]]]["state"] == "done"
    assert terms[sid[adopted["InstanceId"]]]["instance_id"] == adopted["InstanceId"]
    assert "drained, not terminated" in table and "infrastructure.adopt" in table
    assert any(why in e["message"] for e in Journal(journal_path, readonly=True).events("plan-in"))


# ------------------------------------------------------------------ OpenStack (Nova double)


@pytest.mark.integration
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")
def test_openstack_adopts_servers_by_metadata_or_id_never_another_clusters(openstack_api):
    from actuator.openstack import OpenStackDriver
    from actuator.settings import OpenStackSettings

    settings = OpenStackSettings(cloud="double", image="hbase-node", wait_interval_s=0.1)
    plain = OpenStackDriver(settings, "demo")
    conn = plain.conn
    make = lambda name, meta: conn.create_server(name, image="hbase-node", flavor="m1.small", auto_ip=False,
                                                  wait=False, meta=meta)["id"]
    by_meta, by_id = make("rs-a", {"Role": "hbase-rs"}), make("rs-b", {})
    stranger = make("zk-1", {"Role": "zookeeper"})
    others = make("rs-c", {"Role": "hbase-rs", TAG_MANAGED: "true", TAG_CLUSTER: "staging"})
    d = OpenStackDriver(settings, "demo", adopt=(AdoptEntry(tags={"Role": "hbase-rs"}),
                                                 AdoptEntry(instance_ids=(by_id,))))
    assert sorted((n.instance_id, n.adopted) for n in d.nodes()) == sorted([(by_meta, True), (by_id, True)])
    for iid in (stranger, others):
        with pytest.raises(NotOwnedError, match="infrastructure.adopt"):
            d.terminate(iid)
    d.terminate(by_meta)
    d.wait_terminated(by_meta, timeout_s=10)
    assert {s["id"] for s in openstack_api.live()} == {by_id, stranger, others}


# ------------------------------------------------------------------ local processes


def _listener(port: int) -> int:
    """The PID of a process listening on 127.0.0.1:port that metctl did not start and that is
    not the test's child either (started through a shell that exits at once), as a RegionServer
    started by hand is to the controller."""
    code = ("import os, socket, time\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            f"s.bind(('127.0.0.1', {port}))\ns.listen()\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0" &', code], stdout=subprocess.PIPE,
                             start_new_session=True)
    pid = int(shell.stdout.readline())
    shell.wait()
    return pid


def _gone(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _proc_start_time(pid) is None:  # exited (a zombie counts as gone)
            return True
        time.sleep(0.05)
    return False


@pytest.mark.integration
def test_local_scale_in_stops_the_adopted_process_and_only_drains_the_other(tmp_path, capsys):
    port_a = free_base_port()
    port_b = port_a + 1 if port_a < 60000 else port_a - 1
    untagged, adopted = _listener(port_a), _listener(port_b)
    started = {pid: _proc_start_time(pid) for pid in (untagged, adopted)}
    try:
        host_a, host_b = f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"
        settings = LocalSettings(state_dir=str(tmp_path / "nodes"), base_port=free_base_port(),
                                 stop_timeout_s=5)
        d = LocalDriver(settings, "demo", adopt=(AdoptEntry(hosts=(host_b,)),))
        (node,) = d.nodes()
        assert node.adopted and node.address == host_b and node.state == "running"
        assert node.instance_id == f"local-demo-adopted-{port_b}-{adopted}"

        sid_a, sid_b = f"{host_a},16020", f"{host_b},16020"
        store = MirrorDataStore(d, static={KEPT: ("p0",), sid_a: ("pa",), sid_b: ("pb",)})
        journal_path = tmp_path / "j.sqlite"
        ex = Executor(d, store, ExecutorSettings(), time.time, "demo", Journal(journal_path))
        ex.submit(scale_in_plan({sid_a: "pa", sid_b: "pb"}), "plan-in")
        assert run_real_time(ex, limit_s=30).state == "done"
        assert _gone(adopted)  # stopped by its PID
        assert _proc_start_time(untagged) == started[untagged]  # never signalled
        assert d.nodes() == []  # gone, and not adopted again
        ex.journal.close()

        doc, _ = status_of(capsys, journal_path)
        terms = {a["node"]: a for a in doc["actions"] if a["op"] == "terminate"}
        assert terms[sid_a]["state"] == "skipped" and terms[sid_a]["note"].startswith(
            f"drained, not terminated: metctl did not launch {host_a};")
        assert terms[sid_b]["state"] == "done"
    finally:
        for pid, start in started.items():
            if _proc_start_time(pid) == start:  # still that process: never a PID reuser
                os.kill(pid, signal.SIGKILL)
