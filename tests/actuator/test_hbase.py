"""Unit tests of the HBase driver's pure parts (the live driver is tested against a real
cluster in tests/integration/test_hbase_*.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from actuator.drivers import DriverError
from actuator.hbase import CommandRestarter, client_settings_from, host_port as _host_port, split_refusal
from actuator.hbase.topology import _meta_row, _meta_server


def test_a_quorum_becomes_hosts_and_one_client_port():
    got = client_settings_from("zk1.example.org:2181, zk2.example.org:2181", "/hbase-prod")
    assert got == {"hbase.zookeeper.quorum": "zk1.example.org,zk2.example.org",
                   "hbase.zookeeper.property.clientPort": "2181", "zookeeper.znode.parent": "/hbase-prod"}


@pytest.mark.parametrize("quorum", ["", "zk1:2181,zk2:2182", "zk1:port", ":2181"])
def test_a_quorum_hbase_cannot_use_is_refused_for_good(quorum):
    with pytest.raises(DriverError) as e:
        client_settings_from(quorum)
    assert e.value.retryable is False
    assert "zookeeper_quorum" in str(e.value)


@given(host=st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True), port=st.integers(1, 65535),
       start=st.integers(0, 2**62))
def test_a_server_id_is_host_and_port_with_or_without_start_code(host, port, start):
    assert _host_port(f"{host},{port}") == f"{host},{port}"
    assert _host_port(f"{host},{port},{start}") == f"{host},{port}"


def test_a_bare_host_is_not_a_server_id():
    with pytest.raises(DriverError):
        _host_port("rs1.example.org")


def test_the_restart_command_gets_the_server_and_a_settings_file(tmp_path):
    out = tmp_path / "seen.txt"
    restart = CommandRestarter(["sh", "-c", f'echo "$0" > {out}; cat "$1" >> {out}', "{server}", "{settings}"])
    restart("rs1.example.org,16020", {"hfile.block.cache.size": "0.55"})
    seen = out.read_text().splitlines()
    assert seen[0] == "rs1.example.org,16020"
    assert '"hfile.block.cache.size": "0.55"' in seen[1]


def test_a_failing_restart_command_is_a_driver_error(tmp_path):
    with pytest.raises(DriverError, match="exit 3|failed \\(3\\)"):
        CommandRestarter(["sh", "-c", "echo broken >&2; exit 3"])("rs1,16020", {})


# The master's refusals as HBase 2.6.4 worded them on the local cluster.
NO_SPLIT_POINT = ("Region not splittable because bestSplitPoint = null, maybe table is too small for "
                  "auto split. For force split, try specifying split row")


@pytest.mark.parametrize("reason, retryable", [
    (NO_SPLIT_POINT, False),
    ("4f1c NOT splittable", True),  # a fresh daughter still referencing its parent's files
    ("4f1c is not OPEN; state=CLOSING", True),  # moving
    ("4f1c is not OPEN; state=MERGED", False),
    ("Split region t,user5,1.4f1c. failed due to split switch off", False),
    ("something HBase has not said before", True),
])
def test_a_refused_split_names_the_region_and_hbases_reason(reason, retryable):
    err = split_refusal("4f1c", reason)
    assert err is not None and err.retryable is retryable
    assert "4f1c" in str(err) and reason in str(err)


@pytest.mark.parametrize("state", ["SPLIT", "SPLITTING"])
def test_a_region_already_split_is_no_refusal(state):
    assert split_refusal("4f1c", f"4f1c is not OPEN; state={state}") is None


def test_a_meta_row_names_its_table_and_encoded_region_even_with_commas_in_the_start_key():
    # hbase:meta's row key is "<table>,<start key>,<region id>.<encoded>."; a start key may hold
    # commas and dots, a table name never holds a comma
    row = b"ns1:orders,user,00.5\x00,1700000000000.0123456789abcdef0123456789abcdef."
    assert _meta_row(row) == ("ns1:orders", "0123456789abcdef0123456789abcdef")
    assert _meta_row(b"t,,1700000000000.") == ("t", None)  # old format: the RegionInfo names it


def test_a_region_on_a_server_that_is_not_live_is_offline():
    live = {"rs1.example,16020"}
    assert _meta_server(b"rs1.example:16020", live) == "rs1.example,16020"
    assert _meta_server(b"rs2.example:16020", live) is None
    assert _meta_server(None, live) is None
