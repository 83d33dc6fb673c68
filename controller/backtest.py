"""Backtest on your own traffic: a series of kept snapshots (`metctl run --observe`,
`metctl snapshot --every`) becomes an open-loop scenario whose demand follows what the cluster
was asked for, so every policy can be priced on last week's traffic before metctl acts.

Per table and kind of request, one open-loop tenant whose `rate:` table is the table's recorded
requests per second at each snapshot (piecewise linear between them, times from the first
snapshot):
  * `<table>-reads`: point reads (gets);
  * `<table>-writes`: mutations, as inserts in the share the table's size grew by (a record is
    `record_kb` x `storage_overhead` on disk, the simulator's own figures) and updates for the rest;
  * `<table>-scans`: scan requests.
A kind the table never served is left out. Each tenant's table has the recorded table's
regions (the count in the first snapshot that read all of them) and records (its size then);
the skew of requests over its regions is fitted with YCSB's hotspot parameters (the pair whose
region shares, sorted, come closest to the recorded mean shares). The cluster starts with the
first snapshot's active nodes.
"""
from __future__ import annotations

from itertools import product
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from common.errors import BadInput
from decision.model import ClusterSnapshot
from controller.snapshot_io import read_snapshot
from simulator.capacity import hotspot_shares

KINDS = (("reads", "read"), ("writes", None), ("scans", "scan"))
HOT_DATA = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)
HOT_OPS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


def load_series(directory: str | Path) -> list[ClusterSnapshot]:
    """The snapshot files of a directory, oldest first (BadInput naming the directory or file)."""

    d = Path(directory)
    if not d.is_dir():
        raise BadInput(str(d), "", "a directory of kept snapshots (metctl snapshot --every, metctl run --observe)")
    files = sorted(p for p in d.iterdir() if p.suffix.lower() in (".json", ".yaml", ".yml")
                   and not p.name.startswith("."))
    snaps = sorted((read_snapshot(f) for f in files), key=lambda s: s.taken_at)
    if len(snaps) < 2:
        raise BadInput(str(d), "", f"at least 2 snapshots to follow rates over time (found {len(snaps)})")
    return snaps


def fit_hotspot(shares: Sequence[float]) -> tuple[float, float]:
    """YCSB's (hot data fraction, hot operation fraction) whose region shares come closest to
    these (sorted both ways; least squares over a grid). Even shares give (1.0, any): uniform."""

    got = np.sort(np.asarray(shares, dtype=float))[::-1]
    if got.size <= 1 or got.sum() <= 0:
        return 1.0, 1.0
    got = got / got.sum()
    best, pick = np.inf, (1.0, 1.0)
    for hd, ho in product(HOT_DATA, HOT_OPS):
        model = np.sort(hotspot_shares(got.size, hd, ho)[0])[::-1]
        err = float(((model - got) ** 2).sum())
        if err < best - 1e-12:
            best, pick = err, (hd, ho)
    return pick


def scenario_from_snapshots(snaps: Sequence[ClusterSnapshot], name: str, *, record_kb: float = 1.0,
                            storage_overhead: float = 1.4, slo_latency_ms: float = 50.0,
                            source: str = "") -> dict[str, Any]:
    """The scenario (as data, ready to dump as YAML) that replays the series' demand."""
    t0 = snaps[0].taken_at
    times = [(s.taken_at - t0).total_seconds() for s in snaps]
    step = float(np.median(np.diff(times))) if len(times) > 1 else 60.0
    tables = sorted({p.table for s in snaps for p in s.partitions})
    record_mb = record_kb * storage_overhead / 1024.0
    workloads = []
    for table in tables:
        # a snapshot that read none of the table's partitions (its sources did not answer, or
        # gave one sample where a rate needs two) is a gap, not a table asked for nothing: the
        # rates follow the snapshots that read it, the first of them held back to the start
        read = [(t, [p for p in s.partitions if p.table == table]) for t, s in zip(times, snaps)]
        read = [(t, parts) for t, parts in read if parts]
        at = [0.0] + [t for t, _ in read[1:]] if read else []
        rates: dict[str, list[float]] = {k: [] for k, _ in KINDS}
        sizes: list[float] = []
        for _, parts in read:
            for k, _ in KINDS:
                rates[k].append(float(sum(getattr(p, k) for p in parts)))
            sizes.append(float(sum(p.size_mb for p in parts)))
        first = _start(read)
        regions = max(1, len({p.id for p in first}))
        start_mb = sum(p.size_mb for p in first)
        records = max(1, int(round(start_mb / record_mb))) if start_mb > 0 else 1000
        load: dict[str, float] = {}
        for s in snaps:
            for p in s.partitions:
                if p.table == table:
                    load[p.id] = load.get(p.id, 0.0) + p.reads + p.writes + p.scans
        shares = [load[p.id] for p in first if p.id in load]
        hot_data, hot_ops = fit_hotspot(shares)
        for kind, op in KINDS:
            series = rates[kind]
            if max(series) <= 0:
                continue
            if op is None:  # writes: inserts in the share the table grew by
                grown_mb = max(sizes[-1] - start_mb, 0.0)
                written = _integral(series, at)
                inserts = min(1.0, grown_mb / record_mb / written) if written > 0 else 0.0
                inserts = round(inserts, 3)
                mix = {k: v for k, v in (("insert", inserts), ("update", round(1.0 - inserts, 3))) if v > 0}
            else:
                mix = {op: 1.0}
            workloads.append({
                "name": f"{table}-{kind}", "mix": mix,
                "rate": [[round(t, 3), round(r, 3)] for t, r in zip(at, series)],
                "records": records, "regions": regions,
                "hot_data_fraction": hot_data, "hot_ops_fraction": hot_ops,
            })
    if not workloads:
        raise BadInput(source or "snapshots", "partitions", "request rates in at least one snapshot "
                       "(every partition served nothing: take snapshots with --samples 2 or more)")
    active = sum(n.state == "active" for n in snaps[0].nodes)
    return {
        "name": name,
        "description": f"replay of {len(snaps)} snapshots{' from ' + source if source else ''}, "
                       f"{t0:%Y-%m-%d %H:%M:%S} UTC onwards",
        "duration_s": round(times[-1] + step, 3),
        "initial_nodes": max(1, active),
        "slo_latency_ms": slo_latency_ms,
        "workloads": workloads,
    }


def _start(read: Sequence[tuple[float, list[Any]]]) -> list[Any]:
    """The table's partitions at the start of the series: those of the first snapshot that read
    all of them. A snapshot whose sources did not all answer holds some of the table's regions;
    its set of region ids is then contained in a later snapshot's (a split or merge replaces
    ids, so a complete earlier set is not contained in a later one)."""
    ids = [{p.id for p in parts} for _, parts in read]
    # the last snapshot has none later: the first such one always exists in a non-empty series
    return next((parts for i, (_, parts) in enumerate(read)
                 if not any(ids[i] < later for later in ids[i + 1:])), [])


def _integral(values: Sequence[float], times: Sequence[float]) -> float:
    """Requests over the series (trapezoids between snapshots)."""
    v, t = np.asarray(values, dtype=float), np.asarray(times, dtype=float)
    return float(((v[1:] + v[:-1]) / 2.0 * np.diff(t)).sum()) if v.size > 1 else 0.0
