"""Measure how long a region split keeps a region's rows unavailable on a real HBase 2.6, for
the simulator's `simulator.actions.split_offline_s` (docs/simulator.md, "Region splits").

One RegionServer on this machine (deploy/local_hbase/cluster.py), one table of one region:
`--rows` rows of 1 KiB loaded and flushed, then `--unflushed` more left in the memstore (the
split flushes them while the parent is offline: HBase reference guide, "RegionServer Splitting
Implementation", step 4). While `Admin.splitRegionAsync` runs, a reader thread gets random rows of
the region in a loop; the figures are:

* split_s: from the request until the split procedure reports done (daughters open);
* stall_s: the longest get during the split — what a client waits (it retries
  NotServingRegionException with its own backoff), i.e. the time the rows were unreachable
  from a client's point of view.

Repeated `--repeat` times on fresh tables. About 2–3 minutes on 2 cores (cluster start ~30 s).
The figures behind the setting: `--repeat 5` (5 MB in the memstore) and `--unflushed 40000
--repeat 3` (40 MB); HBase flushes a memstore above 5 MB before it closes the region
(hbase.hregion.preclose.flush.size), so more unflushed data lengthens the split less than in
proportion.

    .venv/bin/python bench/measure_split_hbase.py [--rows 30000] [--unflushed 5000] [--repeat 3]

Figures go to out/measure-split-hbase/report.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.hbase_get_loop import FAMILY, GetLoop, load  # noqa: E402
from deploy.local_hbase import cluster as CLUSTER  # noqa: E402


def one_split(gw, name: str, rows: int, unflushed: int) -> dict:
    jvm = gw.jvm
    hb = jvm.org.apache.hadoop.hbase
    admin = gw.admin
    tn = hb.TableName.valueOf(name)
    cfd = hb.client.ColumnFamilyDescriptorBuilder.of(FAMILY)
    admin.createTable(hb.client.TableDescriptorBuilder.newBuilder(tn).setColumnFamily(cfd).build())
    table = gw.connection.getTable(tn)
    load(gw, table, 0, rows)
    admin.flush(tn)
    load(gw, table, rows, unflushed)
    parent = list(admin.getRegions(tn))[0]
    reader = GetLoop(gw, name, rows + unflushed).start()
    time.sleep(2.0)  # the reader's steady latency before the split
    t0 = time.monotonic()
    admin.splitRegionAsync(parent.getRegionName()).get()
    split_s = time.monotonic() - t0
    time.sleep(2.0)
    reader.stop()
    latencies = [(a, s) for a, s, _ in reader.gets]
    before = [s for a, s in latencies if a < t0]
    during = [s for a, s in latencies if t0 <= a <= t0 + split_s]
    daughters = [r for r in admin.getRegions(tn) if not r.isSplitParent()]
    admin.disableTable(tn)
    admin.deleteTable(tn)
    return {"split_s": round(split_s, 3),
            "stall_s": round(max(during, default=0.0), 3),
            "get_ms_before": round(1000 * statistics.median(before), 2) if before else None,
            "gets_during": len(during), "daughters": len(daughters),
            "rows": rows, "unflushed": unflushed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--unflushed", type=int, default=5_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "measure-split-hbase" / "report.json")
    args = ap.parse_args(argv)
    from actuator.hbase_gateway import HBaseGateway

    with tempfile.TemporaryDirectory(prefix="split-hbase-") as tmp:
        cluster = CLUSTER.LocalHBase(Path(tmp), quota=False)  # as measured for the simulator's setting
        cluster.start(rs=1)
        try:
            gw = HBaseGateway(CLUSTER.home_for(cluster.version) / "lib", cluster.client_settings(),
                              conf_dir=cluster.client_conf_dir(), log_file=Path(tmp) / "gateway.log")
            with gw:
                runs = []
                for i in range(args.repeat):
                    run = one_split(gw, f"splitbench{i}", args.rows, args.unflushed)
                    print(json.dumps(run), flush=True)
                    runs.append(run)
        finally:
            cluster.stop()
    report = {"runs": runs,
              "split_s_median": statistics.median(r["split_s"] for r in runs),
              "stall_s_median": statistics.median(r["stall_s"] for r in runs)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
