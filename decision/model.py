"""The cluster model: what the decision core reads (a snapshot), remembers (decision memory)
and produces (a plan). Plain frozen dataclasses; no I/O. These are the design page's contracts,
so field names here are the names in the JSON and YAML users see — a shipped name never changes.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
from datetime import datetime
from typing import Any, Literal

# Node profiles (configurations). `default` is HBase's homogeneous stock configuration.
PROFILES: tuple[str, ...] = ("read", "write", "read_write", "scan", "default")
# Partition classes (groups) Stage C sorts partitions into; each maps to the profile of the same name.
GROUPS: tuple[str, ...] = ("read", "write", "read_write", "scan")
NODE_STATES: tuple[str, ...] = ("active", "booting", "draining")
OPS: tuple[str, ...] = ("launch", "reconfigure", "split", "move", "compact", "drain", "terminate")

Profile = Literal["read", "write", "read_write", "scan", "default"]
Group = Literal["read", "write", "read_write", "scan"]
NodeState = Literal["active", "booting", "draining"]
Op = Literal["launch", "reconfigure", "split", "move", "compact", "drain", "terminate"]
Verdict = Literal["overloaded", "underloaded", "healthy", "unknown"]
# Enumerated `Action.cause` values (the words are in `Action.reason`).
CAUSES: tuple[str, ...] = (
    "scale_out",                # launch a node / move a partition onto a new node
    "scale_in",                 # move off, drain and terminate a node the target size drops
    "initial_reconfiguration",  # the first decision's reconfiguration (MET's firstTime)
    "profile_change",           # a node's group changed with the access pattern
    "rebalance",                # a move between kept nodes (LPT balance, regrouping)
    "off_inactive",             # a move off a node that is not active (draining, booting, gone)
    "locality",                 # a major compaction to restore data locality (MET §5)
    "hot_partition",            # split a partition whose load alone overloads its node
)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """dataclasses.asdict without its deep copy of every leaf (8x the decision itself on a
    1,000 x 100,000 plan): the same dicts, lists/tuples and leaves, built in one walk."""
    cls = type(value)
    if cls in (str, int, float, bool) or value is None:
        return value
    names = _FIELD_NAMES.get(cls)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(value))
    if names is not None:
        return {n: _plain(getattr(value, n)) for n in names}
    if isinstance(value, tuple | list):
        return cls(_plain(v) for v in value) if cls in (tuple, list) else [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class NodeMetrics:
    """System metrics of one node, each a fraction 0..1 (smoothed by the monitor)."""

    cpu: float
    io_wait: float
    memory: float  # used less cache and buffers, over total
    # Mean time a request spends in the data-store server (RPC queue + processing), ms, as the
    # server reports it (HBase /jmx `TotalCallTime_mean`); None when the source has none.
    rpc_latency_ms: float | None = None
    # Calls waiting in the server's RPC call queues (HBase /jmx IPC numCallsInGeneralQueue +
    # numCallsInReadQueue + numCallsInWriteQueue + numCallsInScanQueue), smoothed; None when
    # the source has none. How fast it grows between two decisions says how much more is
    # asked than served (decision/demand.py).
    rpc_queue_length: float | None = None
    # Calls the server refused or dropped without an answer, per second (HBase /jmx IPC
    # exceptions.callQueueTooBig + exceptions.callDropped + exceptions.callTimedOut, a counter
    # the collector turns into a rate); None when the source has none. Demand the server did
    # not serve (decision/demand.py).
    rpc_dropped_per_s: float | None = None


@dataclass(frozen=True)
class Node:
    id: str  # the stable id the data store uses, e.g. "rs1.example.org,16020"
    profile: str = "default"
    state: str = "active"
    # None when the monitor has no fresh metrics for this node: the core never guesses them.
    metrics: NodeMetrics | None = None


@dataclass(frozen=True)
class Partition:
    id: str  # HBase region encoded name
    table: str
    node: str  # id of the node serving it
    reads: float = 0.0  # point reads (gets) per second, smoothed
    writes: float = 0.0  # mutations per second, smoothed
    scans: float = 0.0  # scan requests per second, smoothed
    size_mb: float = 0.0
    locality: float = 1.0  # fraction of the partition's data on the node's local disk

    @property
    def requests(self) -> float:
        return self.reads + self.writes + self.scans


@dataclass(frozen=True)
class ClusterSnapshot:
    """What the collector builds every sample interval and `metctl plan --snapshot` reads."""

    taken_at: datetime
    nodes: tuple[Node, ...]
    partitions: tuple[Partition, ...]
    # What the collector could not get (e.g. "node rs3,16020: ganglia host stale (TN 95 s > 80 s)").
    # A non-empty list is a reason to hold, decided by the control loop's completeness rule.
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class DecisionMemory:
    """What the decision core remembers between decisions (persisted across restarts)."""

    step: int = 1  # MET Algorithm 1: how many nodes the next scale-out adds
    first_decision_done: bool = False  # the first decision reaching Stage B reconfigures only
    # Policy-private history (e.g. tiramola's cpu samples for its running average), JSON-safe;
    # plus PLAN_ENDED_AT, which the control loop writes.
    history: tuple[tuple[str, float], ...] = ()

    def plan_ended_at(self) -> float | None:
        """When the last plan ended (the snapshots' clock), if a control loop said so."""
        for key, value in self.history:
            if key == PLAN_ENDED_AT:
                return value
        return None

    def with_plan_ended(self, at: float) -> DecisionMemory:
        """This memory, told that a plan ended at `at`: a plan can run for many decision
        windows (a scale-out waits for boots and data), and its effects start only then."""
        kept = tuple(h for h in self.history if h[0] not in (PLAN_ENDED_AT, PLAN_IN_FLIGHT))
        return replace(self, history=kept + ((PLAN_ENDED_AT, at),))

    def plan_in_flight(self) -> int | None:
        """The size (nodes) the plan the control loop is carrying out leads to, while one is
        in flight and the loop asks the policy meanwhile; None otherwise."""
        for key, value in self.history:
            if key == PLAN_IN_FLIGHT:
                return int(value)
        return None

    def with_plan_in_flight(self, target: int) -> DecisionMemory:
        """This memory, told that a plan leading to `target` nodes is being carried out."""
        kept = tuple(h for h in self.history if h[0] != PLAN_IN_FLIGHT)
        return replace(self, history=kept + ((PLAN_IN_FLIGHT, float(target)),))


# The DecisionMemory.history keys the control loop owns: epoch seconds the last plan ended;
# the size the plan in flight leads to (while the loop asks the policy during a plan).
PLAN_ENDED_AT = "loop.plan_ended_at"
PLAN_IN_FLIGHT = "loop.plan_in_flight"


@dataclass(frozen=True)
class NodeHealth:
    node: str
    verdict: str  # Verdict
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Health:
    nodes: tuple[NodeHealth, ...]
    suboptimal: float  # overloaded nodes / all nodes
    remove: bool  # the cluster may shrink by one node
    healthy: bool  # no overloaded and no underloaded node
    reason: str = ""


@dataclass(frozen=True)
class Sizing:
    current: int
    target: int
    delta: int
    step: int  # the step remembered for the next decision
    reason: str = ""


@dataclass(frozen=True)
class GroupPlan:
    group: str
    partitions: int
    nodes: int


@dataclass(frozen=True)
class NodeAssignment:
    node: str  # an existing node id, or a placeholder "new-1", "new-2", … for a node to launch
    profile: str
    partitions: tuple[str, ...]
    load: float  # requests per second the node will serve


@dataclass(frozen=True)
class Action:
    """One step of a plan. `op` says which fields matter:

    launch: node (placeholder id), profile · reconfigure: node, profile (from_profile was)
    split: node, partition (its daughters stay on node) · move: partition, source, target
    compact: node, partition · drain / terminate: node
    """

    op: str  # Op
    reason: str
    node: str | None = None
    profile: str | None = None
    from_profile: str | None = None
    partition: str | None = None
    source: str | None = None
    target: str | None = None
    cause: str = ""  # enumerated short cause, e.g. "scale_out", "rebalance", "locality"

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in _plain(self).items() if v is not None and v != ""}


@dataclass(frozen=True)
class Summary:
    moves: int
    reconfigurations: int
    launches: int
    terminations: int
    max_load_ratio: float  # most loaded node / mean node load after the plan
    compactions: int = 0  # compact actions in the plan
    moves_dropped: int = 0  # moves the plan wanted but left out because of max_moves
    splits: int = 0  # split actions in the plan


@dataclass(frozen=True)
class Plan:
    policy: str
    health: Health
    sizing: Sizing
    groups: tuple[GroupPlan, ...]
    assignment: tuple[NodeAssignment, ...]
    actions: tuple[Action, ...]
    summary: Summary
    memory: DecisionMemory  # the memory after this decision (to persist)
    reason: str = ""  # one line: why this plan (or why nothing)

    @property
    def is_empty(self) -> bool:
        return not self.actions

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form `metctl plan --format json` prints."""
        return {
            "policy": self.policy,
            "reason": self.reason,
            "health": _plain(self.health),
            "sizing": _plain(self.sizing),
            "groups": [_plain(g) for g in self.groups],
            "assignment": [_plain(a) for a in self.assignment],
            "actions": [a.to_dict() for a in self.actions],
            "summary": _plain(self.summary),
            "memory": _plain(self.memory),
        }


def memory_to_dict(memory: DecisionMemory) -> dict[str, Any]:
    return {"step": memory.step, "first_decision_done": memory.first_decision_done,
            "history": [list(h) for h in memory.history]}


def memory_from_dict(data: dict[str, Any]) -> DecisionMemory:
    return DecisionMemory(
        step=int(data.get("step", 1)),
        first_decision_done=bool(data.get("first_decision_done", False)),
        history=tuple((str(k), float(v)) for k, v in data.get("history", ())),
    )


__all__ = [
    "PROFILES", "GROUPS", "NODE_STATES", "OPS", "CAUSES", "NodeMetrics", "Node", "Partition",
    "ClusterSnapshot", "DecisionMemory", "NodeHealth", "Health", "Sizing", "GroupPlan",
    "NodeAssignment", "Action", "Summary", "Plan", "memory_to_dict", "memory_from_dict",
]
