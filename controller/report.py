"""Reports of a run: summary.json, a per-second CSV, the decision log (decisions.jsonl) and
PNG plots (matplotlib, Agg backend).

Scores, as the papers define them:
* SLO violations (incremental-elasticity paper, eq. 1–3): the run is cut into windows of
  `slo_interval_s` (2 s); a window whose mean response time exceeds the target scores 1
  (`slo_violation_intervals`), and `slo_violation_magnitude_ms` sums by how much (the paper's
  eq. 3 writes the same sum with a minus sign). Both are given for the whole run and for the
  windows during elasticity actions (while a plan was being carried out: `..._during_actions`).
* Elasticity score (Dory et al., eq. 1–2), per scale-out: request sets of R = 10,000 requests;
  a set's time T = R / throughput, in 10-s bins. Before the scale-out (5 min): Rt1 = mean
  response time, and the stable variation = the median |ΔT| between bins. After it: the
  cluster is stable once the plan has ended and the last 5 bins all vary less than that; Rt2 =
  mean response time over those 5 bins. A = the area of T above the straight ramp from the
  pre-level to the post-level, B = the area of T's standard deviation within bins, F = R /
  cluster size; score = (A + B) / ((Rt1 + Rt2)² · F). Lower is better; None when the cluster
  did not stabilise before the next change.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from controller.cost import closed_rates_per_minute, scenario_oracle
from controller.scoring import slo_summary

REQUEST_SET = 10_000  # Dory et al.: R = 10,000 requests per request set
BIN_S = 10.0  # seconds per request-set bin
PRE_WINDOW_S = 300.0  # stable reference before a scale-out
STABLE_SETS = 5  # Dory et al.: the last 5 request sets within the stable variation


@dataclass
class Series:
    """Per-step series of one run."""

    t: np.ndarray  # s
    ops: np.ndarray  # (steps, workloads) operations in the step
    latency_ms: np.ndarray  # mean response time over all operations in the step
    latency_wl_ms: np.ndarray  # (steps, workloads) each workload's own mean response time
    vms: np.ndarray  # VMs billed
    servers: np.ndarray  # RegionServers serving
    busy: np.ndarray  # bool: a plan was being carried out
    dt: float
    workloads: list[str]

    @property
    def throughput(self) -> np.ndarray:
        return self.ops.sum(axis=1) / self.dt


def series_of(run: Any) -> Series:
    r = run.cluster.recording()
    busy = np.zeros(r.t.size, dtype=bool)
    for a, b in run.recorder.busy_intervals:
        busy |= (r.t >= a) & (r.t < b)
    return Series(t=r.t, ops=r.ops, latency_ms=r.latency_ms, latency_wl_ms=r.latency_wl_ms, vms=r.vms,
                  servers=r.servers, busy=busy, dt=r.tick_s, workloads=list(r.workloads))


def tenant_slo_windows(s: Series, slo_ms: float, interval_s: float) -> dict[str, int]:
    """Per workload, the windows of `interval_s` in which ITS OWN mean response time (weighted
    by its operations) exceeds the SLO; a window where it completed nothing does not count.
    (Averaging over all tenants lets fast writes hide a slow tenant.)"""
    per = max(1, int(round(interval_s / s.dt)))
    n = s.t.size // per
    out: dict[str, int] = {}
    if n == 0:
        return {w: 0 for w in s.workloads}
    ops = s.ops[: n * per].reshape(n, per, -1)
    lat = s.latency_wl_ms[: n * per].reshape(n, per, -1)
    done = ops.sum(axis=1)
    mean = np.where(done > 0, (ops * lat).sum(axis=1) / np.maximum(done, 1e-12), 0.0)
    for i, w in enumerate(s.workloads):
        out[w] = int(((mean[:, i] > slo_ms) & (done[:, i] > 0)).sum())
    return out


def slo_scores(s: Series, slo_ms: float, interval_s: float) -> dict[str, float]:
    per = max(1, int(round(interval_s / s.dt)))
    n = s.t.size // per
    if n == 0:
        return {"intervals": 0, "magnitude_ms": 0.0, "intervals_during_actions": 0,
                "magnitude_during_actions_ms": 0.0, "windows": 0}
    thr = s.throughput[: n * per].reshape(n, per)
    lat = s.latency_ms[: n * per].reshape(n, per)
    w = thr.sum(axis=1)
    mean = np.where(w > 0, (thr * lat).sum(axis=1) / np.maximum(w, 1e-12), 0.0)
    over = np.maximum(mean - slo_ms, 0.0)
    viol = mean > slo_ms
    during = s.busy[: n * per].reshape(n, per).any(axis=1)
    return {"intervals": int(viol.sum()), "magnitude_ms": float(over.sum()),
            "intervals_during_actions": int((viol & during).sum()),
            "magnitude_during_actions_ms": float(over[during].sum()), "windows": int(n)}


def elasticity_scores(s: Series, scale_outs: Sequence[tuple[float, int, int]],
                      plan_ends: Sequence[float], changes: Sequence[float]) -> list[dict[str, Any]]:
    """Dory et al.'s score for each (time, nodes before, nodes after) scale-out."""
    per = max(1, int(round(BIN_S / s.dt)))
    n = s.t.size // per
    if n < 2:
        return []
    thr = s.throughput[: n * per].reshape(n, per)
    lat = s.latency_ms[: n * per].reshape(n, per) / 1000.0
    mean_thr = thr.mean(axis=1)
    with np.errstate(divide="ignore"):
        T = np.where(mean_thr > 0, REQUEST_SET / np.maximum(mean_thr, 1e-9), np.inf)
        T_sec = np.where(thr > 0, REQUEST_SET / np.maximum(thr, 1e-9), np.nan)
    # Spread of the per-second times within a bin (nanstd's, written out: a bin in which
    # nothing was served has no spread, 0, instead of an all-NaN slice warning).
    served = np.isfinite(T_sec)
    count = np.maximum(served.sum(axis=1), 1)
    centre = np.where(served, T_sec, 0.0).sum(axis=1) / count
    sigma = np.sqrt(np.where(served, (T_sec - centre[:, None]) ** 2, 0.0).sum(axis=1) / count)
    w = thr.sum(axis=1)
    rt = np.where(w > 0, (thr * lat).sum(axis=1) / np.maximum(w, 1e-12), np.nan)
    t_bin = s.t[: n * per].reshape(n, per)[:, 0]
    out = []
    boundaries = sorted(set(changes) | {x[0] for x in scale_outs})
    for t0, before, after in scale_outs:
        rec: dict[str, Any] = {"t_s": t0, "from_nodes": before, "to_nodes": after, "score": None,
                               "stabilized_after_s": None, "rt1_ms": None, "rt2_ms": None}
        pre = (t_bin >= t0 - PRE_WINDOW_S) & (t_bin < t0) & np.isfinite(T)
        later = [b for b in boundaries if b > t0]
        end = later[0] if later else s.t[-1] + s.dt
        done = min([e for e in plan_ends if e >= t0] or [end])
        if pre.sum() < 3:
            out.append(rec)
            continue
        deltas = np.abs(np.diff(T[pre]))
        threshold = max(float(np.median(deltas)), 1e-3 * float(np.mean(T[pre])))
        rt1 = float(np.nanmean(rt[pre]))
        T1 = float(np.mean(T[pre]))
        idx = np.where((t_bin >= t0) & (t_bin < end))[0]
        stable_at = None
        for j in idx:
            if t_bin[j] < done or j - STABLE_SETS < idx[0]:
                continue
            window = T[j - STABLE_SETS: j + 1]
            if np.all(np.isfinite(window)) and np.all(np.abs(np.diff(window)) <= threshold):
                stable_at = j
                break
        rec["rt1_ms"] = rt1 * 1000.0
        if stable_at is None:
            out.append(rec)
            continue
        last = slice(stable_at - STABLE_SETS + 1, stable_at + 1)
        rt2 = float(np.nanmean(rt[last]))
        T2 = float(np.mean(T[last]))
        span = np.arange(idx[0], stable_at + 1)
        t_span = t_bin[span]
        ramp = T1 + (T2 - T1) * (t_span - t_span[0]) / max(t_span[-1] - t_span[0], 1e-9)
        Tspan = np.where(np.isfinite(T[span]), T[span], ramp)
        A = float(np.sum(np.maximum(Tspan - ramp, 0.0)) * BIN_S)
        B = float(np.sum(sigma[span]) * BIN_S)
        F = REQUEST_SET / max(before, 1)
        rec.update(score=(A + B) / (((rt1 + rt2) ** 2) * F), stabilized_after_s=float(t_bin[stable_at] + BIN_S - t0),
                   rt2_ms=rt2 * 1000.0)
        out.append(rec)
    return out


def summarize(run: Any, policy: str, *, seed: int | None = None, oracle: bool = True) -> dict[str, Any]:
    """summary.json's figures. oracle=False leaves `oracle_node_minutes` out (None): it depends
    on the scenario and seed only, and a grid computes it once per pair (bench/evaluate.py)."""
    s = series_of(run)
    c = run.cluster
    sc = run.scenario
    rec = run.recorder
    total = float(s.ops.sum())
    duration = float(s.t.size * s.dt)
    changes = sorted({w.start_s for w in sc.workloads if w.start_s > 0}
                     | {w.stop_s for w in sc.workloads if w.stop_s is not None})
    edges = [0.0, *[x for x in changes if x < duration], duration]
    phases = []
    for a, b in zip(edges[:-1], edges[1:]):
        m = (s.t >= a) & (s.t < b)
        phases.append({"from_s": a, "to_s": b, "ops": float(s.ops[m].sum()),
                       "mean_throughput": float(s.ops[m].sum() / max(b - a, 1e-9)),
                       "mean_vms": float(s.vms[m].mean()) if m.any() else 0.0,
                       "max_vms": int(s.vms[m].max()) if m.any() else 0})
    actions: dict[str, int] = {}
    for e in c.events:
        if e.kind in ("launch", "terminate", "split", "move", "transfer", "restart", "compact",
                      "decommission", "balancer"):
            actions[e.kind] = actions.get(e.kind, 0) + 1
    planned: dict[str, int] = {}
    for d in rec.decisions:
        if d.plan_id is None:
            continue
        for k, v in d.kinds.items():
            planned[k] = planned.get(k, 0) + v
    holds: dict[str, int] = {}
    for _, cause, _ in rec.holds:
        holds[cause] = holds.get(cause, 0) + 1
    scale_outs = [(d.t, d.current, d.target) for d in rec.decisions if d.plan_id and d.delta > 0]
    plan_ends = [t for t, ev, _ in rec.plan_events if ev != "submitted"]
    slo = slo_scores(s, sc.slo_latency_ms, sc.slo_interval_s)
    by_tenant = tenant_slo_windows(s, sc.slo_latency_ms, sc.slo_interval_s)
    ends = [e for e in rec.plan_events]
    return {
        "scenario": sc.name,
        "policy": policy,
        "seed": sc.seed if seed is None else seed,
        "data_transfer": c.transfer_mode,
        "duration_s": duration,
        "total_ops": total,
        "mean_throughput": total / duration if duration else 0.0,
        "node_minutes": float(s.vms.sum() * s.dt / 60.0),
        "max_nodes": int(s.vms.max()) if s.vms.size else 0,
        "final_nodes": int(s.vms[-1]) if s.vms.size else 0,
        "phases": phases,
        "actions": dict(sorted(actions.items())),
        "planned_actions": dict(sorted(planned.items())),
        "plans": {"submitted": sum(1 for _, ev, _ in ends if ev == "submitted"),
                  "done": sum(1 for _, ev, _ in ends if ev == "done"),
                  "failed": sum(1 for _, ev, _ in ends if ev in ("failed", "abandoned"))},
        # every round once: a plan submitted or a hold (controller.loop.LoopCounters)
        "decisions": run.loop.counters.decisions,
        "holds": dict(sorted(holds.items())),
        "slo_latency_ms": sc.slo_latency_ms,
        "slo_interval_s": sc.slo_interval_s,
        **slo_summary(c.recording(), sc),
        "oracle_node_minutes": (scenario_oracle(sc, c.settings, closed_rates_per_minute(c.recording()),
                                                until_s=duration) if oracle else None),
        "slo_violation_tenant_windows": int(sum(by_tenant.values())),
        "slo_violation_windows_by_workload": by_tenant,
        "slo_violation_intervals": slo["intervals"],
        "slo_violation_magnitude": slo["magnitude_ms"],
        "slo_violation_intervals_during_actions": slo["intervals_during_actions"],
        "slo_violation_magnitude_during_actions": slo["magnitude_during_actions_ms"],
        "mean_latency_ms": float(np.average(s.latency_ms, weights=np.maximum(s.throughput, 1e-12))) if total else 0.0,
        "elasticity": elasticity_scores(s, scale_outs, plan_ends, changes),
        "wall_time_s": run.wall_s,
        "errors": len(rec.errors),
    }


def write_csv(run: Any, path: Path) -> None:
    s = series_of(run)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["t_s", "throughput_ops_s", *[f"ops_{n}" for n in s.workloads], "latency_ms",
                    "vms", "servers", "plan_running"])
        for i in range(s.t.size):
            w.writerow([f"{s.t[i]:g}", f"{s.throughput[i]:.1f}", *[f"{v:.1f}" for v in s.ops[i] / s.dt],
                        f"{s.latency_ms[i]:.3f}", int(s.vms[i]), int(s.servers[i]), int(s.busy[i])])


def _plt():
    import matplotlib  # noqa: PLC0415 — only when a report draws its plots (~0.5 s import)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 — only when a report draws its plots (~0.5 s import)
    return plt


def _changes(run: Any) -> list[float]:
    sc = run.scenario
    return sorted({w.start_s for w in sc.workloads if w.start_s > 0}
                  | {w.stop_s for w in sc.workloads if w.stop_s is not None})


def plot_run(run: Any, out: Path, title: str) -> list[Path]:
    plt = _plt()
    s = series_of(run)
    minutes = s.t / 60.0
    smooth = _moving(s.throughput, int(30 / s.dt))
    files = []
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(minutes, smooth, color="tab:blue", lw=1.2, label="throughput (30 s mean)")
    ax.set_xlabel("minutes")
    ax.set_ylabel("operations / s")
    ax2 = ax.twinx()
    ax2.step(minutes, s.vms, where="post", color="tab:red", lw=1.5, label="machines")
    ax2.set_ylabel("machines")
    ax2.set_ylim(0, max(s.vms.max() + 2, 4))
    for x in _changes(run):
        ax.axvline(x / 60.0, color="grey", ls="--", lw=0.8)
    ax.set_title(f"{title}: throughput and machines (cf. MET Fig. 6)")
    fig.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    files.append(out / "throughput.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.plot(minutes, np.cumsum(s.ops.sum(axis=1)) / 1e6, color="tab:blue")
    ax.set_xlabel("minutes")
    ax.set_ylabel("operations completed (millions)")
    ax.set_title(f"{title}: cumulative operations (cf. MET Fig. 5)")
    fig.tight_layout()
    files.append(out / "cumulative.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(10, 4.5))
    per = max(1, int(round(run.scenario.slo_interval_s / s.dt)))
    lat = _moving(s.latency_ms, per)
    ax.plot(minutes, lat, color="tab:purple", lw=0.8, label=f"mean response time ({run.scenario.slo_interval_s:g} s)")
    ax.axhline(run.scenario.slo_latency_ms, color="red", lw=1.2, label=f"SLO {run.scenario.slo_latency_ms:g} ms")
    for a, b in run.recorder.busy_intervals:
        ax.axvspan(a / 60.0, b / 60.0, color="orange", alpha=0.15)
    ax.set_xlabel("minutes (shaded: plan being carried out)")
    ax.set_ylabel("ms")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title(f"{title}: latency against the SLO")
    fig.tight_layout()
    files.append(out / "latency.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)
    return files


def plot_compare(runs: dict[str, Any], out: Path) -> list[Path]:
    plt = _plt()
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    last = len(runs) - 1
    for i, (name, run) in enumerate(runs.items()):
        s = series_of(run)
        m = s.t / 60.0
        # Lines that coincide (a policy that never acts draws static's line) all stay in
        # sight: the first is widest, each later one narrower on top of it.
        lw = 1.2 + 2.0 * (last - i)
        line, = ax.plot(m, _moving(s.throughput, int(30 / s.dt)), lw=lw, label=name,
                        solid_capstyle="butt")
        bx.step(m, s.vms, where="post", color=line.get_color(), lw=lw, label=name)
    first = next(iter(runs.values()))
    for x in _changes(first):
        ax.axvline(x / 60.0, color="grey", ls="--", lw=0.8)
        bx.axvline(x / 60.0, color="grey", ls="--", lw=0.8)
    ax.set_ylabel("operations / s (30 s mean)")
    bx.set_ylabel("machines")
    bx.set_xlabel("minutes")
    ax.legend(fontsize=8)
    ax.set_title("policies on the same scenario and seed")
    fig.tight_layout()
    path = out / "compare.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def _moving(x: np.ndarray, n: int) -> np.ndarray:
    if n <= 1 or x.size == 0:
        return x
    c = np.cumsum(np.insert(x, 0, 0.0))
    out = np.empty_like(x)
    k = np.arange(x.size)
    lo = np.maximum(0, k - n + 1)
    out[:] = (c[k + 1] - c[lo]) / (k + 1 - lo)
    return out


def decision_log(recorder: Any) -> list[dict[str, Any]]:
    """What the loop decided and why, in time order: every decision round's plan (its size,
    its actions by kind and its reason, the figures `metctl explain` gives), every hold (its
    cause and words) and each plan's submission and end. The daemon logs the same as it goes;
    a simulated run keeps it so a figure in summary.json can be traced to the decision behind it."""
    rows: list[dict[str, Any]] = [
        {"t_s": d.t, "event": "decision", "plan_id": d.plan_id, "nodes": d.current,
         "target": d.target, "actions": dict(sorted(d.kinds.items())), "reason": d.reason}
        for d in recorder.decisions]
    rows += [{"t_s": t, "event": "hold", "cause": cause, "reason": words}
             for t, cause, words in recorder.holds]
    rows += [{"t_s": t, "event": f"plan_{event}", "plan_id": plan_id}
             for t, event, plan_id in recorder.plan_events]
    # at one time, a plan's submission or end after the decision that made it (a stable sort)
    return sorted(rows, key=lambda r: (r["t_s"], r["event"].startswith("plan_")))


def write_report(run: Any, out: Path, policy: str, *, seed: int | None = None,
                 plots: bool = True) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(run, policy, seed=seed)
    write_csv(run, out / "timeseries.csv")
    with (out / "decisions.jsonl").open("w") as f:
        for row in decision_log(run.recorder):
            f.write(json.dumps(_clean(row)) + "\n")
    # a run stopped as it starts (Ctrl-C) has no second to draw
    if plots and series_of(run).t.size:
        summary["plots"] = [p.name for p in plot_run(run, out, f"{run.scenario.name} / {policy}")]
    (out / "summary.json").write_text(json.dumps(_clean(summary), indent=2) + "\n")
    return summary


def _clean(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.generic):
        return _clean(x.item())
    return x


def plot_frontier(front: dict[str, Any], path: Path, title: str) -> Path:
    """The static sizes (node-minutes, operations), their upper hull and each policy's runs."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 5))
    xs = [r["node_minutes"] for r in front["sizes"]]
    ys = [r["ops"] / 1e6 for r in front["sizes"]]
    ax.scatter(xs, ys, color="black", zorder=3, label="static, fixed size (mean over seeds)")
    for r in front["sizes"]:
        ax.annotate(f"{r['size']}", (r["node_minutes"], r["ops"] / 1e6), textcoords="offset points", xytext=(4, -10), fontsize=8)
    hull = front["hull"]
    ax.plot([p[0] for p in hull], [p[1] / 1e6 for p in hull], color="grey", lw=1.2, label="frontier (upper hull)")
    for name, pol in front.get("policies", {}).items():
        ax.scatter([s["node_minutes"] for s in pol["per_seed"]], [s["ops"] / 1e6 for s in pol["per_seed"]],
                   marker="x", s=50, label=name)
    ax.set_xlabel("node-minutes")
    ax.set_ylabel("operations (M)")
    ax.set_title(f"{title}: fixed-size frontier")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
