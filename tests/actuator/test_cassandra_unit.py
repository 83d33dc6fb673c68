"""CassandraDriver's pure parts: partition ids, the compaction ALTER per MET class, gossip states,
and the cassandra.yaml the local cluster writes (parsed back with a YAML parser)."""
from __future__ import annotations

import pytest
import yaml

from actuator.cassandra import COMPACTION_FOR_CLASS, GOSSIP_STATES, CassandraDriver, _split
from actuator.drivers import DriverError
from tests.fixtures.cassandra import load_cluster_module


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
    mod = load_cluster_module()
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
