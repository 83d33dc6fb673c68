"""Reading and writing a ClusterSnapshot as JSON or YAML (the design page's contract).

Reading validates everything an operator could get wrong — missing fields, wrong types,
negative or non-finite rates, fractions outside 0..1, unknown profiles or states, a timestamp
without a timezone, duplicate node or partition ids, a partition on a node the snapshot does
not list — and reports the first problem as one BadInput line naming the file and the field
(`partitions[3].node`). What comes out is the frozen dataclasses of decision/model.py.
"""
from __future__ import annotations

import json
import math
from dataclasses import fields
from datetime import UTC, datetime
from itertools import starmap
from operator import itemgetter
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from common.cyclic_gc import cyclic_gc_paused
from common.documents import Document, core_dumper, load_document
from common.models import MAX_MAGNITUDE, parse_model
from controller.errors import BadInput
from decision.model import ClusterSnapshot, Node, NodeMetrics, Partition

Id = Annotated[str, StringConstraints(min_length=1)]
Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
Rate = Annotated[float, Field(ge=0.0)]


def _timestamp_text(value: Any) -> Any:
    # A bare number would be read as seconds since the epoch: too easy to get wrong silently.
    if isinstance(value, bool | int | float):
        raise ValueError("an ISO 8601 timestamp with a timezone, e.g. 2026-11-22T10:00:00Z")
    return value


Timestamp = Annotated[AwareDatetime, Field(strict=False), BeforeValidator(_timestamp_text)]

# strict: "0.7" is not a number and 1 is not a string here; a snapshot is written by a program
# (the collector) or checked by a person, and silent coercion would hide a broken producer.
_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class NodeMetricsModel(BaseModel):
    model_config = _STRICT

    cpu: Fraction = Field(description="CPU busy fraction 0..1 (smoothed).")
    io_wait: Fraction = Field(description="CPU time waiting for I/O, fraction 0..1.")
    memory: Fraction = Field(description="Memory used less cache and buffers, fraction 0..1.")
    rpc_latency_ms: Annotated[float, Field(ge=0.0)] | None = Field(
        None, description="Mean time a request spends in the server (RPC queue + processing), "
        "ms (HBase /jmx TotalCallTime_mean). Optional: absent or null when not measured.")
    rpc_queue_length: Annotated[float, Field(ge=0.0)] | None = Field(
        None, description="Calls waiting in the server's RPC call queues (HBase /jmx "
        "numCallsInGeneralQueue + numCallsInReadQueue + numCallsInWriteQueue + "
        "numCallsInScanQueue, smoothed). Optional: absent or null when not measured.")
    rpc_dropped_per_s: Annotated[float, Field(ge=0.0)] | None = Field(
        None, description="Calls the server refused or dropped without an answer, per second "
        "(HBase /jmx exceptions.callQueueTooBig + callDropped + callTimedOut, smoothed). "
        "Optional: absent or null when not measured.")


class NodeModel(BaseModel):
    model_config = _STRICT

    id: Id = Field(description="Stable id the data store uses, e.g. rs1.example.org,16020.")
    profile: Literal["read", "write", "read_write", "scan", "default"] = "default"
    state: Literal["active", "booting", "draining"] = "active"
    # Required but nullable: `metrics: null` says "no fresh metrics"; leaving it out is a mistake.
    metrics: NodeMetricsModel | None = Field(description="System metrics, or null when missing.")


class PartitionModel(BaseModel):
    model_config = _STRICT

    id: Id = Field(description="Region encoded name.")
    table: Id
    node: Id = Field(description="Id of the node serving the partition (one of `nodes`).")
    # The rates are required: a missing rate is a missing metric, never a zero.
    reads: Rate = Field(description="Point reads (gets) per second, smoothed.")
    writes: Rate = Field(description="Mutations per second, smoothed.")
    scans: Rate = Field(description="Scan requests per second, smoothed.")
    size_mb: Rate = Field(0.0, description="Stored size in MB.")
    locality: Fraction = Field(1.0, description="Fraction of the data on the node's local disk.")


class SnapshotModel(BaseModel):
    model_config = _STRICT

    taken_at: Timestamp
    nodes: list[NodeModel] = Field(min_length=1)
    partitions: list[PartitionModel] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list,
                               description="What the collector could not get.")


def is_snapshot_data(data: Any) -> bool:
    """A mapping with `nodes` or `partitions` is a snapshot (not a config)."""
    return isinstance(data, dict) and ("nodes" in data or "partitions" in data)


def _cross_check(model: SnapshotModel, file: str, doc: Document | None) -> None:
    """What one field alone cannot tell: unique ids, partitions on listed nodes."""

    def fail(loc: list[str | int], expected: str) -> None:
        path = f"{loc[0]}[{loc[1]}].{loc[2]}"
        line = doc.line_of(loc) if doc is not None else None
        raise BadInput(file, path + (f" (line {line})" if line else ""), expected)

    node_index: dict[str, int] = {}
    for i, node in enumerate(model.nodes):
        if node.id in node_index:
            fail(["nodes", i, "id"],
                 f"a unique node id ({node.id!r} is also nodes[{node_index[node.id]}])")
        node_index[node.id] = i
    seen: dict[str, int] = {}
    for i, part in enumerate(model.partitions):
        if part.id in seen:
            fail(["partitions", i, "id"],
                 f"a unique partition id ({part.id!r} is also partitions[{seen[part.id]}])")
        seen[part.id] = i
        if part.node not in node_index:
            fail(["partitions", i, "node"], f"the id of a node in `nodes`, got {part.node!r}")


def _checked_snapshot(data: Any, file: str, doc: Document | None = None) -> ClusterSnapshot:
    """The reference reader: pydantic on every field, then the strict walk and the cross
    checks. Names the first problem exactly; ~2 s on 100,000 partitions."""
    model = parse_model(SnapshotModel, data, file, doc)
    _cross_check(model, file, doc)
    return _snapshot(model, tuple(
        Partition(id=p.id, table=p.table, node=p.node, reads=p.reads, writes=p.writes,
                  scans=p.scans, size_mb=p.size_mb, locality=p.locality)
        for p in model.partitions))


def _snapshot(model: SnapshotModel, partitions: tuple[Partition, ...]) -> ClusterSnapshot:
    return ClusterSnapshot(
        taken_at=model.taken_at,
        nodes=tuple(
            Node(id=n.id, profile=n.profile, state=n.state,
                 metrics=None if n.metrics is None else NodeMetrics(
                     cpu=n.metrics.cpu, io_wait=n.metrics.io_wait, memory=n.metrics.memory,
                     rpc_latency_ms=n.metrics.rpc_latency_ms,
                     rpc_queue_length=n.metrics.rpc_queue_length,
                     rpc_dropped_per_s=n.metrics.rpc_dropped_per_s))
            for n in model.nodes),
        partitions=partitions,
        missing=tuple(model.missing),
    )


# The partition fields, what each must be (text, or a number between bounds) and its default.
# MAX_MAGNITUDE bounds every number, as the strict walk does.
_TEXT = ("id", "table", "node")
_NUMBERS: dict[str, tuple[float, float]] = {
    "reads": (0.0, MAX_MAGNITUDE), "writes": (0.0, MAX_MAGNITUDE), "scans": (0.0, MAX_MAGNITUDE),
    "size_mb": (0.0, MAX_MAGNITUDE), "locality": (0.0, 1.0)}
_DEFAULTS = {"size_mb": 0.0, "locality": 1.0}
_PARTITION_KEYS = frozenset(PartitionModel.model_fields)
_REQUIRED_KEYS = frozenset(n for n, f in PartitionModel.model_fields.items() if f.is_required())
_NUMBER_TYPES = frozenset((int, float))
_PARTITION_FIELDS = tuple(f.name for f in fields(Partition))  # Partition's positional order


def _fast_partitions(raw: Any, node_ids: set[str]) -> tuple[Partition, ...] | None:
    """The partitions, checked column by column (numpy over each number field) instead of
    field by field; None when anything at all is off, for the reference reader to name it.

    Accepts only what _checked_snapshot accepts, with the same values: a dict per partition
    with known keys and every required one; text fields exact str, non-empty, valid Unicode
    (pydantic refuses lone surrogates); numbers exact int or float (never bool or text),
    finite, within their bounds, read as float; unique ids, each on a listed node."""
    if type(raw) is not list or any(type(p) is not dict for p in raw):
        return None
    rows: list[tuple[Any, ...]] | None = None
    try:
        # The common case, every field written (metctl's writer does): one C-level pass per
        # partition, and all its keys known when there are 8 of each.
        rows = list(map(itemgetter(*_PARTITION_FIELDS), raw))
    except KeyError:
        pass
    if rows is not None and sum(map(len, raw)) == len(_PARTITION_FIELDS) * len(raw):
        columns = dict(zip(_PARTITION_FIELDS, map(list, zip(*rows)))) if rows else dict.fromkeys(
            _PARTITION_FIELDS, [])
    else:
        rows = None
        for keys in set(map(frozenset, raw)):  # a few distinct key sets, whatever the size
            if not (_REQUIRED_KEYS <= keys <= _PARTITION_KEYS):
                return None
        columns = {name: ([p[name] for p in raw] if name not in _DEFAULTS
                          else [p.get(name, _DEFAULTS[name]) for p in raw])
                   for name in _PARTITION_FIELDS}
    for name in _TEXT:
        col = columns[name]
        if set(map(type, col)) - {str} or "" in col:
            return None
        try:
            "".join(col).encode("utf-8")
        except UnicodeEncodeError:
            return None
    all_floats = True
    for name, (low, high) in _NUMBERS.items():
        col = columns[name]
        kinds = set(map(type, col))
        if kinds - _NUMBER_TYPES:
            return None
        try:
            values = np.array(col, dtype=np.float64)
        except (OverflowError, ValueError):
            return None
        if not (np.isfinite(values).all() and (values >= low).all() and (values <= high).all()):
            return None
        if kinds != {float}:
            all_floats = False
            columns[name] = values.tolist()  # Python floats: ints become float, as pydantic's do
    ids = columns["id"]
    if len(set(ids)) != len(ids) or not set(columns["node"]) <= node_ids:
        return None
    if rows is not None and all_floats:  # the rows hold exactly the values to keep
        return tuple(starmap(Partition, rows))
    return tuple(map(Partition, *(columns[n] for n in _PARTITION_FIELDS)))


def snapshot_from_data(data: Any, file: str | Path, doc: Document | None = None) -> ClusterSnapshot:
    """Validate parsed data as a snapshot; BadInput on the first problem.

    Everything but the partitions goes through the reference reader; the partitions (100,000
    of them in a large cluster) are checked as columns. Should that find anything to refuse,
    the whole snapshot goes through the reference reader, which names the first problem as it
    always did (same field, same words, same "and N more errors")."""
    file = str(file)
    with cyclic_gc_paused():
        if type(data) is dict and type(data.get("partitions")) is list:
            head = {k: v for k, v in data.items() if k != "partitions"}
            try:
                model = parse_model(SnapshotModel, head, file, doc)
                _cross_check(model, file, doc)
            except BadInput:
                model = None
            if model is not None:
                parts = _fast_partitions(data["partitions"], {n.id for n in model.nodes})
                if parts is not None:
                    return _snapshot(model, parts)
        return _checked_snapshot(data, file, doc)


def read_snapshot(path: str | Path) -> ClusterSnapshot:
    """Read a snapshot file (JSON when it ends in .json, YAML otherwise)."""
    with cyclic_gc_paused():
        doc = load_document(path)
        return snapshot_from_data(doc.data, doc.file, doc)


# ---------------------------------------------------------------- writing


def _timestamp(t: datetime) -> str:
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)  # the collector's clock is UTC
    t = t.astimezone(UTC)
    return t.isoformat().replace("+00:00", "Z")


def _number(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def snapshot_to_dict(snapshot: ClusterSnapshot) -> dict[str, Any]:
    """The contract's plain form, field order as on the design page (read back unchanged)."""
    out: dict[str, Any] = {
        "taken_at": _timestamp(snapshot.taken_at),
        "nodes": [
            {"id": n.id, "profile": n.profile, "state": n.state,
             "metrics": None if n.metrics is None else {
                 "cpu": _number(n.metrics.cpu), "io_wait": _number(n.metrics.io_wait),
                 "memory": _number(n.metrics.memory),
                 **({} if n.metrics.rpc_latency_ms is None
                    else {"rpc_latency_ms": _number(n.metrics.rpc_latency_ms)}),
                 **({} if n.metrics.rpc_queue_length is None
                    else {"rpc_queue_length": _number(n.metrics.rpc_queue_length)}),
                 **({} if n.metrics.rpc_dropped_per_s is None
                    else {"rpc_dropped_per_s": _number(n.metrics.rpc_dropped_per_s)})}}
            for n in snapshot.nodes],
        "partitions": [
            {"id": p.id, "table": p.table, "node": p.node, "reads": _number(p.reads),
             "writes": _number(p.writes), "scans": _number(p.scans),
             "size_mb": _number(p.size_mb), "locality": _number(p.locality)}
            for p in snapshot.partitions],
    }
    if snapshot.missing:
        out["missing"] = list(snapshot.missing)
    return out


def dump_snapshot(snapshot: ClusterSnapshot, fmt: Literal["json", "yaml"] = "json") -> str:
    """The snapshot as JSON (indented, stable) or YAML text."""
    data = snapshot_to_dict(snapshot)
    if fmt == "json":
        return json.dumps(data, indent=2, allow_nan=False) + "\n"
    if fmt == "yaml":
        dumper = core_dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper))
        return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=None, width=4096)
    raise ValueError(f"unknown snapshot format {fmt!r}")


def write_snapshot(snapshot: ClusterSnapshot, path: str | Path) -> None:
    """Write a snapshot file; the format follows the extension (.json, else YAML)."""
    fmt: Literal["json", "yaml"] = "json" if str(path).lower().endswith(".json") else "yaml"
    Path(path).write_text(dump_snapshot(snapshot, fmt), encoding="utf-8")


__all__ = ["SnapshotModel", "NodeModel", "PartitionModel", "NodeMetricsModel",
           "is_snapshot_data", "snapshot_from_data", "read_snapshot", "snapshot_to_dict",
           "dump_snapshot", "write_snapshot"]
