"""The console's cluster view (controller/console/view.py) over plain snapshots: what it counts
adds up to the snapshot, classes follow Stage C, a plan's launches and drains show, latency per
table is request-weighted, and only the last hour is kept."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import given, strategies as st

from controller.console.view import ClusterView, table_latency
from decision import decide
from decision.model import DecisionMemory, NodeMetrics
from decision.placement import classify_one
from decision.policy import PolicyConfig
from simulator.synthetic import zipf_cluster

POLICY = PolicyConfig()


def view_of(snapshot, **kw):
    v = ClusterView(POLICY, **kw)
    v.on_decision(600.0, decide(snapshot, POLICY, DecisionMemory()), None, snapshot)
    return v


@given(nodes=st.integers(1, 12), per_node=st.integers(0, 20), seed=st.integers(0, 50))
def test_counts_and_loads_add_up_to_the_snapshot(nodes, per_node, seed):
    snap = zipf_cluster(nodes, per_node, seed=seed)
    doc = view_of(snap).document()
    assert {n["id"] for n in doc["nodes"]} == {n.id for n in snap.nodes}
    assert sum(sum(n["partitions"].values()) for n in doc["nodes"]) == len(snap.partitions)
    total = sum(p.requests for p in snap.partitions)
    assert abs(sum(n["load"] for n in doc["nodes"]) - total) <= 1e-6 * max(1.0, total)
    for n in doc["nodes"]:
        mine = [p for p in snap.partitions if p.node == n["id"]]
        for group, count in n["partitions"].items():
            assert count == sum(1 for p in mine
                                if classify_one(p.reads, p.writes, p.scans, POLICY) == group)
        if n["capacity"] is not None:  # what it serves at its utilisation, scaled to 100 %
            assert n["capacity"] >= n["load"]
    loads = [b["requests"] for b in doc["busiest"]]
    assert loads == sorted(loads, reverse=True)
    assert loads[:1] == sorted((p.requests for p in snap.partitions), reverse=True)[:1]


def test_nodes_are_in_natural_order():
    snap = zipf_cluster(12, 1, seed=0)
    names = [n["id"] for n in view_of(snap).document()["nodes"]]
    numbers = [int("".join(c for c in i.split(",")[0] if c.isdigit())) for i in names]
    assert numbers == sorted(numbers)


def test_a_plan_in_flight_shows_its_new_nodes_and_drains():
    snap = zipf_cluster(3, 4, seed=1)
    doc = view_of(snap, protected=lambda: {snap.nodes[0].id: "protected by ana: disk"}).document([
        {"op": "launch", "state": "running", "sub_state": "booting", "node": "new-1",
         "server_id": None, "profile": "read"},
        {"op": "launch", "state": "running", "sub_state": "joining", "node": "new-2",
         "server_id": "rs9,16020", "profile": "write"},
        {"op": "launch", "state": "done", "node": "new-3", "server_id": "rs8,16020"},
        {"op": "drain", "state": "running", "node": snap.nodes[1].id}])
    states = {n["id"]: n["state"] for n in doc["nodes"]}
    assert states["new-1"] == "booting" and states["rs9,16020"] == "joining"
    assert "rs8,16020" not in states  # done: the next snapshot has it, serving
    assert states[snap.nodes[1].id] == "draining" and states[snap.nodes[2].id] == "serving"
    assert doc["nodes"][0]["protected"] == "protected by ana: disk"


def test_table_latency_is_weighted_by_requests():
    snap = zipf_cluster(2, 2, seed=3)
    a, b = snap.nodes
    snap = replace(snap, nodes=(replace(a, metrics=NodeMetrics(0.5, 0.0, 0.5, rpc_latency_ms=10.0)),
                                replace(b, metrics=NodeMetrics(0.5, 0.0, 0.5, rpc_latency_ms=30.0))),
                   partitions=tuple(replace(p, table="t", node=(a.id, b.id)[i % 2],
                                            reads=(300.0, 100.0)[i % 2], writes=0.0, scans=0.0)
                                    for i, p in enumerate(snap.partitions)))
    assert table_latency(snap) == {"t": (2 * 300 * 10 + 2 * 100 * 30) / 800}


def test_latency_keeps_the_last_hour_of_the_clusters_clock():
    samples = iter([{"A": 5.0, "B": float("nan")}] * 100 + [{"A": 80.0, "B": 3.0}] * 10)
    v = ClusterView(POLICY, tenants=lambda: next(samples), slo_ms=50.0)
    for i in range(110):
        v.on_sample(i * 60.0, 0)
    tenants = {t["name"]: t for t in v.document()["tenants"]}
    assert tenants["A"]["points"][0][0] >= -3600 and tenants["A"]["points"][-1] == [0.0, 80.0]
    assert len(tenants["A"]["points"]) == 61  # an hour of minutes, both ends
    assert tenants["A"]["share_over_slo"] == 10 / 61
    assert tenants["B"]["last_ms"] == 3.0 and len(tenants["B"]["points"]) == 10  # NaN is no data
