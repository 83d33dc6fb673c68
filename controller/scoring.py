"""SLO attainment: per tenant (workload), the share of `slo_interval_s` windows in which it met
its objective; the run's attainment is the worst tenant's. A score that can fail a policy.

A tenant meets a window when, over the window,
  * its p99 response time is at most `slo_latency_ms`,
  * failed requests (timed out) are at most `slo_max_failed` of the requests offered, and
  * it completed something: a window in which a tenant that is switched on (and, open loop,
    was offered requests) completes nothing is missed — closed-loop tenants included, since a
    client that gets no answer sees the worst latency of all.
Windows in which a tenant is not active do not count for it.

The window's p99 is the 99th percentile of the window's answered requests, as a client-side
histogram over the window (YCSB's) reports it: a window meets the objective when at most 1 %
of its answers took longer than `slo_latency_ms` (p99 <= L exactly when P(latency > L) <= 1 %).
The simulator records, per step and tenant, the share of answers slower than the objective
(`slow_wl`, from the step's latency distribution), and the window weighs its steps by the
requests they answered. Recordings without it (and `slo_attainment_step_bound`, for comparison)
use the largest per-step p99 among the steps that served something instead: an upper bound of
the window's p99 (at that value every step's distribution function is >= 0.99, so the
mixture's is), which calls a window missed when one second of it was slow even if that second
carried a fraction of a percent of its requests. Where the recording has no per-step p99
(closed-loop runs before the open-loop model) the per-step mean stands in: a lower bound of the
p99, so such attainment is optimistic, and says so (`p99_source`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

DEFAULT_MAX_FAILED = 0.001  # 0.1 % of the requests offered in a window (issue 25 item 2)
SLO_QUANTILE = 0.99  # the objective is on the 99th percentile (issue 25)


@dataclass(frozen=True)
class TenantSteps:
    """Per step (rows) and workload (columns): what each tenant asked for and got."""

    served: np.ndarray  # operations completed in the step
    offered: np.ndarray  # operations offered (closed loop: = served)
    failed: np.ndarray  # operations that failed (timed out) in the step
    p99_ms: np.ndarray  # the step's p99 response time (or its mean, see p99_source)
    active: np.ndarray  # bool: the tenant is switched on (and offered requests, open loop)
    dt: float
    workloads: tuple[str, ...]
    p99_source: str = "p99"  # "p99" | "mean" (no percentile recorded)
    slow: np.ndarray | None = None  # share of each step's answers over the objective, if recorded


def window_attainment(steps: TenantSteps, slo_ms: float, interval_s: float,
                      max_failed: float = DEFAULT_MAX_FAILED) -> dict[str, dict[str, float]]:
    """Per workload: {"windows": active windows, "met": windows met, "attainment": met/windows
    (1.0 with no active window)}. A trailing part-window is not scored."""
    verdicts = window_verdicts(steps, slo_ms, interval_s, max_failed)
    active, met = verdicts.active, verdicts.met
    out: dict[str, dict[str, float]] = {}
    for i, w in enumerate(steps.workloads):
        k = int(active[:, i].sum())
        m = int(met[:, i].sum())
        out[w] = {"windows": k, "met": m, "attainment": m / k if k else 1.0}
    return out


@dataclass(frozen=True)
class WindowVerdicts:
    """Per window (rows) and workload (columns); a trailing part-window is left out."""

    active: np.ndarray  # bool: the tenant was switched on in the window
    met: np.ndarray  # bool: ... and met its objective there
    slow: np.ndarray  # share of its answers over the objective (NaN: not recorded)
    failed: np.ndarray  # share of the requests offered that failed


def window_verdicts(steps: TenantSteps, slo_ms: float, interval_s: float,
                    max_failed: float = DEFAULT_MAX_FAILED) -> WindowVerdicts:
    """Each window's verdict per tenant, with the shares it was judged on."""
    per = max(1, int(round(interval_s / steps.dt)))
    n = steps.served.shape[0] // per

    def win(a: np.ndarray) -> np.ndarray:
        return a[: n * per].reshape(n, per, len(steps.workloads))

    served, offered, failed = win(steps.served), win(steps.offered), win(steps.failed)
    active = np.asarray(win(steps.active.astype(bool)).any(axis=1), dtype=bool)
    done = served.sum(axis=1)
    if steps.slow is not None:  # the window's own percentile: its share of slow answers
        slow = (served * np.nan_to_num(win(steps.slow), nan=0.0)).sum(axis=1)
        in_time = slow <= (1.0 - SLO_QUANTILE) * done + 1e-9 * np.maximum(done, 1.0)
        slow_share = slow / np.maximum(done, 1e-12)
    else:  # the largest step p99: an upper bound of the window's
        in_time = np.where(served > 0, win(steps.p99_ms), -np.inf).max(axis=1) <= slo_ms
        slow_share = np.full(done.shape, np.nan)
    asked = offered.sum(axis=1)
    fail_frac = np.where(asked > 0, failed.sum(axis=1) / np.maximum(asked, 1e-12), 0.0)
    met = np.asarray(active & (done > 0) & in_time & (fail_frac <= max_failed), dtype=bool)
    return WindowVerdicts(active, met, slow_share, fail_frac)


def tenant_steps(recording: Any, scenario: Any) -> TenantSteps:
    """The tenants' per-step figures from a simulator Recording. Uses the open-loop fields
    (offered, failed, p99 and share over the objective per workload) when the recording has
    them; otherwise offered = served, nothing fails, and the mean response time stands in for
    the p99."""
    served = np.asarray(recording.ops, dtype=float)
    steps, nw = served.shape if served.ndim == 2 else (0, len(recording.workloads))
    served = served.reshape(steps, nw)
    t = np.asarray(recording.t, dtype=float)

    def field(name: str) -> np.ndarray | None:
        v = getattr(recording, name, None)
        return None if v is None else np.asarray(v, dtype=float).reshape(steps, nw)

    offered = field("offered")
    failed = field("failed")
    p99 = field("p99_wl_ms")
    slow = field("slow_wl")
    source = "p99" if slow is None else "window"
    if p99 is None:
        p99, source = np.asarray(recording.latency_wl_ms, dtype=float).reshape(steps, nw), "mean"
    by_name = {w.name: w for w in scenario.workloads}
    active = np.zeros((steps, nw), dtype=bool)
    for i, name in enumerate(recording.workloads):
        w = by_name.get(name)
        on = np.ones(steps, dtype=bool)
        if w is not None:
            on = (t >= w.start_s) & (t < (w.stop_s if w.stop_s is not None else np.inf))
        if offered is not None and _open_loop(w):
            on = on & (offered[:, i] > 0)  # an open-loop tenant with no demand asks nothing
        active[:, i] = on
    return TenantSteps(served=served, offered=served.copy() if offered is None else offered,
                       failed=np.zeros_like(served) if failed is None else failed,
                       p99_ms=p99, active=active, dt=float(recording.tick_s),
                       workloads=tuple(recording.workloads), p99_source=source, slow=slow)


def _open_loop(workload: Any) -> bool:
    return workload is not None and getattr(workload, "rate", None) is not None


def slo_summary(recording: Any, scenario: Any) -> dict[str, Any]:
    """What summary.json carries: worst-tenant attainment, per workload, offered and failed."""
    steps = tenant_steps(recording, scenario)
    max_failed = float(getattr(scenario, "slo_max_failed", DEFAULT_MAX_FAILED))
    slo_ms, interval_s = float(scenario.slo_latency_ms), float(scenario.slo_interval_s)
    per = window_attainment(steps, slo_ms, interval_s, max_failed)
    scored = {w: v for w, v in per.items() if v["windows"] > 0}
    # the stricter reading (each window's worst step), kept beside it for comparison
    bound = per if steps.slow is None else window_attainment(replace(steps, slow=None), slo_ms,
                                                             interval_s, max_failed)
    return {
        "slo_attainment": min((v["attainment"] for v in scored.values()), default=1.0),
        "slo_attainment_step_bound": min((v["attainment"] for v in bound.values() if v["windows"] > 0),
                                         default=1.0),
        "slo_attainment_by_workload": {w: v["attainment"] for w, v in per.items()},
        "slo_windows_by_workload": {w: int(v["windows"]) for w, v in per.items()},
        "slo_max_failed": max_failed,
        "slo_p99_source": steps.p99_source,
        "ops_offered": float(steps.offered.sum()),
        "ops_offered_by_workload": {w: float(v) for w, v in zip(steps.workloads, steps.offered.sum(axis=0))},
        "ops_failed": float(steps.failed.sum()),
    }

