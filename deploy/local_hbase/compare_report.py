"""What a compare-hbase run's YCSB clients saw, and the report over all runs: per tenant and SLO
window (one YCSB status interval of one client), the 99th percentile of its operations measured
from their intended start (YCSB's `measurement.interval=both`: a server that falls behind shows
the queueing it caused) and its failed operations by status; per run the attainment (windows
within the SLO over windows scored, the worst tenant's); per configuration the spread
(min / median / max over repetitions) of every figure; the cost at the SLO (controller/cost.py:
a policy's node-minutes against the smallest static size meeting the SLO in the same
repetition); and the tightest p99 objective each run met (so that an objective no size meets
still ranks the configurations). Reads only files: `python deploy/local_hbase/compare.py --aggregate` redoes it."""
from __future__ import annotations

import math
import re
import statistics
from pathlib import Path
from typing import Any, Iterable

from controller.cost import meets, smallest_static

# one operation's interval figures in a status line (HdrHistogram summary, µs):
# "[Intended-READ: Count=120, Max=51007, Min=412, Avg=3021.4, 90=6011, 99=30015, ...]"
_OP = re.compile(r"\[(Intended-)?([A-Z_-]+): Count=(\d+), Max=(\d+), Min=-?\d+, Avg=[^,]+, 90=\d+, 99=(\d+)")
_LINE = re.compile(r"(\d+) sec: (\d+) operations;")
_NOT_OK = ("ERROR", "NOT_FOUND", "NOT_IMPLEMENTED", "UNEXPECTED_STATE", "BAD_REQUEST", "FORBIDDEN",
           "SERVICE_UNAVAILABLE", "FAILED")


def windows(err_text: str, start_s: float, warm_up: int = 1, phase: str | None = None,
            interval_s: float | None = None) -> list[dict[str, Any]]:
    """The SLO windows of one client's status lines: one per status interval, from `start_s`
    (the client's start on the run's clock). Each: {"t", "phase", "ops", "failed", "failed_by",
    "p99_ms"}, p99 the largest intended-time 99th percentile over its operation types (None: no
    operation). The first `warm_up` intervals (the client JVM starting: connections, region
    locations, JIT) also carry "warm_up": true: their operations count, their windows are not
    scored.

    Two of YCSB's lines are not intervals: the "0 sec" line at its start, and the line it
    prints as it exits, less than an interval (`interval_s`; else 1 s) after the last one.
    The first is dropped; the second's operations and failures join the interval before it
    (nothing is lost), whose p99 stands: the exit line's latencies are the client shutting down.
    Scored as windows of their own, each phase change cost every configuration a window (a
    2-4 s p99 and an empty window, on 6 quota'd RegionServers at a third of their capacity)."""
    out: list[dict[str, Any]] = []
    prev_ops = 0
    last_s = None
    for line in err_text.splitlines():
        m = _LINE.search(line)
        if not m:
            continue
        total, elapsed = int(m.group(2)), float(m.group(1))
        ops, prev_ops = total - prev_ops, total
        if elapsed <= 0:
            continue
        fragment = last_s is not None and elapsed - last_s < (interval_s / 2 if interval_s else 1.0)
        if not fragment:
            last_s = elapsed
        p99s, failed, failed_by = [], 0, {}
        for intended, op, count, _mx, p99 in _OP.findall(line):
            status = op.rpartition("-")[2] if op.rpartition("-")[2] in _NOT_OK else "OK"
            if op == "CLEANUP" or not int(count):
                continue
            if status != "OK":
                if not intended:  # counted once, under its measured name
                    failed += int(count)
                    failed_by[op] = failed_by.get(op, 0) + int(count)
            elif intended:
                p99s.append(int(p99) / 1000)
        if fragment and out:
            _join(out[-1], {"ops": ops, "failed": failed, "failed_by": failed_by})
            continue
        out.append({"t": round(start_s + elapsed, 1), "phase": phase, "ops": ops, "failed": failed,
                    "failed_by": failed_by, "p99_ms": max(p99s) if p99s else None})
    for w in out[:warm_up]:
        w["warm_up"] = True
    return out


def _join(window: dict[str, Any], exit_line: dict[str, Any]) -> None:
    """YCSB's exit line into the interval before it: its operations and failures count there;
    the interval's p99 stands."""
    window["ops"] += exit_line["ops"]
    window["failed"] += exit_line["failed"]
    for op, k in exit_line["failed_by"].items():
        window["failed_by"][op] = window["failed_by"].get(op, 0) + k


def scored(ws: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The windows the SLO is scored on: all but the clients' warm-ups."""
    return [w for w in ws if not w.get("warm_up")]


def _answered(w: dict[str, Any]) -> bool:
    """Operations completed and none failed: a window that may meet an objective (one with a
    failure or no completed operation misses at any)."""
    return w["ops"] > 0 and w["failed"] == 0 and w["p99_ms"] is not None


def slo_figures(tenant_windows: dict[str, list[dict[str, Any]]], slo_p99_ms: float) -> dict[str, Any]:
    """Per tenant: windows scored (a client's warm-up is not) and within the SLO (p99 <=
    slo_p99_ms and no failed operation; a window with demand but no completed operation
    misses), p99 median / max, and every operation and failure; the run's attainment is its
    worst tenant's."""
    per = {}
    for tenant, every in tenant_windows.items():
        ws = scored(every)
        good = [w for w in ws if _answered(w) and w["p99_ms"] <= slo_p99_ms]
        p99 = [w["p99_ms"] for w in ws if w["p99_ms"] is not None]
        per[tenant] = {"windows": len(ws), "within_slo": len(good),
                       "attainment": round(len(good) / len(ws), 4) if ws else None,
                       "p99_ms_median": round(statistics.median(p99), 1) if p99 else None,
                       "p99_ms_max": round(max(p99), 1) if p99 else None,
                       "ops": sum(w["ops"] for w in every), "failed": sum(w["failed"] for w in every)}
    att = [v["attainment"] for v in per.values() if v["attainment"] is not None]
    return {"by_tenant": per, "attainment": min(att) if att else None}


def promisable_p99_ms(tenant_windows: dict[str, list[dict[str, Any]]], slo_target: float) -> float | None:
    """The tightest p99 objective the run met in `slo_target` of its windows (worst tenant):
    an objective chosen after the fact ranks configurations without presuming one is
    attainable. None when failed or empty windows alone miss the target."""
    worst = 0.0
    for every in tenant_windows.values():
        ws = scored(every)
        if not ws:
            continue
        p99 = sorted(w["p99_ms"] if _answered(w) else math.inf for w in ws)
        need = p99[math.ceil(slo_target * len(p99) - 1e-9) - 1]
        if math.isinf(need):
            return None
        worst = max(worst, need)
    return worst if tenant_windows else None


WINDOWS_VERSION = 2  # run.json's windows as windows() reads them now


def upgraded(tenant_windows: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Windows kept by a run before WINDOWS_VERSION 2, read as windows() reads them now: they
    skipped YCSB's 0-sec line as the warm-up, so the first window of each client (of each
    tenant's phase) is its warm-up, and a window at its predecessor's time is the exit line."""
    out: dict[str, list[dict[str, Any]]] = {}
    for tenant, ws in tenant_windows.items():
        new: list[dict[str, Any]] = []
        for w in ws:
            w = {**w, "failed_by": dict(w["failed_by"])}
            if new and new[-1]["phase"] == w["phase"] and new[-1]["t"] == w["t"]:
                _join(new[-1], w)
                continue
            if not new or new[-1]["phase"] != w["phase"]:
                w["warm_up"] = True
            new.append(w)
        out[tenant] = new
    return out


def rescored(run: dict[str, Any], slo_p99_ms: float, slo_target: float) -> dict[str, Any]:
    """The run scored against this objective from the windows it kept, so that every run in
    a report is scored alike whatever objective it was run with (and however old it is)."""
    if "windows" not in run or "error" in run:
        return run
    if run.get("windows_version", 1) < WINDOWS_VERSION:
        run = {**run, "windows": upgraded(run["windows"]), "windows_version": WINDOWS_VERSION}
    slo = slo_figures(run["windows"], slo_p99_ms)
    worst = [v["p99_ms_max"] for v in slo["by_tenant"].values() if v["p99_ms_max"] is not None]
    return {**run, "slo": slo, "attainment": slo["attainment"], "slo_p99_ms": slo_p99_ms,
            "p99_ms_max": max(worst, default=None),
            "p99_ms_promisable": promisable_p99_ms(run["windows"], slo_target)}


def failures_explained(tenant_windows: dict[str, list[dict[str, Any]]],
                       phases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every failed operation counted by tenant, operation-status and phase (what failed and
    when), largest first."""
    rows: dict[tuple[str, str, str], int] = {}
    for tenant, ws in tenant_windows.items():
        for w in ws:
            phase = w.get("phase") or next(
                (p["name"] for p in phases if p["start_s"] <= w["t"] < p["start_s"] + p["seconds"]), "after")
            for op, n in w["failed_by"].items():
                key = (tenant, op, phase)
                rows[key] = rows.get(key, 0) + n
    return [{"tenant": t, "operation": op, "phase": ph, "count": n}
            for (t, op, ph), n in sorted(rows.items(), key=lambda kv: -kv[1])]


# HBase's master logs each finished region move with its duration, in HBase's human time
# ("in 571 msec", "in 4.4670 sec", "in 1 mins, 3.2 sec")
_MOVE_DONE = re.compile(r"Finished pid=\d+, state=SUCCESS; TransitRegionStateProcedure .*REOPEN/MOVE in "
                        r"(?:(\d+) mins?, )?([\d.]+) (msec|sec)\s*$")


def move_seconds(master_log: str) -> list[float]:
    """How long each region move took, from request to open on its target (the master's
    TransitRegionStateProcedure REOPEN/MOVE), in log order: while it runs, the region's clients
    wait (closed, then opening)."""
    out = []
    for line in master_log.splitlines():
        m = _MOVE_DONE.search(line)
        if m:
            mins, value, unit = m.groups()
            out.append(round(int(mins or 0) * 60 + float(value) / (1000 if unit == "msec" else 1), 3))
    return out


def move_figures(master_log: str) -> dict[str, float | None]:
    """A run's region moves as HBase timed them: median and longest seconds (None: no move)."""
    secs = move_seconds(master_log)
    return {"move_s_median": round(statistics.median(secs), 3) if secs else None,
            "move_s_max": max(secs) if secs else None}


def spread(values: Iterable[float | None]) -> dict[str, Any] | None:
    got = [v for v in values if v is not None]
    if not got:
        return None
    return {"min": min(got), "median": round(statistics.median(got), 3), "max": max(got), "n": len(got)}


FIGURES = ("ycsb_ops", "ycsb_failed", "node_minutes", "max_nodes", "attainment", "p99_ms_promisable", "p99_ms_max",
           "plans_done", "moves", "move_s_median", "move_s_max", "launches", "terminations")


def summarize(runs: list[dict[str, Any]], slo_target: float) -> dict[str, Any]:
    """Per configuration ("met", "static-3", …): the spread of each figure over repetitions,
    and for policies the cost at the SLO against the smallest static meeting it."""
    configs = sorted({r["config"] for r in runs}, key=_order)
    out: dict[str, Any] = {}
    for c in configs:
        ok = [r for r in runs if r["config"] == c and "error" not in r]
        s: dict[str, Any] = {"runs": len(ok), "failed_runs": sum(1 for r in runs if r["config"] == c and "error" in r)}
        for f in FIGURES:
            s[f] = spread(r.get(f) for r in ok)
        s["tenant_p99_ms_median"] = {t: spread(r["slo"]["by_tenant"][t]["p99_ms_median"] for r in ok
                                               if t in r["slo"]["by_tenant"])
                                     for t in sorted({t for r in ok for t in r["slo"]["by_tenant"]})}
        s["tenant_windows_within_slo"] = {t: spread(r["slo"]["by_tenant"][t]["within_slo"] for r in ok
                                                    if t in r["slo"]["by_tenant"])
                                          for t in s["tenant_p99_ms_median"]}
        out[c] = s
    # the smallest static size meeting the SLO, per repetition, and each policy's cost against it
    reps = sorted({r["repetition"] for r in runs})
    statics = {rep: smallest_static(((r["size"], r["node_minutes"], r["attainment"]) for r in runs
                                     if r["config"].startswith("static-") and r["repetition"] == rep
                                     and "error" not in r and r.get("attainment") is not None), slo_target)
               for rep in reps}
    for c in configs:
        if c.startswith("static-"):
            continue
        rows = []
        for r in (r for r in runs if r["config"] == c and "error" not in r):
            st = statics.get(r["repetition"])
            met = meets(r.get("attainment"), slo_target)
            rows.append({"repetition": r["repetition"], "meets_slo": met,
                         "smallest_static": st["size"] if st else None,
                         "vs_smallest_static": round(r["node_minutes"] / st["node_minutes"], 3)
                         if met and st else None})
        out[c]["cost_at_slo"] = {"per_repetition": rows, "meets_slo": sum(x["meets_slo"] for x in rows),
                                 "vs_smallest_static": spread(x["vs_smallest_static"] for x in rows)}
    out["smallest_static_meeting_slo"] = {str(rep): statics[rep] for rep in reps}
    return out


def _order(config: str) -> tuple[int, int, str]:
    if config.startswith("static-"):
        return (1, int(config.split("-")[1]), "")
    return (0, 0, config)


def _cell(s: dict[str, Any] | None, fmt: str) -> str:
    if not s:
        return "–"
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}–{fmt.format(s['max'])})"


def markdown(summary: dict[str, Any], runs: list[dict[str, Any]], slo: str) -> str:
    cols = (("ycsb_ops", "ops", "{:,.0f}"), ("ycsb_failed", "failed", "{:,.0f}"),
            ("attainment", "SLO windows met (worst tenant)", "{:.3f}"),
            ("p99_ms_promisable", "p99 ms met in the target's share of windows", "{:,.0f}"), ("p99_ms_max", "worst window p99 ms", "{:,.0f}"),
            ("node_minutes", "node-min", "{:.1f}"), ("max_nodes", "max RS", "{:g}"),
            ("plans_done", "plans", "{:g}"), ("moves", "moves", "{:g}"),
            ("move_s_median", "move s (median)", "{:.1f}"), ("move_s_max", "longest move s", "{:.1f}"),
            ("launches", "launches", "{:g}"))
    lines = [f"Median (min–max) over repetitions; SLO: {slo}.", "",
             "| config | runs | " + " | ".join(c[1] for c in cols) + " | node-min / smallest static at the SLO |",
             "|---|---|" + "---|" * (len(cols) + 1)]
    for c, s in summary.items():
        if c == "smallest_static_meeting_slo":
            continue
        cost = s.get("cost_at_slo")
        cost_cell = "–" if cost is None else (
            f"{_cell(cost['vs_smallest_static'], '{:.2f}')} ({cost['meets_slo']} of {len(cost['per_repetition'])} met the SLO)")
        lines.append(f"| {c} | {s['runs']} | " + " | ".join(_cell(s.get(k), f) for k, _, f in cols) + f" | {cost_cell} |")
    st = summary.get("smallest_static_meeting_slo", {})
    lines += ["", "Smallest static size meeting the SLO, per repetition: "
              + ", ".join(f"rep {k}: {v['size'] if v else 'none'}" for k, v in st.items()), ""]
    lines += ["Per-tenant p99 (median window, ms) and windows within the SLO:", "",
              "| config | " + " | ".join(f"{t} p99 | {t} windows ok" for t in _tenants(summary)) + " |",
              "|---|" + "---|---|" * len(_tenants(summary))]
    for c, s in summary.items():
        if c == "smallest_static_meeting_slo":
            continue
        cells = []
        for t in _tenants(summary):
            cells += [_cell(s["tenant_p99_ms_median"].get(t), "{:.0f}"), _cell(s["tenant_windows_within_slo"].get(t), "{:.0f}")]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines += ["", "Failed operations (every run): tenant, operation-status, phase, count:", ""]
    for r in runs:
        if r.get("failures"):
            lines.append(f"- {r['config']} rep {r['repetition']}: " + "; ".join(
                f"{f['tenant']} {f['operation']} in {f['phase']}: {f['count']}" for f in r["failures"][:6]))
        elif "error" in r:
            lines.append(f"- {r['config']} rep {r['repetition']}: run failed: {r['error'][:160]}")
    return "\n".join(lines) + "\n"


def _tenants(summary: dict[str, Any]) -> list[str]:
    return sorted({t for c, s in summary.items() if c != "smallest_static_meeting_slo"
                   for t in s.get("tenant_p99_ms_median", {})})


def run_files(out: Path) -> list[Path]:
    return sorted(out.glob("*/run.json"))
