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

    .venv/bin/python bench/measure_move_hbase.py [--rate 300] [--moves 6] [--no-quota]

Figures go to out/measure-move-hbase/report.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hbase_get_loop import FAMILY, GetLoop, load, row_key  # noqa: E402
from deploy.local_hbase import cluster as CLUSTER  # noqa: E402
from deploy.local_hbase.compare_report import spread  # noqa: E402  (min / median / max / n)

WINDOW_S = 10.0  # the SLO window the compare bench scores (compare.py --window-s)


def window_figures(gets: list[tuple[float, float, int]], start: float) -> dict:
    secs = np.array([s for a, s, _ in gets if start <= a < start + WINDOW_S])
    if not len(secs):
        return {"gets": 0}
    return {"gets": int(len(secs)), "p99_ms": round(1000 * float(np.percentile(secs, 99)), 1),
            "over_100ms": round(float(np.mean(secs > 0.1)), 4), "over_1s": round(float(np.mean(secs > 1.0)), 4)}


def run(gw, args) -> tuple[list[dict], int]:
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
            print(json.dumps(moves[-1]), flush=True)
    finally:
        reader.stop()
    return moves, reader.puts


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
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "measure-move-hbase" / "report.json")
    args = ap.parse_args(argv)
    if args.regions < 2 or args.rows < args.regions or args.rate < 0 or args.threads < 1 or args.moves < 1 \
            or not 0 <= args.update_share <= 1:
        ap.error("need --regions >= 2, --rows >= --regions, --rate >= 0, --threads >= 1, --moves >= 1, "
                 "0 <= --update-share <= 1")
    from actuator.hbase_gateway import HBaseGateway

    with tempfile.TemporaryDirectory(prefix="move-hbase-") as tmp:
        cluster = CLUSTER.LocalHBase(Path(tmp), quota=not args.no_quota)
        cluster.start(rs=2)
        settings = cluster.client_settings()
        if args.client_pause_ms is not None:
            settings["hbase.client.pause"] = str(args.client_pause_ms)
        try:
            gw = HBaseGateway(CLUSTER.home_for(cluster.version) / "lib", settings,
                              conf_dir=cluster.client_conf_dir(), log_file=Path(tmp) / "gateway.log")
            with gw:
                moves, puts = run(gw, args)
        finally:
            cluster.stop()
    report = {"settings": {k: v for k, v in vars(args).items() if k != "out"},
              "moves": moves, "puts": puts,
              "move_s": spread([m["move_s"] for m in moves]),
              "stall_s": spread([m["stall_s"] for m in moves]),
              "window_p99_ms": spread([m["window"]["p99_ms"] for m in moves if m["window"]["gets"]]),
              "before_p99_ms": spread([m["before"]["p99_ms"] for m in moves if m["before"]["gets"]])}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "moves"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
