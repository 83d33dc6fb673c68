"""`metctl nodes list|launch|terminate` through the CLI, on moto's EC2 and on local processes:
the daemon's tags and user data, owned nodes only, refusal (exit 2, one line, nothing touched)
for anything metctl did not launch."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import boto3
import pytest

from controller.cli import main

pytestmark = pytest.mark.integration
NODE = Path(__file__).resolve().parents[1] / "actuator" / "local_node.py"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def ec2_config(tmp_path, moto_ec2, cluster: str = "prod") -> str:
    cfg = tmp_path / "ec2.yaml"
    cfg.write_text(f"cluster: {cluster}\ndatastore: {{driver: hbase}}\nmonitor: {{hbase_jmx_urls: ['http://127.0.0.1:16030']}}\ninfrastructure:\n  driver: ec2\n  ec2:\n    region: {moto_ec2.region}\n"
                   f"    endpoint_url: {moto_ec2.endpoint_url}\n    image_id: {moto_ec2.image_id}\n"
                   f"    instance_type: t3.micro\n")
    return str(cfg)


def test_ec2_launch_list_terminate_and_refuse_foreign(tmp_path, moto_ec2, capsys):
    cfg = ec2_config(tmp_path, moto_ec2)
    code, out, err = run(capsys, "nodes", "launch", "--config", cfg, "--profile", "write", "--count", "2",
                         "--wait", "--timeout", "30", "--format", "json")
    assert code == 0, err
    launched = json.loads(out)
    assert len(launched) == 2 and all(n["state"] == "running" and n["profile"] == "write" for n in launched)
    assert all(n["tags"]["metctl:cluster"] == "prod" and n["tags"]["metctl:managed"] == "true" for n in launched)
    ec2 = boto3.client("ec2", region_name=moto_ec2.region, endpoint_url=moto_ec2.endpoint_url)
    foreign = ec2.run_instances(ImageId=moto_ec2.image_id, InstanceType="t3.micro", MinCount=1,
                                MaxCount=1)["Instances"][0]["InstanceId"]
    code, out, err = run(capsys, "nodes", "list", "--config", cfg, "--format", "json")
    assert code == 0 and sorted(n["instance_id"] for n in json.loads(out)) == sorted(n["instance_id"] for n in launched)
    # a foreign id among owned ones: refused, nothing terminated
    mine = launched[0]["instance_id"]
    code, out, err = run(capsys, "nodes", "terminate", "--config", cfg, mine, foreign)
    assert code == 2 and len(err.splitlines()) == 1 and foreign in err and "never terminates" in err
    states = {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances()["Reservations"]
              for i in r["Instances"]}
    assert states[foreign] == "running" and states[mine] == "running"
    code, out, err = run(capsys, "nodes", "terminate", "--config", cfg, mine, "--wait", "--timeout", "30")
    assert code == 0, err
    code, out, err = run(capsys, "nodes", "list", "--config", cfg, "--format", "json")
    assert [n["instance_id"] for n in json.loads(out)] == [launched[1]["instance_id"]]
    # another cluster's config sees none of them and may not terminate them
    other = ec2_config(tmp_path, moto_ec2, cluster="other")
    code, out, err = run(capsys, "nodes", "terminate", "--config", other, launched[1]["instance_id"])
    assert code == 2


def test_ec2_bad_image_is_an_error_not_a_traceback(tmp_path, moto_ec2, capsys):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(f"cluster: demo\ndatastore: {{driver: hbase}}\nmonitor: {{hbase_jmx_urls: ['http://127.0.0.1:16030']}}\ninfrastructure:\n  driver: ec2\n  ec2:\n    region: {moto_ec2.region}\n"
                   f"    endpoint_url: {moto_ec2.endpoint_url}\n    image_id: ami-00000000deadbeef0\n")
    code, out, err = run(capsys, "nodes", "launch", "--config", str(cfg))
    assert code == 1 and "InvalidAMIID" in err and "Traceback" not in err


def test_local_nodes_by_hand(tmp_path, capsys):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = min(sock.getsockname()[1], 60000)
    cfg = tmp_path / "local.yaml"
    cfg.write_text("cluster: lab\ndatastore: {driver: hbase}\nmonitor: {hbase_jmx_urls: ['http://127.0.0.1:16030']}\ninfrastructure:\n  driver: local\n  local:\n"
                   f"    state_dir: {tmp_path / 'nodes'}\n    base_port: {port}\n    ready_port: true\n"
                   f"    command: [{sys.executable}, {NODE}, 'port={{port}}', 'listen=1']\n"
                   "profiles:\n  read: {prefetch_on_open: true}\n")
    code, out, err = run(capsys, "nodes", "launch", "--config", str(cfg), "--profile", "read", "--wait",
                         "--timeout", "20", "--format", "json")
    assert code == 0, err
    (node,) = json.loads(out)
    assert node["address"] == f"127.0.0.1:{port}" and node["state"] == "running"
    # the node starts with the profile as the config changed it
    doc = json.loads((tmp_path / "nodes" / node["instance_id"] / "profile.json").read_text())
    assert doc["profile"] == "read" and doc["hbase_site"]["hbase.rs.prefetchblocksonopen"] == "true"
    code, out, err = run(capsys, "nodes", "list", "--config", str(cfg))
    assert code == 0 and node["instance_id"] in out
    code, out, err = run(capsys, "nodes", "terminate", "--config", str(cfg), "local-lab-99")
    assert code == 2 and "local-lab-99" in err
    code, out, err = run(capsys, "nodes", "terminate", "--config", str(cfg), node["instance_id"], "--wait",
                         "--timeout", "20")
    assert code == 0, err
    code, out, err = run(capsys, "nodes", "list", "--config", str(cfg), "--format", "json")
    assert json.loads(out) == []


def test_the_simulated_driver_has_no_nodes_by_hand(capsys):
    code, out, err = run(capsys, "nodes", "list")
    assert code == 2 and "infrastructure.driver" in err and len(err.splitlines()) == 1
