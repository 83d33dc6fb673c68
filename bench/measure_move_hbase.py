"""Measure what a region move costs a client on a real HBase 2.6, for the simulator's
`simulator.actions.move_s` (docs/simulator.md, "Region moves").

Two RegionServers on this machine (deploy/local_hbase/cluster.py; quota'd slices as the compare
bench runs them unless `--no-quota`), one table of `--regions` regions over `--rows` rows of 1 KiB,
flushed, then `--unflushed` rows of each region written again (the close flushes them). While
`--threads` client threads get random rows at `--rate` operations/s in all (a share
`--update-share` of them writes instead), the bench moves one region at a time to the other
RegionServer (`Admin.move`, which returns when the master's procedure ends), `--moves` times,
`--settle` seconds apart. Per move:

* move_s: from the request until the client's location lookup finds the region on its target;
* stall_s: the longest get of the moved region's rows started during the move: what a client
  waited (its retries of NotServingRegionException included, `hbase.client.pause` x backoff);
* window_p99_ms / before_p99_ms: p99 of every get started in the 10 s from the request, and in
  the 10 s before it (what a 10-s SLO window sees), with the share of gets over 100 ms and 1 s.

`--client-pause-ms` sets the client's `hbase.client.pause` (HBase's default: 100 ms), to see
how much of the stall is the client's backoff. About 3 minutes on 2 cores.

`--prefetch` starts the RegionServers with `hbase.rs.prefetchblocksonopen=true` (HBASE-9857;
off by default): a region that opens reads its HFiles into the block cache in the background.
It implies `--open-figures`, which (with or without prefetch, for the comparison) adds per move
what the target RegionServer did once the region opened there (each row is ~1.07 KB on disk, so
`--rows 100000 --regions 4` makes regions of ~27 MB):

* store_file_mb / files: the moved region's HFiles on disk (the local HBase root dir; MB of
  10^6 bytes) after its close flushed it;
* open_after_request_s: to the target's log line `regionserver.HRegion: Opened <encoded>;` (INFO);
* prefetch: prefetch_s from that open until the target logs `hfile.PrefetchExecutor: Prefetch
  completed for <file>` (DEBUG; the bench sets that logger to DEBUG in each RegionServer's
  log4j.properties: HBase 2.6.4 logs nothing of a prefetch at INFO) for the last of the
  region's files; prefetch_read_s from when the first file's prefetch was due (its `Prefetch
  requested for <path>, delay=<ms>` line: HBase waits `hbase.hfile.prefetch.delay`, 1 s +-20 %,
  before it reads), and mb_s over that. Its cpu: the `hfile-prefetch` threads' CPU seconds
  (/proc/<pid>/task/<tid>/schedstat, ns, sampled every 0.25 s) and the GC thread's above its
  rate of the 10 s before the move, from 0.5 s before the open to 0.5 s after the end, per
  MB (cpu_s_per_mb: both); read_cores, the prefetch threads' CPU over prefetch_read_s (against
  the RegionServer's slice: read_cores_of_quota); around_read: over the sampled window holding
  the read, the process's CPU (utime+stime of /proc/<pid>/stat, and schedstat's sum over its
  threads), its cores and the share of its CFS periods the slice was throttled in (near 1:
  CPU-bound on the quota); gets_during_read: the moved region's gets started while its files
  were read (count, mean and max ms);
* after_10s / after_30s: the moved region's gets started in the 10 (30) s after the open:
  count, mean and p99 ms; the target's blockCacheMissCount / blockCacheHitCount /
  blockCacheSize deltas over those seconds (/jmx sub=Server, polled every second; HBase
  refreshes /jmx every 2 s here, so a delta's edges are good to ~2 s), and its CPU then.
  before_10s: the same for the 10 s before the request. `--settle` of at least 31 s gives the
  30-s figures.

`--keep-workdir DIR` runs the cluster in DIR and keeps it (the RegionServers' logs).

    .venv/bin/python bench/measure_move_hbase.py [--rate 300] [--moves 6] [--no-quota]
    .venv/bin/python bench/measure_move_hbase.py --prefetch --rows 100000 --regions 4 --moves 4 --settle 35
    .venv/bin/python bench/measure_move_hbase.py --open-figures --rows 100000 --regions 4 --moves 4 --settle 35

(each of the last two about 4.5 minutes: docs/simulator.md, "Prefetch on open on quota'd
RegionServers").

Figures go to out/measure-move-hbase/report.json.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hbase_get_loop import FAMILY, GetLoop, load, row_key  # noqa: E402
from deploy.local_hbase import cluster as CLUSTER  # noqa: E402
from deploy.local_hbase.compare_report import spread  # noqa: E402  (min / median / max / n)
from deploy.localproc.process import cpu_s, threads_cpu_s  # noqa: E402

WINDOW_S = 10.0  # the SLO window the compare bench scores (compare.py --window-s)


def window_figures(gets: list[tuple[float, float, int]], start: float) -> dict:
    secs = np.array([s for a, s, _ in gets if start <= a < start + WINDOW_S])
    if not len(secs):
        return {"gets": 0}
    return {"gets": int(len(secs)), "p99_ms": round(1000 * float(np.percentile(secs, 99)), 1),
            "over_100ms": round(float(np.mean(secs > 0.1)), 4), "over_1s": round(float(np.mean(secs > 1.0)), 4)}


# --- what the target RegionServer did once the moved region opened (--open-figures, --prefetch)

AFTER_S = (10.0, 30.0)  # the moved region's first seconds on its target
PREFETCH_LOGGER = "org.apache.hadoop.hbase.io.hfile.PrefetchExecutor"  # logs its ends at DEBUG
SERVER_BEAN = "Hadoop:service=HBase,name=RegionServer,sub=Server"
CACHE_METRICS = ("blockCacheMissCount", "blockCacheHitCount", "blockCacheSize", "blockCacheCount",
                 "blockCacheDataBlockCount")
PREFETCH_THREADS = "hfile-prefetch"  # PrefetchExecutor's pool: "hfile-prefetch-<ms>" (its thread_kind)
MB = 1e6
_OPENED = re.compile(r" regionserver\.HRegion: Opened ([0-9a-f]{32});")
_REQUESTED = re.compile(r" hfile\.PrefetchExecutor: Prefetch requested for (\S+), delay=(\d+) ms")
_ENDED = re.compile(r" hfile\.PrefetchExecutor: Prefetch (completed|cancelled) for (\S+)")


class PrefetchLoggingHBase(CLUSTER.LocalHBase):
    """The local cluster, its RegionServers logging PrefetchExecutor's DEBUG lines (requested
    with its delay, completed, cancelled; HBase 2.6.4 logs nothing of a prefetch at INFO, and
    its /logLevel servlet needs log4j2, which the reload4j-based classpath lacks)."""

    def write_conf(self, p, overrides=()) -> None:
        super().write_conf(p, overrides)
        if p.kind == "rs":
            conf = Path(p.conf_dir) / "log4j.properties"
            conf.write_text(conf.read_text() + f"log4j.logger.{PREFETCH_LOGGER}=DEBUG\n")


def log_events(text: str, encoded: str, since: float) -> dict:
    """From a RegionServer's log, the lines at or after `since` (epoch s; the log's local-time
    stamps, to the ms): when region `encoded` opened (the last such line), and each of its
    files' prefetch request (time, delay s) and end (time, "completed" | "cancelled"), by file
    name (HBase 2.6.4 logs the whole path when it requests or cancels, the name when it completes)."""
    opened, requested, ended = None, {}, {}
    for line in text.splitlines():
        if len(line) < 24 or not line[:4].isdigit():
            continue
        try:
            t = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        except ValueError:
            continue
        if t < since:
            continue
        if (m := _OPENED.search(line)) and m.group(1) == encoded:
            opened = t
        elif (m := _REQUESTED.search(line)) and f"/{encoded}/" in m.group(1):
            requested[m.group(1).rsplit("/", 1)[-1]] = (t, int(m.group(2)) / 1000)
        elif (m := _ENDED.search(line)) and m.group(2).rsplit("/", 1)[-1] in requested:
            ended[m.group(2).rsplit("/", 1)[-1]] = (t, m.group(1))
    return {"opened": opened, "requested": requested, "ended": ended}


def prefetch_figures(ev: dict, mb: float) -> dict:
    """How long the region's files took to prefetch: from the open (prefetch_s) and from the
    first file's due time (request + HBase's delay: prefetch_read_s), and MB/s of the latter."""
    req, ended = ev["requested"], ev["ended"]
    out: dict = {"files": len(req), "completed": sum(1 for p in req if ended.get(p, (0, ""))[1] == "completed"),
                 "cancelled": sum(1 for p in req if ended.get(p, (0, ""))[1] == "cancelled")}
    if not req or ev["opened"] is None or any(p not in ended for p in req):
        return out
    due = min(t + d for t, d in req.values())
    end = max(ended[p][0] for p in req)
    read_s = max(end - due, 1e-3)
    return out | {"due_t": due, "end_t": end, "prefetch_s": round(end - ev["opened"], 3),
                  "delay_s": round(due - ev["opened"], 3), "prefetch_read_s": round(end - due, 3),
                  "mb_s": round(mb / read_s, 1)}


def at(series: list[tuple], t: float, i: int) -> float | None:
    """Field `i` of a time series [(t, ...), ...] at time t, linearly interpolated (clamped at
    its ends); None for an empty series."""
    if not series:
        return None
    if t <= series[0][0]:
        return series[0][i]
    for (t0, *a), (t1, *b) in zip(series, series[1:]):
        if t0 <= t <= t1:
            x, y = a[i - 1], b[i - 1]
            return x if t1 == t0 else x + (y - x) * (t - t0) / (t1 - t0)
    return series[-1][i]


GC_THREADS = "VM Thread"  # the serial collector (the cluster's JVMs run -XX:+UseSerialGC) collects in it
# a row of Sampler.cpu: time, CPU s from /proc/<pid>/stat (utime+stime, 10-ms ticks), the
# hfile-prefetch threads', the group's CFS periods and throttled periods, the sum over the
# process's threads of /proc/<pid>/task/<tid>/schedstat's run time (ns: precise over a 0.1-s
# prefetch), the GC thread's
STAT, PREFETCH, PERIODS, THROTTLED, SCHED, GC = range(1, 7)


class Sampler:
    """Every `every` s, each RegionServer's CPU seconds (the process, its hfile-prefetch and GC
    threads: a row as STAT … GC say) and its group's CFS periods / throttled periods; every
    `jmx_every` s its block cache counters (/jmx sub=Server). Times are epoch seconds (the
    RegionServers' log clock)."""

    def __init__(self, cluster, every: float = 0.25, jmx_every: float = 1.0):
        self.cluster, self.every, self.jmx_every = cluster, every, jmx_every
        self.cpu: dict[str, list[tuple]] = {}
        self.jmx: dict[str, list[tuple]] = {}
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=f, daemon=True) for f in (self._cpu_loop, self._jmx_loop)]

    def start(self) -> "Sampler":
        for th in self._threads:
            th.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for th in self._threads:
            th.join(timeout=10)

    def _cpu_loop(self) -> None:
        procs = self.cluster.region_servers()
        quota = self.cluster.quota_on
        while not self._stop.wait(self.every):
            for p in procs:
                if not p.pid:
                    continue
                t = time.time()
                kinds = threads_cpu_s(p.pid, precise=True)
                total = sum(kinds.values())
                g = self.cluster.groups.throttling(p.name) if quota else {}
                row = (t, cpu_s(p.pid), kinds.get(PREFETCH_THREADS, 0.0), g.get("periods", 0),
                       g.get("throttled", 0), total, kinds.get(GC_THREADS, 0.0))
                self.cpu.setdefault(p.name, []).append(row)

    def _jmx_loop(self) -> None:
        while not self._stop.wait(self.jmx_every):
            for p in self.cluster.region_servers():
                b = CLUSTER.get_jmx(p.info_url, SERVER_BEAN)
                if b:
                    self.jmx.setdefault(p.name, []).append((time.time(), *(float(b.get(k, 0)) for k in CACHE_METRICS)))


def cpu_figures(series: list[tuple], start: float, end: float, base: tuple[float, float]) -> dict:
    """The RegionServer's CPU s over [start, end] (interpolated between samples): in all
    (utime+stime; schedstat's sum), less the schedstat rate of the `base` window, the cores
    used and the share of its CFS periods throttled."""
    span = max(end - start, 1e-3)

    def d(i: int, a: float = start, b: float = end) -> float:
        return at(series, b, i) - at(series, a, i)

    rate = d(SCHED, *base) / max(base[1] - base[0], 1e-3)
    periods = d(PERIODS)
    return {"s": round(span, 3), "cpu_s": round(d(STAT), 3), "sched_cpu_s": round(d(SCHED), 3),
            "cores": round(d(SCHED) / span, 3), "base_cores": round(rate, 3),
            "cpu_s_above_base": round(d(SCHED) - rate * span, 3),
            "throttled_share": round(d(THROTTLED) / periods, 3) if periods >= 1 else None}


def prefetch_cpu(series: list[tuple], opened: float, due: float, end: float, base: tuple[float, float],
                 mb: float, quota: float | None) -> dict:
    """What the prefetch cost the RegionServer. Its threads' CPU (schedstat: exact) and the GC
    thread's above its base rate from just before the open to just after the last file's end;
    over the sampled window around the read (due .. end), the process's CPU (stat and
    schedstat), its cores against `quota` and the share of its CFS periods throttled."""
    a, b = opened - 0.5, end + 0.5
    d = {i: at(series, b, i) - at(series, a, i) for i in (PREFETCH, GC, SCHED)}
    gc_rate = (at(series, base[1], GC) - at(series, base[0], GC)) / max(base[1] - base[0], 1e-3)
    gc = d[GC] - gc_rate * (b - a)
    out = {"prefetch_threads_cpu_s": round(d[PREFETCH], 4), "gc_cpu_s_above_base": round(gc, 4),
           "prefetch_threads_cpu_s_per_mb": round(d[PREFETCH] / mb, 5),
           "cpu_s_per_mb": round((d[PREFETCH] + max(gc, 0.0)) / mb, 5),
           "read_cores": round(d[PREFETCH] / max(end - due, 1e-3), 3)}
    # the samples around the read: the smallest sampled window holding it
    i0 = max((i for i, r in enumerate(series) if r[0] <= due), default=0)
    i1 = min((i for i, r in enumerate(series) if r[0] >= end), default=len(series) - 1)
    if series and i1 > i0:
        w = cpu_figures(series, series[i0][0], series[i1][0], base)
        out["around_read"] = w
        if quota:
            out["around_read"]["cores_of_quota"] = round(w["cores"] / quota, 2)
    if quota:
        out["read_cores_of_quota"] = round(out["read_cores"] / quota, 2)
    return out


def after_figures(gets: list[tuple[float, float, int]], rows: tuple[int, int], start: float, span: float,
                  jmx: list[tuple], cpu: list[tuple], base: tuple[float, float]) -> dict:
    """The region's gets (wall-clock starts) in [start, start + span): count, mean and p99 ms;
    the RegionServer's block cache counter deltas and CPU over those seconds."""
    secs = np.array([s for a, s, row in gets if start <= a < start + span and rows[0] <= row < rows[1]])
    out: dict = {"gets": int(len(secs))}
    if len(secs):
        out |= {"mean_ms": round(1000 * float(secs.mean()), 2), "p99_ms": round(1000 * float(np.percentile(secs, 99)), 1)}
    for i, k in enumerate(CACHE_METRICS, 1):
        if jmx:
            d = at(jmx, start + span, i) - at(jmx, start, i)
            out[k] = round(d / MB, 2) if k == "blockCacheSize" else int(round(d))
    if "blockCacheSize" in out:
        out["blockCacheSize_mb"] = out.pop("blockCacheSize")
    if cpu:
        out["cpu"] = cpu_figures(cpu, start, start + span, base)
        out["cpu"]["prefetch_threads_cpu_s"] = round(at(cpu, start + span, PREFETCH) - at(cpu, start, PREFETCH), 4)
    return out


def store_files(root: Path, table: str, encoded: str) -> tuple[float, int]:
    """MB and count of a region's HFiles in the local HBase root dir."""
    files = [f for f in (root / "data" / "default" / table / encoded).glob("*/*")
             if f.is_file() and f.parent.name not in ("recovered.edits", ".tmp")]
    return round(sum(f.stat().st_size for f in files) / MB, 2), len(files)


def open_figures(cluster, sampler: Sampler, gets_wall: list[tuple], target: str, encoded: str,
                 rows: tuple[int, int], t0: float, quota: float | None) -> dict:
    """One move's figures on its target: files, open, prefetch, CPU, the first seconds."""
    p = cluster.rs_by_server_id(target)
    mb, nfiles = store_files(cluster.workdir / "root", "movebench", encoded)
    ev = log_events(Path(p.log).read_text(errors="replace"), encoded, t0 - 0.001)
    out: dict = {"target": p.name, "store_file_mb": mb, "files": nfiles}
    if ev["opened"] is None:
        return out | {"error": "no 'Opened' line in the target's log"}
    opened = ev["opened"]
    out["open_after_request_s"] = round(opened - t0, 3)
    cpu, jmx = sampler.cpu.get(p.name, []), sampler.jmx.get(p.name, [])
    base = (t0 - WINDOW_S, t0)
    pf = prefetch_figures(ev, mb)
    if "end_t" in pf:
        due, end = pf.pop("due_t"), pf.pop("end_t")
        pf["cpu"] = prefetch_cpu(cpu, opened, due, end, base, mb, quota)
        during = [x for a, x, row in gets_wall if due <= a <= end and rows[0] <= row < rows[1]]
        pf["gets_during_read"] = {"gets": len(during), "mean_ms": round(1000 * float(np.mean(during)), 2) if during else None,
                                  "max_ms": round(1000 * max(during), 1) if during else None}
    out["prefetch"] = pf
    now = time.time()
    out["before_10s"] = after_figures(gets_wall, rows, t0 - WINDOW_S, WINDOW_S, jmx, cpu, base)
    for span in AFTER_S:
        if opened + span <= now:
            out[f"after_{span:.0f}s"] = after_figures(gets_wall, rows, opened, span, jmx, cpu, base)
    return out


def run(gw, args, cluster=None) -> tuple[list[dict], int]:
    hb = gw.jvm.org.apache.hadoop.hbase
    admin = gw.admin
    tn = hb.TableName.valueOf("movebench")
    per_region = args.rows // args.regions
    splits = [row_key(k * per_region) for k in range(1, args.regions)]
    cfd = hb.client.ColumnFamilyDescriptorBuilder.of(FAMILY)
    desc = hb.client.TableDescriptorBuilder.newBuilder(tn).setColumnFamily(cfd).build()
    split_keys = gw.gateway.new_array(gw.jvm.byte, len(splits), len(splits[0]))  # byte[][]
    for i, key in enumerate(splits):
        split_keys[i] = key
    admin.createTable(desc, split_keys)
    table = gw.connection.getTable(tn)
    load(gw, table, 0, args.rows)
    admin.flush(tn)
    for k in range(args.regions):  # written again after the flush: each close flushes these
        load(gw, table, k * per_region, min(args.unflushed, per_region))
    locator = gw.connection.getRegionLocator(tn)
    servers = sorted(str(s) for s in admin.getRegionServers())
    by_name = {str(s): s for s in admin.getRegionServers()}
    opens = cluster is not None  # --open-figures: what the target did once the region opened
    sampler = Sampler(cluster).start() if opens else None
    quota = cluster.slice_for("rs").cpu_cores if opens and cluster.quota_on else None
    wall = time.time() - time.monotonic()  # the gets' monotonic starts -> the logs' clock
    reader = GetLoop(gw, "movebench", args.rows, threads=args.threads, rate=args.rate,
                     update_share=args.update_share).start()
    moves = []
    try:
        time.sleep(args.settle)
        for i in range(args.moves):
            k = i % args.regions
            first = k * per_region
            loc = locator.getRegionLocation(row_key(first), True)
            source = str(loc.getServerName())
            target = next(s for s in servers if s != source)
            t0 = time.monotonic()
            t0_wall = t0 + wall
            admin.move(loc.getRegion().getEncodedNameAsBytes(), by_name[target])
            call_s = time.monotonic() - t0
            while str(locator.getRegionLocation(row_key(first), True).getServerName()) != target:
                if time.monotonic() - t0 > 120:
                    raise SystemExit(f"region {k} not on {target} 120 s after its move")
                time.sleep(0.05)
            move_s = time.monotonic() - t0
            time.sleep(args.settle)
            gets = list(reader.gets)
            mine = [s for a, s, row in gets if t0 <= a <= t0 + move_s and first <= row < first + per_region]
            moves.append({"region": k, "move_s": round(move_s, 3), "call_s": round(call_s, 3),
                          "stall_s": round(max(mine, default=0.0), 3), "gets_of_region_during": len(mine),
                          "window": window_figures(gets, t0), "before": window_figures(gets, t0 - WINDOW_S)})
            if opens:
                moves[-1]["open"] = open_figures(
                    cluster, sampler, [(a + wall, s, row) for a, s, row in gets], target,
                    str(loc.getRegion().getEncodedName()), (first, first + per_region), t0_wall, quota)
            print(json.dumps(moves[-1]), flush=True)
    finally:
        reader.stop()
        if sampler:
            sampler.stop()
            if args.keep_workdir:  # the raw series, to check a figure against
                (cluster.workdir / "samples.json").write_text(json.dumps({"cpu": sampler.cpu, "jmx": sampler.jmx}))
    return moves, reader.puts


def open_summary(moves: list[dict]) -> dict:
    """Spreads (min / median / max / n) of the per-move open figures."""
    o = [m["open"] for m in moves if "open" in m]
    pf = [x.get("prefetch", {}) for x in o]

    def get(d: dict, *path):
        for key in path:
            d = d.get(key) if isinstance(d, dict) else None
        return d

    out = {"store_file_mb": spread(x["store_file_mb"] for x in o),
           "open_after_request_s": spread(x.get("open_after_request_s") for x in o),
           "prefetch_s": spread(x.get("prefetch_s") for x in pf),
           "prefetch_read_s": spread(x.get("prefetch_read_s") for x in pf),
           "prefetch_mb_s": spread(x.get("mb_s") for x in pf),
           "prefetch_cpu_s_per_mb": spread(get(x, "cpu", "cpu_s_per_mb") for x in pf),
           "prefetch_threads_cpu_s_per_mb": spread(get(x, "cpu", "prefetch_threads_cpu_s_per_mb") for x in pf),
           "prefetch_read_cores": spread(get(x, "cpu", "read_cores") for x in pf),
           "prefetch_around_read_cores": spread(get(x, "cpu", "around_read", "cores") for x in pf),
           "prefetch_around_read_throttled_share": spread(get(x, "cpu", "around_read", "throttled_share")
                                                          for x in pf),
           "prefetch_gets_during_read_mean_ms": spread(get(x, "gets_during_read", "mean_ms") for x in pf),
           "prefetch_gets_during_read_max_ms": spread(get(x, "gets_during_read", "max_ms") for x in pf)}
    for w in ("before_10s", *(f"after_{s:.0f}s" for s in AFTER_S)):
        for k in ("mean_ms", "p99_ms", "blockCacheMissCount", "blockCacheHitCount", "blockCacheSize_mb"):
            out[f"{w}_{k}"] = spread(get(x, w, k) for x in o)
        out[f"{w}_cores"] = spread(get(x, w, "cpu", "cores") for x in o)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--regions", type=int, default=6)
    ap.add_argument("--unflushed", type=int, default=1_000, help="rows of each region written again after the flush")
    ap.add_argument("--rate", type=float, default=300.0, help="gets/s of all client threads together")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--update-share", type=float, default=0.0,
                    help="share of the operations that write a row instead (YCSB A: 0.5)")
    ap.add_argument("--moves", type=int, default=6)
    ap.add_argument("--settle", type=float, default=12.0, help="seconds between moves (more than the window)")
    ap.add_argument("--client-pause-ms", type=int, default=None, help="hbase.client.pause (HBase default 100)")
    ap.add_argument("--no-quota", action="store_true", help="RegionServers share the machine's cores")
    ap.add_argument("--prefetch", action="store_true",
                    help="hbase.rs.prefetchblocksonopen=true on the RegionServers (implies --open-figures)")
    ap.add_argument("--open-figures", action="store_true",
                    help="per move, the target's open, prefetch, CPU and block cache figures and the moved "
                         "region's gets in the 10 and 30 s after it opens")
    ap.add_argument("--keep-workdir", type=Path, default=None,
                    help="run the cluster in this (new or empty) directory and keep it (its logs)")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "measure-move-hbase" / "report.json")
    args = ap.parse_args(argv)
    if args.regions < 2 or args.rows < args.regions or args.rate < 0 or args.threads < 1 or args.moves < 1 \
            or not 0 <= args.update_share <= 1:
        ap.error("need --regions >= 2, --rows >= --regions, --rate >= 0, --threads >= 1, --moves >= 1, "
                 "0 <= --update-share <= 1")
    if args.keep_workdir and args.keep_workdir.exists() and any(args.keep_workdir.iterdir()):
        ap.error(f"--keep-workdir {args.keep_workdir} is not empty")
    opens = args.open_figures or args.prefetch
    from actuator.hbase_gateway import HBaseGateway

    with tempfile.TemporaryDirectory(prefix="move-hbase-") as tmp:
        work = args.keep_workdir.resolve() if args.keep_workdir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        extra = {"hbase.rs.prefetchblocksonopen": "true"} if args.prefetch else {}
        cluster = (PrefetchLoggingHBase if opens else CLUSTER.LocalHBase)(work, quota=not args.no_quota,
                                                                         extra_site=extra)
        started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        cluster.start(rs=2)
        rs_slice = cluster.slice_for("rs") if cluster.quota_on else None
        settings = cluster.client_settings()
        if args.client_pause_ms is not None:
            settings["hbase.client.pause"] = str(args.client_pause_ms)
        try:
            gw = HBaseGateway(CLUSTER.home_for(cluster.version) / "lib", settings,
                              conf_dir=cluster.client_conf_dir(), log_file=work / "gateway.log")
            with gw:
                moves, puts = run(gw, args, cluster if opens else None)
        finally:
            cluster.stop()
    report = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                           if k != "out" and (opens or k not in ("prefetch", "open_figures", "keep_workdir"))},
              "moves": moves, "puts": puts,
              "move_s": spread([m["move_s"] for m in moves]),
              "stall_s": spread([m["stall_s"] for m in moves]),
              "window_p99_ms": spread([m["window"]["p99_ms"] for m in moves if m["window"]["gets"]]),
              "before_p99_ms": spread([m["before"]["p99_ms"] for m in moves if m["before"]["gets"]])}
    if opens:
        report["rs_quota_cores"] = rs_slice.cpu_cores if rs_slice else None
        report["measured"] = f"{started} - {time.strftime('%H:%M:%S')}"
        report["open"] = open_summary(moves)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "moves"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
