"""Cost at the SLO: what a policy's node-minutes are worth once every tenant meets its SLO.

* `smallest_static_meeting_slo`: of the static sizes run on the same scenario and seed, the
  smallest whose worst-tenant attainment reaches the target (default 0.99), and its
  node-minutes. None when no size tried meets it.
* A policy's cost ratios (its node-minutes over the static's, and over the oracle's) count only
  when the policy itself reaches the target: a cheaper run that fails tenants is not cheaper.
  Per seed, then mean and min–max over the seeds that count, with how many did.
* The oracle (`oracle_node_minutes`): for every minute, the smallest node count that serves
  that minute's offered load within the SLO at steady state, summed. `oracle_minutes` does the
  summing over any such per-minute answer; the answer itself is the simulator's steady-state
  capacity model (simulator/steady.py: balanced placement, warm caches, no boot or move).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from simulator.steady import scenario_load, smallest_nodes

DEFAULT_TARGET = 0.99  # issue 25 item 3: every tenant within its SLO in >= 99 % of windows


def check_target(value: float, field: str = "--slo-target") -> float:
    """A target attainment: a fraction in (0, 1]. ValueError naming the field otherwise."""
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value <= 1:
        raise ValueError(f"{field}: expected a fraction in (0, 1] (e.g. 0.99), got {value!r}")
    return float(value)


def meets(attainment: float | None, target: float) -> bool:
    return attainment is not None and attainment >= target - 1e-12


def smallest_static(sizes: Iterable[tuple[int, float, float]], target: float) -> dict[str, Any] | None:
    """(size, node_minutes, attainment) of the static runs of one seed -> the smallest size that
    meets the target: {"size", "node_minutes", "slo_attainment"}, or None."""
    ok = sorted((n, nm, a) for n, nm, a in sizes if meets(a, target))
    if not ok:
        return None
    n, nm, a = ok[0]
    return {"size": int(n), "node_minutes": float(nm), "slo_attainment": float(a)}


def ratio(policy_nm: float, reference_nm: float | None, attainment: float, target: float) -> float | None:
    """policy node-minutes / reference node-minutes, only when the policy meets the target."""
    if reference_nm is None or reference_nm <= 0 or not meets(attainment, target):
        return None
    return float(policy_nm) / float(reference_nm)


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """Mean and min–max over the values that count (not None), and how many did."""
    got = [float(v) for v in values if v is not None]
    if not got:
        return {"mean": None, "min": None, "max": None, "counted": 0, "of": len(values)}
    return {"mean": float(np.mean(got)), "min": min(got), "max": max(got), "counted": len(got),
            "of": len(values)}


def cost_at_slo(per_seed: Sequence[dict[str, Any]], static_by_seed: dict[str, dict[str, Any] | None],
                oracle_by_seed: dict[str, float | None], target: float) -> dict[str, Any]:
    """A policy's cost at the SLO. per_seed: its runs' {"seed", "node_minutes",
    "slo_attainment"}; static_by_seed / oracle_by_seed: by str(seed)."""
    rows = []
    for s in per_seed:
        key = str(s["seed"])
        st = static_by_seed.get(key)
        oracle = oracle_by_seed.get(key)
        a = float(s["slo_attainment"])
        rows.append({"seed": s["seed"], "node_minutes": float(s["node_minutes"]), "slo_attainment": a,
                     "meets_slo": meets(a, target),
                     "vs_smallest_static": ratio(s["node_minutes"], st["node_minutes"] if st else None, a, target),
                     "vs_oracle": ratio(s["node_minutes"], oracle, a, target)})
    return {"per_seed": rows,
            "node_minutes": spread([r["node_minutes"] for r in rows]),
            "slo_attainment": spread([r["slo_attainment"] for r in rows]),
            "meets_slo": sum(r["meets_slo"] for r in rows),
            "vs_smallest_static": spread([r["vs_smallest_static"] for r in rows]),
            "vs_oracle": spread([r["vs_oracle"] for r in rows])}


def static_over_oracle(static_by_seed: dict[str, dict[str, Any] | None],
                       oracle_by_seed: dict[str, float | None]) -> dict[str, Any]:
    """The smallest SLO-meeting static size's node-minutes over the oracle's, per seed and spread."""
    vals = []
    for key, st in static_by_seed.items():
        oracle = oracle_by_seed.get(key)
        vals.append(st["node_minutes"] / oracle if st and oracle else None)
    return spread(vals)


def oracle_minutes(minutes: int, nodes_for_minute: Callable[[int], int | None]) -> float | None:
    """Sum over minutes of the smallest node count serving that minute within the SLO (each
    node billed the whole minute). None when some minute cannot be served at any size tried."""
    total = 0
    for m in range(minutes):
        n = nodes_for_minute(m)
        if n is None:
            return None
        total += int(n)
    return float(total)


def scenario_oracle(scenario: Any, settings: Any, closed_ops_per_s: Any = None,
                    max_nodes: int = 1000, until_s: float | None = None) -> float | None:
    """The oracle's node-minutes for a scenario: per minute, simulator.steady's smallest node
    count for the load the scenario offers in that minute (open loop: its scheduled rate, noise
    included; closed loop: `closed_ops_per_s[m]`, per workload, what a run served that minute),
    at its SLO, over the scenario or its first `until_s` seconds (a run cut short). None when
    some minute cannot be met at any size up to max_nodes."""
    per = oracle_per_minute(scenario, settings, closed_ops_per_s, max_nodes, until_s)
    return oracle_minutes(len(per), per.__getitem__)


def oracle_per_minute(scenario: Any, settings: Any, closed_ops_per_s: Any = None,
                      max_nodes: int = 1000, until_s: float | None = None) -> list[int | None]:
    """scenario_oracle's answer for each minute (None: no size up to max_nodes meets it)."""
    timeouts = [w.timeout_ms for w in scenario.workloads if getattr(w, "rate", None) is not None]
    timeout = min(timeouts) if timeouts else 1000.0
    end = scenario.duration_s if until_s is None else min(until_s, scenario.duration_s)
    minutes = int(math.ceil(end / 60.0 - 1e-9))
    if closed_ops_per_s is not None:
        minutes = min(minutes, len(closed_ops_per_s))

    def nodes(m: int) -> int | None:
        closed = None if closed_ops_per_s is None else closed_ops_per_s[m]
        load = scenario_load(scenario, 60.0 * m, min(60.0 * (m + 1), end), settings,
                             closed_ops_per_s=closed)
        return smallest_nodes(load, scenario.slo_latency_ms, settings, slo_max_failed=scenario.slo_max_failed,
                              timeout_ms=timeout, max_nodes=max_nodes)
    return [nodes(m) for m in range(minutes)]


def closed_rates_per_minute(recording: Any) -> list[list[float]] | None:
    """Per minute and workload, the operations per second a run served (the demand closed-loop
    tenants put on the oracle: theirs is what they got); None when every tenant is open loop."""
    open_loop = getattr(recording, "open_loop", None)
    if open_loop is not None and all(open_loop):
        return None
    ops = np.asarray(recording.ops, dtype=float)
    per = max(1, int(round(60.0 / recording.tick_s)))
    out = []
    for start in range(0, ops.shape[0], per):
        chunk = ops[start:start + per]
        out.append([float(v) for v in chunk.sum(axis=0) / (chunk.shape[0] * recording.tick_s)])
    return out
