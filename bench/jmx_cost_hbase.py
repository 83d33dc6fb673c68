"""What the monitor's /jmx questions cost a quota'd RegionServer (docs/evaluation.md, "What a
sample costs a RegionServer"): on a 0.15-core slice a question is milliseconds of the slice, and
a sample's questions showed as missed windows in `make compare-hbase`.

Starts a local quota'd cluster of 2 RegionServers (deploy/local_hbase, the default slices) with
the compare bench's tables (YCSB A and C, 12 regions each, 12,000 rows), no client load, and
measures on one RegionServer the CPU of its web-server threads (`qtp…`, which answer /jmx; from
/proc/PID/task/*/schedstat):

- per question: every bean the monitor reads, whole (`?qry=`) and one attribute (`?get=`),
  each asked `--repeats` times `--gap-s` apart, for `--rounds` rounds (the first is the JVM
  still compiling the servlet's code);
- per sample: the monitor's sources as the daemon wires them for the local cluster
  (monitor.live.live_sources with `hbase_jvm_system_metrics`), `--repeats` samples.

Prints the median per question and per sample (ms), writes --out as JSON. Take the machine-wide
lock around it (`flock /work/hbase.lock`, ~5 minutes):

    .venv/bin/python bench/jmx_cost_hbase.py [--rounds 2] [--repeats 12] [--out out/jmx-cost-hbase.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.parse
import urllib.request
from functools import partial
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OS = "java.lang:type=OperatingSystem"
SERVER = "Hadoop:service=HBase,name=RegionServer,sub=Server"
IPC = "Hadoop:service=HBase,name=RegionServer,sub=IPC"
REGIONS = "Hadoop:service=HBase,name=RegionServer,sub=Regions"
MEMORY = "java.lang:type=Memory"
RUNTIME = "java.lang:type=Runtime"
QUESTIONS = [("qry", REGIONS), ("qry", SERVER), ("get", SERVER + "::tag.serverName"), ("qry", IPC),
             ("qry", OS), ("get", OS + "::ProcessCpuLoad"), ("qry", MEMORY),
             ("get", MEMORY + "::HeapMemoryUsage"), ("qry", RUNTIME), ("get", RUNTIME + "::Name")]


def web_cpu_ms(pid: int) -> float:
    """CPU of the JVM's web-server threads so far, in ms."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{task}/comm").read().startswith("qtp"):
                total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
        except OSError:
            continue  # a thread that ended
    return total / 1e6


def ask(query: str) -> bytes:
    with urllib.request.urlopen(query, timeout=30) as answer:
        return answer.read()


def cost(pid: int, ask: Callable[[], object], repeats: int, gap_s: float) -> tuple[float, list[float]]:
    each = []
    for _ in range(repeats):
        before, t = web_cpu_ms(pid), time.monotonic()
        ask()
        time.sleep(max(0.0, gap_s - (time.monotonic() - t)))
        each.append(web_cpu_ms(pid) - before)
    return statistics.median(each), each


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=12)
    ap.add_argument("--gap-s", type=float, default=2.0)
    ap.add_argument("--workdir", default=str(ROOT / "out" / "jmx-cost-hbase"))
    ap.add_argument("--out", default=str(ROOT / "out" / "jmx-cost-hbase.json"))
    a = ap.parse_args(argv)
    from deploy.local_hbase import chaos, ycsb
    from deploy.local_hbase.cluster import LocalHBase
    from monitor.collector import Collector
    from monitor.live import live_sources
    from monitor.settings import MonitorSettings

    cluster = LocalHBase(Path(a.workdir) / "hbase", rs_heap_mb=384, session_timeout_ms=40_000)
    gw = None
    questions: dict[str, list[dict[str, object]]] = {}
    out: dict[str, object] = {"questions": questions, "load_avg_1_5_15": None}
    try:
        cluster.start(rs=2, timeout_s=600)
        gw = chaos.HBaseGateway(chaos.default_client_jars_dir(), cluster.client_settings(),
                                log_file=str(Path(a.workdir) / "gateway.log"))
        gw.open()
        ycsb.load(cluster, gw, 12_000, ["A", "C"], threads=4, regions={"A": 12, "C": 12})
        rs = cluster.region_servers()
        pid, url = rs[0].pid, rs[0].info_url
        assert pid is not None
        time.sleep(20)  # the load's flushes settle
        for rnd in range(a.rounds):
            for kind, bean in QUESTIONS:
                query = f"{url}/jmx?" + urllib.parse.urlencode({kind: bean})
                median, each = cost(pid, partial(ask, query), a.repeats, a.gap_s)
                questions.setdefault(f"{kind}={bean}", []).append(
                    {"round": rnd + 1, "median_ms": round(median, 2), "ms": [round(x, 2) for x in each]})
                print(f"round {rnd + 1}  {kind}={bean:55s} {median:6.1f} ms", flush=True)
        settings = MonitorSettings(hbase_jmx_urls=tuple(p.info_url for p in rs), hbase_rpc_port=rs[0].port,
                                   hbase_jvm_system_metrics=True, host_name_rule="identity")
        collector = Collector(live_sources(settings), settings)
        collector.poll(time.time())  # the first sample asks the Server bean for each JVM's id
        median, each = cost(pid, lambda: collector.poll(time.time()), a.repeats, a.gap_s)
        ok, why = collector.complete_enough(collector.snapshot(time.time()))
        out["sample"] = {"median_ms": round(median, 2), "ms": [round(x, 2) for x in each],
                         "complete": why if ok else f"not complete: {why}"}
        print(f"one sample of the monitor as wired for the local cluster: {median:.1f} ms "
              f"({why if ok else 'not complete: ' + why})", flush=True)
        out["load_avg_1_5_15"] = os.getloadavg()
    finally:
        if gw is not None:
            gw.close()
        cluster.stop()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"figures in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
