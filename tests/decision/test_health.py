"""Stage A: per-node verdicts with reasons, suboptimal, remove, healthy."""
import pytest
from hypothesis import given

from decision.health import assess_health, node_verdict
from decision.policy import PolicyConfig
from tests.fixtures.snapshots import node, snapshots

P = PolicyConfig()


@pytest.mark.parametrize("kwargs, verdict", [
    (dict(cpu=0.60), "overloaded"),               # at the threshold is overloaded (>=)
    (dict(cpu=0.59), "healthy"),
    (dict(cpu=0.3, io_wait=0.20), "overloaded"),
    (dict(cpu=0.3, memory=0.95), "overloaded"),
    (dict(cpu=0.10, io_wait=0.05), "underloaded"),  # both at the low marks (<=)
    (dict(cpu=0.10, io_wait=0.06), "healthy"),
    (dict(cpu=0.05, io_wait=0.01, memory=0.99), "overloaded"),  # overloaded wins
    (dict(cpu=None), "unknown"),
])
def test_node_verdict(kwargs, verdict):
    v = node_verdict(node("rs1", **kwargs), P)
    assert v.verdict == verdict
    assert v.reasons and all(isinstance(r, str) and r for r in v.reasons)


def test_reasons_name_the_metric_and_threshold():
    v = node_verdict(node("rs1", cpu=0.72, io_wait=0.3), P)
    assert any("cpu 0.72" in r and "0.60" in r for r in v.reasons)
    assert any("io_wait 0.30" in r for r in v.reasons)


def test_suboptimal_and_remove():
    h = assess_health([node("a", 0.7), node("b", 0.3), node("c", 0.05), node("d", 0.05)], P)
    assert h.suboptimal == 0.25 and not h.remove and not h.healthy
    # Half underloaded, none overloaded, mean cpu over 3 nodes = 0.9/3 = 0.3 < 0.48.
    h = assess_health([node("a", 0.4), node("b", 0.4), node("c", 0.05), node("d", 0.05)], P)
    assert h.remove and h.suboptimal == 0
    # Enough underloaded nodes, but the rest would be too busy: 1.7 / 3 = 0.57 >= 0.48.
    quarter = PolicyConfig(remove_fraction=0.25)
    busy = [node("a", 0.55), node("b", 0.55), node("c", 0.55), node("d", 0.05)]
    assert not assess_health(busy, quarter).remove
    assert assess_health(busy[:1] + busy[3:] * 3, quarter).remove


def test_single_node_never_removes():
    assert not assess_health([node("a", 0.01, io_wait=0.0)], P).remove


def test_inactive_nodes_are_reported_not_counted():
    nodes = [node("a", 0.3), node("b", 0.9, state="booting"), node("c", None, state="draining")]
    h = assess_health(nodes, P)
    assert h.healthy and h.suboptimal == 0
    assert [v.node for v in h.nodes] == ["a", "b", "c"]
    assert h.nodes[1].verdict == "overloaded" and "booting" in h.nodes[1].reasons[-1]
    assert h.nodes[2].verdict == "unknown"


@given(snapshots(states=("active", "booting", "draining")))
def test_health_invariants(snap):
    h = assess_health(snap.nodes, P)
    active = [n for n in snap.nodes if n.state == "active"]
    assert len(h.nodes) == len(snap.nodes)
    assert 0.0 <= h.suboptimal <= 1.0
    if h.remove:
        assert h.suboptimal == 0 and len(active) > 1
    if h.healthy:
        assert all(v.verdict == "healthy" for n, v in zip(snap.nodes, h.nodes)
                   if n.state == "active")
