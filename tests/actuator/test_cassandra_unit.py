"""CassandraDriver's pure parts: partition ids, the compaction ALTER per MET class, gossip states,
and the cassandra.yaml the local cluster writes (parsed back with a YAML parser)."""
from __future__ import annotations

import pytest
import yaml

from actuator.cassandra import COMPACTION_FOR_CLASS, GOSSIP_STATES, CassandraDriver, _split
from actuator.drivers import DriverError
from deploy.local_cassandra import cluster as local_cassandra


def test_partition_ids_are_table_at_address() -> None:
    assert _split("ks.t@127.1.2.3") == ("ks.t", "127.1.2.3")
    for bad in ("ks.t", "t@127.0.0.1", "", "@"):
        with pytest.raises(DriverError) as e:
            _split(bad)
        assert not e.value.retryable


def test_compaction_cql_names_the_strategy_of_each_class() -> None:
    d = CassandraDriver(session=None, admin=None)  # type: ignore[arg-type]
    assert d.compaction_cql("ks.t", "read") == "ALTER TABLE ks.t WITH compaction = {'class': 'LeveledCompactionStrategy'}"
    assert "SizeTiered" in d.compaction_cql("ks.t", "write")
    assert set(COMPACTION_FOR_CLASS) == {"read", "write", "read_write", "scan"}


def test_moves_are_refused_not_retried() -> None:
    d = CassandraDriver(session=None, admin=None)  # type: ignore[arg-type]
    with pytest.raises(DriverError) as e:
        d.move_partition("ks.t@127.0.0.2", "127.0.0.3")
    assert not e.value.retryable
    assert d.partitions() == [] and d.set_balancer(True) is False


def test_gossip_states_map_to_un_uj_ul() -> None:
    assert (GOSSIP_STATES["NORMAL"], GOSSIP_STATES["BOOT"], GOSSIP_STATES["LEAVING"]) == \
        ("active", "starting", "draining")


def test_local_cassandra_yaml_round_trips(tmp_path) -> None:
    mod = local_cassandra
    c = mod.LocalCassandra(tmp_path)
    n1 = c.define_node()
    n2 = c.define_node({"key_cache_size": "48MiB"})
    y1 = yaml.safe_load((tmp_path / "conf" / "n1" / "cassandra.yaml").read_text())
    y2 = yaml.safe_load((tmp_path / "conf" / "n2" / "cassandra.yaml").read_text())
    assert y1["listen_address"] == n1.address and y2["rpc_address"] == n2.address
    assert n1.address.rsplit(".", 1)[0] == n2.address.rsplit(".", 1)[0] and n1.address != n2.address
    assert y2["seed_provider"][0]["parameters"][0]["seeds"] == f"{n1.address}:{c.storage_port}"
    assert y2["key_cache_size"] == "48MiB" and y1["key_cache_size"] == "16MiB"
    assert y1["data_file_directories"] == [str(tmp_path.resolve() / "data" / "n1" / "data")]
    assert c.status()["nodes"]["n1"]["running"] is False
    c.stop()  # nothing started: nothing signalled


# A stand-in NodeTool / restart script: a real process that records its argv (and, for a
# restart, the settings file it was handed) and exits with the code asked for.
RECORDER = """\
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
args = sys.argv[2:]
doc = {"argv": args}
if "--settings" in args:
    doc["settings"] = json.loads(pathlib.Path(args[args.index("--settings") + 1]).read_text())
with out.open("a") as f:
    f.write(json.dumps(doc) + "\\n")
print("recorded", *args)
sys.exit(int(args[-1]) if args and args[-1].isdigit() and "exit" in args else 0)
"""


def _recorder(tmp_path):
    import json
    import sys

    script = tmp_path / "recorder.py"
    script.write_text(RECORDER)
    calls = tmp_path / "calls.jsonl"

    def read():
        return [json.loads(ln) for ln in calls.read_text().splitlines()] if calls.exists() else []
    return [sys.executable, str(script), str(calls)], read


def test_command_nodetool_fills_the_address_and_appends_nodetool_arguments(tmp_path) -> None:
    from actuator.cassandra import CommandNodeTool

    base, calls = _recorder(tmp_path)
    admin = CommandNodeTool([*base, "-h", "{address}", "-p", "7199"], log_dir=tmp_path / "state")
    driver = CassandraDriver(session=None, admin=admin)  # type: ignore[arg-type]
    driver._start_op("127.9.9.2", "cleanup", "cleanup")
    assert admin_wait(driver, "127.9.9.2", "cleanup") == 0
    assert calls() == [{"argv": ["-h", "127.9.9.2", "-p", "7199", "cleanup"]}]
    # NodeTool's output is kept for the operator, one log per node
    assert "recorded -h 127.9.9.2" in (tmp_path / "state" / "nodetool-127.9.9.2.log").read_text()


def admin_wait(driver: CassandraDriver, address: str, op: str) -> int:
    driver._ops[(address, op)].wait(timeout=30)
    return driver.op_result(address, op)  # type: ignore[return-value]


def test_command_restart_hands_the_profile_settings_and_remembers_the_profile(tmp_path) -> None:
    from actuator.cassandra import PROFILE_SETTINGS, CommandNodeTool

    base, calls = _recorder(tmp_path)
    template = [*base, "restart-node", "{address}", "--profile", "{profile}", "--settings", "{settings}"]
    admin = CommandNodeTool(["nodetool"], template, log_dir=tmp_path / "state")
    driver = CassandraDriver(session=None, admin=admin)  # type: ignore[arg-type]
    assert admin.profile_of("127.9.9.3") is None
    driver.restart_server("127.9.9.3", "read")
    (call,) = calls()
    assert call["argv"][:4] == ["restart-node", "127.9.9.3", "--profile", "read"]
    assert call["settings"] == PROFILE_SETTINGS["read"]
    # a restarted metctl (a new admin on the same state dir) still knows the node's profile
    assert CommandNodeTool(["nodetool"], template, log_dir=tmp_path / "state").profile_of("127.9.9.3") == "read"


def test_a_failing_or_missing_restart_command_is_a_driver_error(tmp_path) -> None:
    from actuator.cassandra import CommandNodeTool

    base, _ = _recorder(tmp_path)
    failing = CassandraDriver(None, CommandNodeTool(["nodetool"], [*base, "exit", "3"],  # type: ignore[arg-type]
                                                    log_dir=tmp_path))
    with pytest.raises(DriverError, match=r"restart of 127.9.9.4 failed \(3\)") as e:
        failing.restart_server("127.9.9.4", "write")
    assert e.value.retryable
    none = CassandraDriver(None, CommandNodeTool(["nodetool"], (), log_dir=tmp_path))  # type: ignore[arg-type]
    with pytest.raises(DriverError, match="restart_command") as e:
        none.restart_server("127.9.9.4", "write")
    assert not e.value.retryable  # retrying cannot help: the plan stops at a consistent point
