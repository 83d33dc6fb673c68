"""What the console shows of the cluster (`GET /v1/cluster`), built in the loop's thread when a
decision reads a snapshot, so the API only copies a finished document.

- nodes: profile, state (serving, booting, joining, draining; `protected` beside it), host
  metrics, the requests it serves against an estimate of what it could serve (its requests
  over its busier resource's utilisation: what it served per unit of CPU or disk, at 100 %),
  partitions and requests by class (Stage C's classification with the policy's thresholds);
  nodes a plan in flight is launching appear from its steps (booting, joining) before any
  snapshot has them;
- the busiest partitions (table, region, node, class, requests/s);
- per-tenant latency against its SLO over the last hour of the cluster's clock: on the
  simulated cluster each workload's own mean response time; on a real one each table's
  request-weighted server latency of the nodes serving it (what the store reports: no client
  side), against `policy.latency_slo_ms` when set.
Names (nodes, tables, regions, tenants) are data: the page shows them as text, never markup.
"""
from __future__ import annotations

import math
import re
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from decision.model import GROUPS
from decision.placement import classify
from decision.model import Plan
from decision.model import ClusterSnapshot

HOUR_S = 3600.0
BUSIEST = 12
STATE_WORDS = {"active": "serving", "booting": "booting", "draining": "draining"}


def table_latency(snapshot: ClusterSnapshot) -> dict[str, float]:
    """Per table: the request-weighted mean server latency of the nodes serving it (ms)."""
    lat = {n.id: n.metrics.rpc_latency_ms for n in snapshot.nodes
           if n.metrics is not None and n.metrics.rpc_latency_ms is not None}
    weight: dict[str, float] = {}
    total: dict[str, float] = {}
    for p in snapshot.partitions:
        if p.node in lat and p.requests > 0:
            weight[p.table] = weight.get(p.table, 0.0) + p.requests
            total[p.table] = total.get(p.table, 0.0) + p.requests * lat[p.node]
    return {t: total[t] / w for t, w in weight.items() if w > 0}


class ClusterView:
    """A loop observer keeping the console's cluster document (see the module docstring).

    `tenants()` returns {tenant: latency ms} for the moment it is called (None: derive per
    table from each snapshot); `slo_ms` is the objective drawn beside it (None: none known)."""

    def __init__(self, policy: Any, *, protected: Callable[[], dict[str, str]] = dict,
                 tenants: Callable[[], dict[str, float]] | None = None,
                 slo_ms: float | None = None, telemetry: Any = None, simulated: bool = False):
        self.policy, self.protected, self.tenants = policy, protected, tenants
        self.simulated = simulated  # the cluster's clock is simulated seconds, not a date
        self.slo_ms, self.telemetry = slo_ms, telemetry
        self._lock = threading.Lock()
        self._doc: dict[str, Any] = {"taken_at": None, "nodes": [], "busiest": [],
                                     "classes": list(GROUPS), "tenants": [], "slo_ms": slo_ms,
                                     "totals": {}}
        self._history: deque[tuple[float, dict[str, float]]] = deque(maxlen=1440)
        self._verdicts: dict[str, str] = {}
        self.listeners: list[Callable[[], None]] = []

    # ---- loop observer ------------------------------------------------------------------
    def on_sample(self, now: float, samples_since_clear: int) -> None:
        if self.tenants is not None:
            self._record(now, self.tenants())

    def on_decision(self, now: float, plan: Plan, plan_id: str | None, snapshot: ClusterSnapshot) -> None:
        self._verdicts = {n.node: n.verdict for n in plan.health.nodes}
        if self.tenants is None:
            self._record(now, table_latency(snapshot))
        doc = self._build(now, snapshot)
        with self._lock:
            self._doc = doc
        for listener in list(self.listeners):
            listener()

    def on_hold(self, now: float, cause: Any, words: str) -> None:
        pass

    def on_action(self, now: float, event: str, plan_id: str | None, status: Any) -> None:
        pass

    def on_error(self, now: float, error: BaseException) -> None:
        pass

    # ---- reading (any thread) -----------------------------------------------------------
    def document(self, plan_steps: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
        """The last document, with nodes a plan in flight is launching (from its steps) and
        the protection as it is now."""
        with self._lock:
            doc = dict(self._doc)
            history = list(self._history)
        protected = self.protected()
        nodes = [dict(n, protected=protected.get(n["id"])) for n in doc["nodes"]]
        known = {n["id"] for n in nodes}
        for s in plan_steps:
            if s["op"] != "launch" or s["state"] not in ("pending", "running"):
                continue
            node_id = str(s.get("server_id") or s.get("node"))
            if node_id in known:
                continue
            state = "joining" if s.get("sub_state") in ("joining", "ready") else "booting"
            nodes.append(_empty_node(node_id, s.get("profile") or "default", state))
        drains = {s.get("node") for s in plan_steps if s["op"] in ("drain", "terminate")
                  and s["state"] == "running"}
        for n in nodes:
            if n["id"] in drains and n["state"] == "serving":
                n["state"] = "draining"
        doc["nodes"] = nodes
        doc["tenants"] = self._tenants(history)
        return doc

    # ---- building -----------------------------------------------------------------------
    def _record(self, now: float, latency: dict[str, float]) -> None:
        clean = {k: float(v) for k, v in latency.items() if v is not None and math.isfinite(v)}
        with self._lock:
            self._history.append((now, clean))
            while self._history and self._history[0][0] < now - HOUR_S:
                self._history.popleft()
        if self.telemetry is not None:
            for tenant, ms in clean.items():
                self.telemetry.record_tenant_latency(tenant, ms / 1000.0,
                                                     None if self.slo_ms is None
                                                     else self.slo_ms / 1000.0)

    def _tenants(self, history: list[tuple[float, dict[str, float]]]) -> list[dict[str, Any]]:
        if not history:
            return []
        end = history[-1][0]
        names = sorted({t for _, d in history for t in d})
        out = []
        for name in names:
            points = [[round(t - end, 1), round(d[name], 3)] for t, d in history if name in d]
            values = [v for _, v in points]
            over = (sum(1 for v in values if v > self.slo_ms) / len(values)
                    if self.slo_ms is not None and values else None)
            out.append({"name": name, "points": points, "last_ms": values[-1],
                        "max_ms": max(values), "share_over_slo": over})
        return out

    def _build(self, now: float, snapshot: ClusterSnapshot) -> dict[str, Any]:
        # numpy over the partitions (one pass of Python to read them): a decision on 100,000
        # partitions must not wait seconds for the console (bench/bench_console.py)
        per_node: dict[str, dict[str, Any]] = {}
        for n in snapshot.nodes:
            m = n.metrics
            entry = _empty_node(n.id, n.profile, STATE_WORDS.get(n.state, n.state))
            entry["verdict"] = self._verdicts.get(n.id, "unknown")
            if m is not None:
                entry.update(cpu=m.cpu, io_wait=m.io_wait, memory=m.memory,
                             latency_ms=m.rpc_latency_ms)
            per_node[n.id] = entry
        parts = snapshot.partitions
        for p in parts:  # a partition on a server the snapshot does not list
            if p.node not in per_node:
                per_node[p.node] = _empty_node(p.node, "default", "unknown")
        ids = list(per_node)
        index = {nid: i for i, nid in enumerate(ids)}
        count = len(parts)
        reads = np.fromiter((p.reads for p in parts), np.float64, count)
        writes = np.fromiter((p.writes for p in parts), np.float64, count)
        scans = np.fromiter((p.scans for p in parts), np.float64, count)
        node = np.fromiter((index[p.node] for p in parts), np.int64, count)
        load = reads + writes + scans
        group = classify(reads, writes, scans, self.policy).astype(np.int64)
        cell = node * len(GROUPS) + group
        size = len(ids) * len(GROUPS)
        counts = np.bincount(cell, minlength=size).reshape(len(ids), len(GROUPS))
        requests = np.bincount(cell, weights=load, minlength=size).reshape(len(ids), len(GROUPS))
        for i, nid in enumerate(ids):
            entry = per_node[nid]
            entry["partitions"] = dict(zip(GROUPS, counts[i].tolist()))
            entry["requests"] = dict(zip(GROUPS, requests[i].tolist()))
            entry["load"] = float(requests[i].sum())
            util = max(entry["cpu"] or 0.0, entry["io_wait"] or 0.0)
            # requests per unit of its busier resource, scaled to 100 %; not below a tenth
            # busy (an idle node's ratio says nothing about what it could serve)
            entry["capacity"] = entry["load"] / util if util >= 0.1 and entry["load"] > 0 else None
        top: list[int] = np.argsort(-load, kind="stable")[:BUSIEST].tolist()
        return {
            "taken_at": snapshot.taken_at.isoformat() if snapshot.taken_at else None,
            "clock_s": now,
            "simulated": self.simulated,
            "nodes": sorted(per_node.values(), key=lambda n: _natural(n["id"])),
            "busiest": [{"table": parts[i].table, "partition": parts[i].id,
                         "node": parts[i].node, "class": GROUPS[int(group[i])],
                         "requests": float(load[i]), "reads": parts[i].reads,
                         "writes": parts[i].writes, "scans": parts[i].scans} for i in top],
            "classes": list(GROUPS),
            "slo_ms": self.slo_ms,
            "thresholds": {"cpu_high": self.policy.cpu_high, "cpu_low": self.policy.cpu_low},
            "totals": {"nodes": len(snapshot.nodes), "partitions": count,
                       "requests": float(load.sum()), "missing": list(snapshot.missing)[:20]},
        }


def _empty_node(node_id: str, profile: str, state: str) -> dict[str, Any]:
    return {"id": node_id, "profile": profile, "state": state, "verdict": "unknown",
            "cpu": None, "io_wait": None, "memory": None, "latency_ms": None, "load": 0.0,
            "capacity": None, "partitions": dict.fromkeys(GROUPS, 0),
            "requests": dict.fromkeys(GROUPS, 0.0), "protected": None}


def _natural(text: str) -> tuple:
    """rs2 before rs10."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def sim_tenants(cluster: Any) -> Callable[[], dict[str, float]]:
    """Each simulated workload's mean response time since the last call (ms), over the steps
    in which it completed operations."""

    seen = [0]

    def read() -> dict[str, float]:
        lat, ops = cluster.rec_latency_wl_ms, cluster.rec_ops
        start, seen[0] = seen[0], len(lat)
        if start >= len(lat):
            return {}
        lat_a = np.asarray(lat[start:], dtype=float)
        ops_a = np.asarray(ops[start:], dtype=float)
        out = {}
        for i, name in enumerate(cluster.wl_names):
            w = ops_a[:, i]
            ok = (w > 0) & np.isfinite(lat_a[:, i])
            if ok.any():
                out[name] = float(np.average(lat_a[ok, i], weights=w[ok]))
        return out
    return read


__all__ = ["ClusterView", "table_latency", "sim_tenants"]
