"""Reading and writing ClusterSnapshots: full validation, one BadInput line, exact round trip."""
from __future__ import annotations

import copy
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from controller.errors import BadInput
from controller.snapshot_io import (
    dump_snapshot,
    is_snapshot_data,
    read_snapshot,
    snapshot_from_data,
    snapshot_to_dict,
    write_snapshot,
)
from decision.model import NODE_STATES, PROFILES, ClusterSnapshot, Node, NodeMetrics, Partition

EXAMPLES = Path(__file__).resolve().parents[2] / "configs" / "examples"


def good() -> dict[str, Any]:
    """A small valid snapshot as plain data (the design page's contract)."""
    return {
        "taken_at": "2026-11-22T10:00:00Z",
        "nodes": [
            {"id": "rs1.example.org,16020", "profile": "default", "state": "active",
             "metrics": {"cpu": 0.72, "io_wait": 0.05, "memory": 0.61}},
            {"id": "rs2.example.org,16020", "profile": "read", "state": "booting",
             "metrics": None},
        ],
        "partitions": [
            {"id": "0569b15917774c95c6546e1fb1438a0a", "table": "usertable",
             "node": "rs1.example.org,16020", "reads": 1200.0, "writes": 30.0, "scans": 0.0,
             "size_mb": 250, "locality": 0.97},
            {"id": "1f2e", "table": "usertable", "node": "rs2.example.org,16020",
             "reads": 0, "writes": 5.5, "scans": 2.0},
        ],
    }


def test_the_contract_example_reads_into_the_model():
    snap = snapshot_from_data(good(), "s.yaml")
    assert snap.taken_at == datetime(2026, 11, 22, 10, tzinfo=UTC)
    assert snap.nodes[0] == Node("rs1.example.org,16020", "default", "active",
                                 NodeMetrics(0.72, 0.05, 0.61))
    assert snap.nodes[1].metrics is None and snap.nodes[1].state == "booting"
    assert snap.partitions[0].size_mb == 250.0 and snap.partitions[0].requests == 1230.0
    assert snap.partitions[1].locality == 1.0  # default: all local


@pytest.mark.parametrize("field, value", [("rpc_latency_ms", 37), ("rpc_queue_length", 120),
                                          ("rpc_dropped_per_s", 2500)])
def test_server_figures_are_optional_and_round_trip(tmp_path, field, value):
    data = good()
    assert getattr(snapshot_from_data(data, "s.yaml").nodes[0].metrics, field) is None  # old form
    data["nodes"][0]["metrics"][field] = value  # an integer count is a number
    snap = snapshot_from_data(data, "s.yaml")
    assert getattr(snap.nodes[0].metrics, field) == float(value)
    path = tmp_path / "s.json"
    write_snapshot(snap, path)
    assert read_snapshot(path) == snap
    data["nodes"][0]["metrics"][field] = -1
    with pytest.raises(BadInput, match=rf"nodes\[0\]\.metrics\.{field}"):
        snapshot_from_data(data, "s.yaml")


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.yaml")) + sorted(EXAMPLES.rglob("*.json")),
                         ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_shipped_examples_are_valid_snapshots(path):
    snap = read_snapshot(path)
    assert snap.nodes and snap.partitions


def test_yaml_and_json_examples_agree():
    assert read_snapshot(EXAMPLES / "met-5-nodes.yaml") == read_snapshot(EXAMPLES / "met-5-nodes.json")


# Each case: a change to the good snapshot, the field the error must name, words it must say.
def _set(path: list, value):
    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _delete(path: list):
    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return change


BAD = {
    "partition on an unknown node": (_set(["partitions", 1, "node"], "rs9,16020"),
                                     "partitions[1].node", "rs9,16020"),
    "duplicate node id": (_set(["nodes", 1, "id"], "rs1.example.org,16020"),
                          "nodes[1].id", "unique"),
    "duplicate partition id": (_set(["partitions", 1, "id"], "0569b15917774c95c6546e1fb1438a0a"),
                               "partitions[1].id", "unique"),
    "negative rate": (_set(["partitions", 0, "writes"], -1.0), "partitions[0].writes",
                      "greater than or equal to 0"),
    "NaN rate": (_set(["partitions", 1, "scans"], float("nan")), "partitions[1].scans", "finite"),
    "infinite rate": (_set(["partitions", 0, "reads"], float("inf")), "partitions[0].reads",
                      "finite"),
    "cpu above 1": (_set(["nodes", 0, "metrics", "cpu"], 1.5), "nodes[0].metrics.cpu",
                    "less than or equal to 1"),
    "negative locality": (_set(["partitions", 0, "locality"], -0.1), "partitions[0].locality",
                          "greater than or equal to 0"),
    "NaN memory": (_set(["nodes", 0, "metrics", "memory"], float("nan")),
                   "nodes[0].metrics.memory", "finite"),
    "unknown profile": (_set(["nodes", 0, "profile"], "turbo"), "nodes[0].profile", "'read'"),
    "unknown state": (_set(["nodes", 1, "state"], "gone"), "nodes[1].state", "'active'"),
    "missing rate": (_delete(["partitions", 0, "reads"]), "partitions[0].reads", "required"),
    "missing node id": (_delete(["nodes", 0, "id"]), "nodes[0].id", "required"),
    "missing metrics": (_delete(["nodes", 0, "metrics"]), "nodes[0].metrics", "required"),
    "missing taken_at": (_delete(["taken_at"]), "taken_at", "required"),
    "rate as text": (_set(["partitions", 0, "reads"], "1200"), "partitions[0].reads", "number"),
    "cpu as text": (_set(["nodes", 0, "metrics", "cpu"], "high"), "nodes[0].metrics.cpu", "number"),
    "bool as a rate": (_set(["partitions", 0, "scans"], True), "partitions[0].scans", "number"),
    "id as a number": (_set(["nodes", 0, "id"], 7), "nodes[0].id", "string"),
    "nodes not a list": (_set(["nodes"], {"id": "x"}), "nodes", "list"),
    "no nodes": (_set(["nodes"], []), "nodes", "at least 1"),
    "empty id": (_set(["partitions", 0, "id"], ""), "partitions[0].id", "at least 1"),
    "unknown partition key": (_set(["partitions", 0, "region"], "x"), "partitions[0].region",
                              "unknown key"),
    "timestamp without timezone": (_set(["taken_at"], "2026-11-22T10:00:00"), "taken_at",
                                   "timezone"),
    "timestamp garbage": (_set(["taken_at"], "yesterday"), "taken_at", "ISO 8601"),
    "timestamp as a number": (_set(["taken_at"], 1763805600), "taken_at", "ISO 8601"),
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_bad_snapshot_names_file_and_field(tmp_path, name, fmt):
    change, field, words = BAD[name]
    data = copy.deepcopy(good())
    change(data)
    if fmt == "json" and any(isinstance(v, float) and not math.isfinite(v) for v in _leaves(data)):
        text = json.dumps(data)  # writes NaN/Infinity, which JSON itself forbids
    elif fmt == "json":
        text = json.dumps(data, allow_nan=False)
    else:
        text = yaml.safe_dump(data)
    path = tmp_path / f"snap.{fmt}"
    path.write_text(text)
    with pytest.raises(BadInput) as info:
        read_snapshot(path)
    err = info.value
    assert err.file == str(path)
    assert "\n" not in err.line()
    if fmt == "json" and ("NaN" in text or "Infinity" in text):
        assert "JSON" in err.expected  # refused by the parser: not JSON at all
        return
    assert err.field.split(" (line")[0] == field
    assert words in err.expected
    if fmt == "yaml":
        assert "(line " in err.field  # YAML errors point at the line too


def _leaves(data):
    if isinstance(data, dict):
        for v in data.values():
            yield from _leaves(v)
    elif isinstance(data, list):
        for v in data:
            yield from _leaves(v)
    else:
        yield data


def test_yaml_nan_and_inf_literals_are_refused(tmp_path):
    path = tmp_path / "s.yaml"
    text = yaml.safe_dump(good()).replace("reads: 1200.0", "reads: .nan")
    path.write_text(text)
    with pytest.raises(BadInput) as info:
        read_snapshot(path)
    assert info.value.field.startswith("partitions[0].reads")


def test_missing_list_is_kept():
    data = good() | {"missing": ["node rs2.example.org,16020: ganglia host stale"]}
    assert snapshot_from_data(data, "s").missing == ("node rs2.example.org,16020: ganglia host stale",)


def test_is_snapshot_data():
    assert is_snapshot_data(good())
    assert is_snapshot_data({"partitions": []})
    assert not is_snapshot_data({"policy": {}})
    assert not is_snapshot_data([1, 2])


# ------------------------------------------------------------------ writing and round trips

ids = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
              min_size=1, max_size=12)
fractions = st.floats(0.0, 1.0, allow_nan=False)
rates = st.floats(0.0, 1e7, allow_nan=False, allow_infinity=False)


@st.composite
def snapshots(draw) -> ClusterSnapshot:
    node_ids = draw(st.lists(ids, min_size=1, max_size=6, unique=True))
    nodes = tuple(
        Node(id=n, profile=draw(st.sampled_from(PROFILES)), state=draw(st.sampled_from(NODE_STATES)),
             metrics=draw(st.none() | st.builds(NodeMetrics, fractions, fractions, fractions)))
        for n in node_ids)
    part_ids = draw(st.lists(ids, max_size=10, unique=True))
    partitions = tuple(
        Partition(id=p, table=draw(ids), node=draw(st.sampled_from(node_ids)), reads=draw(rates),
                  writes=draw(rates), scans=draw(rates), size_mb=draw(rates), locality=draw(fractions))
        for p in part_ids)
    seconds = draw(st.integers(0, 10**9))
    taken_at = datetime(2000, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds, microseconds=draw(
        st.integers(0, 999_999)))
    missing = tuple(draw(st.lists(ids, max_size=2)))
    return ClusterSnapshot(taken_at, nodes, partitions, missing)


@settings(max_examples=60, deadline=None)
@given(snap=snapshots(), fmt=st.sampled_from(["json", "yaml"]))
# an id YAML 1.1 writes plain and the core schema reads as the number 0.0 (found by this test)
@example(snap=ClusterSnapshot(datetime(2000, 1, 1, tzinfo=UTC), (
    Node("0", "read", "active", None), Node("0E0", "read", "active", None), Node("1e3", "read", "active", None)),
    (), ()), fmt="yaml")
def test_dump_then_read_gives_the_same_snapshot(tmp_path_factory, snap, fmt):
    path = tmp_path_factory.mktemp("rt") / f"s.{fmt}"
    write_snapshot(snap, path)
    assert read_snapshot(path) == snap


def test_dump_is_stable_and_in_contract_order():
    snap = snapshot_from_data(good(), "s")
    data = snapshot_to_dict(snap)
    assert list(data) == ["taken_at", "nodes", "partitions"]
    assert data["taken_at"] == "2026-11-22T10:00:00Z"
    assert list(data["partitions"][0]) == ["id", "table", "node", "reads", "writes", "scans",
                                           "size_mb", "locality"]
    assert dump_snapshot(snap, "json") == dump_snapshot(snapshot_from_data(good(), "s"), "json")
    assert json.loads(dump_snapshot(snap, "json")) == data
    assert yaml.safe_load(dump_snapshot(snap, "yaml"))["nodes"] == data["nodes"]


def test_unquoted_id_with_a_comma_in_a_yaml_flow_mapping_is_explained(tmp_path):
    # In `{node: rs1,16020}` the comma ends the value, and 16020 becomes a key of its own.
    path = tmp_path / "s.yaml"
    path.write_text(
        "taken_at: 2026-11-22T10:00:00Z\n"
        "nodes:\n"
        "- {id: 'rs1,16020', metrics: null}\n"
        "partitions:\n"
        "- {id: r1, table: t, node: 'rs1,16020', reads: 1, writes: 0, scans: 0}\n"
        "- {id: r2, table: t, node: rs1,16020, reads: 1, writes: 0, scans: 0}\n")
    with pytest.raises(BadInput) as info:
        read_snapshot(path)
    assert info.value.field == "partitions[1] (line 6)"
    assert "quote" in info.value.expected and "16020" in info.value.expected


@settings(max_examples=60, deadline=None)
@given(snap=snapshots(), data=st.data())
def test_one_bad_value_anywhere_is_named_by_its_exact_path(snap, data):
    """Break one number in a valid snapshot: the error names exactly that field."""
    raw = snapshot_to_dict(snap)
    with_metrics = [i for i, n in enumerate(raw["nodes"]) if n["metrics"] is not None]
    targets = [("partitions", i, f) for i in range(len(raw["partitions"]))
               for f in ("reads", "writes", "scans", "size_mb", "locality")]
    targets += [("nodes", i, "metrics", f) for i in with_metrics for f in ("cpu", "io_wait", "memory")]
    if not targets:
        return
    where = data.draw(st.sampled_from(targets))
    bad_value = data.draw(st.sampled_from([-0.5, float("nan"), float("-inf"), "1", None, [1]]))
    target = raw
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = bad_value
    with pytest.raises(BadInput) as info:
        snapshot_from_data(raw, "s.json")
    path = "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else k)
                   for i, k in enumerate(where))
    assert info.value.field == path
    assert info.value.file == "s.json"


# ------------------------------------------------------------------ partitions read as columns
# snapshot_from_data checks partitions column by column and hands anything it would refuse to
# the reference reader (pydantic field by field, then the strict walk). The two must agree:
# the same snapshot, or the same BadInput line.

def _outcome(read, data):
    try:
        return read(copy.deepcopy(data), "s.json")
    except BadInput as err:
        return err.line()


PARTITION_VALUES = [
    True, False, None, "0.5", "", "\ud800", "ok\x00id", -1, -0.0, 0, 3, 1, 1.0, 0.5, 1.5,
    1e15, 1e15 + 1, 10**15, 10**15 + 1, 10**400, 1e308, float("nan"), float("inf"),
    float("-inf"), [1], {"a": 1}, "rs1.example.org,16020", "rs9,16020",
    "0569b15917774c95c6546e1fb1438a0a"]
PARTITION_KEYS = ["id", "table", "node", "reads", "writes", "scans", "size_mb", "locality",
                  "region"]


@settings(max_examples=300, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 1), st.sampled_from(PARTITION_KEYS),
                                st.one_of(st.sampled_from(PARTITION_VALUES), st.just(_delete))),
                      max_size=3),
       head=st.sampled_from([None, ("nodes", 1, "id"), ("taken_at",), ("missing",)]),
       every_field=st.booleans(), floats_only=st.booleans())
def test_column_checks_and_the_reference_reader_agree(edits, head, every_field, floats_only):
    from controller.snapshot_io import _checked_snapshot
    data = good()
    if every_field:  # as metctl's writer does: both partitions with all 8 fields
        data["partitions"][1] |= {"size_mb": 10.0, "locality": 0.5}
    if floats_only:
        data["partitions"][0]["size_mb"] = 250.0
        data["partitions"][1]["reads"] = 0.0
    for i, key, value in edits:
        if value is _delete:
            data["partitions"][i].pop(key, None)
        else:
            data["partitions"][i][key] = value
    if head == ("nodes", 1, "id"):  # a problem outside the partitions as well
        data["nodes"][1]["id"] = data["nodes"][0]["id"]
    elif head == ("taken_at",):
        data["taken_at"] = 5
    elif head == ("missing",):
        data["missing"] = ["fine", 3]
    fast, ref = _outcome(snapshot_from_data, data), _outcome(_checked_snapshot, data)
    assert fast == ref
    if isinstance(fast, ClusterSnapshot):  # same values, same types (1 read as 1.0)
        assert [list(map(type, vars(p).values())) for p in fast.partitions] == \
            [list(map(type, vars(p).values())) for p in ref.partitions]


def test_partitions_not_a_list_of_mappings_are_named_as_before():
    for bad, words in (({"id": "x"}, "list"), ([1, 2], "mapping"), ([None], "mapping")):
        data = good() | {"partitions": bad}
        with pytest.raises(BadInput) as info:
            snapshot_from_data(data, "s.json")
        assert info.value.field.startswith("partitions") and words in info.value.expected


def test_a_large_snapshot_is_refused_at_its_one_bad_partition():
    data = good()
    base = data["partitions"][0]
    data["partitions"] = [base | {"id": f"p{i}"} for i in range(20_000)]
    assert len(snapshot_from_data(data, "s.json").partitions) == 20_000
    data["partitions"][12_345]["locality"] = 1.01
    with pytest.raises(BadInput) as info:
        snapshot_from_data(data, "s.json")
    assert info.value.line() == ("s.json: partitions[12345].locality: less than or equal to 1, "
                                 "got 1.01")
