"""Benchmark of the monitor: parse time of a large Ganglia dump and a large /jmx answer, and memory
over many collector polls. Prints figures; asserts nothing (targets are for people to judge).

Targets (issue #4): gmetad dump of 1,000 hosts x 30 metrics parsed in < 200 ms; /jmx answer of
1,000 regions parsed in < 200 ms; memory flat over 10,000 polls.

The dumps are synthetic but shaped like the real ones recorded in tests/monitor/data/ (the same
DTD, attributes and per-region metric names as Ganglia 3.7.2 and HBase 2.6.4 print).

Run: .venv/bin/python bench/bench_monitor.py [--polls N]
"""
from __future__ import annotations

import argparse
import gc
import json
import logging
import random
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.collector import Collector  # noqa: E402
from monitor.ganglia import parse_dump, to_host_sample  # noqa: E402
from monitor.hbase_jmx import OS_BEAN, parse_process_cpu, parse_regions, process_cpu_samples  # noqa: E402
from monitor.settings import MonitorSettings  # noqa: E402
from monitor.source import HostSample, PartitionSample, Sample  # noqa: E402

DATA = ROOT / "tests" / "monitor" / "data"
METRICS_30 = ["cpu_idle", "cpu_wio", "cpu_user", "cpu_system", "cpu_nice", "cpu_aidle",
              "cpu_steal", "cpu_intr", "cpu_sintr", "cpu_num", "cpu_speed", "mem_total",
              "mem_free", "mem_cached", "mem_buffers", "mem_shared", "swap_total", "swap_free",
              "load_one", "load_five", "load_fifteen", "proc_run", "proc_total", "bytes_in",
              "bytes_out", "pkts_in", "pkts_out", "disk_total", "disk_free", "boottime"]
REGION_METRICS = ["storeCount", "storeFileCount", "storeRefCount", "maxCompactedStoreFileRefCount",
                  "memStoreSize", "maxStoreFileAge", "minStoreFileAge", "avgStoreFileAge",
                  "numReferenceFiles", "storeFileSize", "currentRegionCacheRatio",
                  "compactionsCompletedCount", "compactionsFailedCount", "lastMajorCompactionAge",
                  "numBytesCompactedCount", "numFilesCompactedCount", "readRequestCount",
                  "cpRequestCount", "filteredReadRequestCount", "writeRequestCount", "replicaid",
                  "compactionsQueuedCount", "flushesQueuedCount", "maxCompactionQueueSize",
                  "maxFlushQueueSize", "putCount", "deleteCount", "incrementCount", "appendCount",
                  "getCount", "scanCount"]


def gmetad_dump(hosts: int, clusters: int = 4) -> bytes:
    """A gmetad dump in Ganglia 3.7.2's format (its DTD copied from a recorded dump)."""
    recorded = (DATA / "gmetad-dump.xml").read_bytes()
    head = recorded[: recorded.index(b"<GANGLIA_XML ")]
    rnd = random.Random(1)
    out = [head.decode("latin-1"), '<GANGLIA_XML VERSION="3.7.2" SOURCE="gmetad">\n',
           '<GRID NAME="bench" AUTHORITY="http://bench/ganglia/" LOCALTIME="1795367150">\n']
    per = hosts // clusters
    for c in range(clusters):
        out.append(f'<CLUSTER NAME="c{c}" LOCALTIME="1795367149" OWNER="o" LATLONG="u" URL="u">\n')
        for h in range(per):
            out.append(f'<HOST NAME="rs{c}-{h}.bench" IP="10.{c}.{h // 250}.{h % 250}" '
                       f'REPORTED="1795367148" TN="{rnd.randint(0, 30)}" TMAX="20" DMAX="0" '
                       'LOCATION="unspecified" GMOND_STARTED="1795367000" TAGS="">\n')
            for m in METRICS_30:
                out.append(f'<METRIC NAME="{m}" VAL="{rnd.uniform(0, 100):.1f}" TYPE="float" '
                           f'UNITS="%" TN="{rnd.randint(0, 60)}" TMAX="90" DMAX="0" SLOPE="both">\n'
                           '<EXTRA_DATA>\n<EXTRA_ELEMENT NAME="GROUP" VAL="cpu"/>\n'
                           '</EXTRA_DATA>\n</METRIC>\n')
            out.append("</HOST>\n")
        out.append("</CLUSTER>\n")
    out.append("</GRID>\n</GANGLIA_XML>\n")
    return "".join(out).encode("latin-1")


def jmx_regions_text(regions: int) -> str:
    rnd = random.Random(2)
    bean: dict[str, object] = {"name": "Hadoop:service=HBase,name=RegionServer,sub=Regions",
                               "modelerType": "RegionServer,sub=Regions",
                               "tag.Context": "regionserver", "tag.Hostname": "rs1.bench"}
    for r in range(regions):
        enc = f"{rnd.getrandbits(128):032x}"
        for m in REGION_METRICS:
            bean[f"Namespace_default_table_usertable_region_{enc}_metric_{m}"] = rnd.randint(0, 10**9)
    return json.dumps({"beans": [bean]}, indent=2)


def timed(fn, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return times


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class SyntheticSource:
    """Scripted cluster: hosts with noisy metrics, regions with growing counters, a split every
    100 polls (two daughters replace a parent), a region reopen (counter reset) every 50 polls."""

    def __init__(self, hosts: int, regions: int):
        self.t = 0.0
        self.rnd = random.Random(3)
        self.hosts = [f"rs{i},16020" for i in range(hosts)]
        self.regions = {f"{i:032x}": [0.0, 0.0, 0.0] for i in range(regions)}
        self.next_id = regions
        self.polls = 0

    def sample(self) -> Sample:
        self.polls += 1
        self.t += 30.0
        if self.polls % 100 == 0:  # split: the parent vanishes, two daughters appear
            parent = next(iter(self.regions))
            del self.regions[parent]
            for _ in range(2):
                self.regions[f"{self.next_id:032x}"] = [0.0, 0.0, 0.0]
                self.next_id += 1
        if self.polls % 50 == 0:  # a region reopened somewhere: its counters restart
            self.regions[next(iter(self.regions))] = [0.0, 0.0, 0.0]
        hosts = tuple(HostSample(h, cpu=self.rnd.random(), io_wait=self.rnd.random() / 5,
                                 memory=self.rnd.random()) for h in self.hosts)
        parts = []
        for i, (rid, c) in enumerate(self.regions.items()):
            c[0] += self.rnd.randint(0, 3000)
            c[1] += self.rnd.randint(0, 300)
            c[2] += self.rnd.randint(0, 30)
            parts.append(PartitionSample(rid, "usertable", self.hosts[i % len(self.hosts)],
                                         c[0], c[1], c[2], size_mb=100.0, locality=1.0))
        return Sample(taken_at=self.t, hosts=hosts, partitions=tuple(parts))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polls", type=int, default=10_000)
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--regions", type=int, default=1_000)
    args = ap.parse_args()
    # Region resets are logged as warnings by design; a benchmark makes hundreds of them.
    logging.getLogger("monitor").setLevel(logging.ERROR)

    dump = gmetad_dump(1000)
    tmax_factor = MonitorSettings().ganglia_stale_tmax_factor
    t = timed(lambda: [to_host_sample(h, tmax_factor) for h in parse_dump(dump)], 15)
    n_hosts = len(parse_dump(dump))
    print(f"ganglia: gmetad dump {len(dump) / 2**20:.1f} MiB, {n_hosts} hosts x {len(METRICS_30)} "
          f"metrics: parse+map median {statistics.median(t):.1f} ms, min {min(t):.1f} ms, "
          f"max {max(t):.1f} ms (target < 200 ms)", flush=True)

    text = jmx_regions_text(1000)

    def jmx_once():
        doc = json.loads(text)
        return parse_regions(doc["beans"][0], "rs1.bench,16020", 1.0)

    t = timed(jmx_once, 15)
    print(f"hbase /jmx: answer {len(text) / 2**20:.1f} MiB, {len(jmx_once())} regions x "
          f"{len(REGION_METRICS)} metrics: json+parse median {statistics.median(t):.1f} ms, "
          f"min {min(t):.1f} ms, max {max(t):.1f} ms (target < 200 ms)", flush=True)

    # JVM process CPU: 1,000 RegionServers' java.lang:type=OperatingSystem answers (the shape
    # HBase 2.6.4 on JDK 17 prints), 10 servers per host, parsed and turned into process samples,
    # then folded by the collector with one machine sample per host.
    os_texts = [json.dumps({"beans": [{"name": OS_BEAN, "ProcessCpuLoad": (i % 97) / 97,
                                       "SystemCpuLoad": 0.5, "CpuLoad": 0.5,
                                       "TotalMemorySize": 25276063744, "AvailableProcessors": 2,
                                       "ObjectName": OS_BEAN}]}) for i in range(1000)]
    servers = [f"rs{i // 10}.bench,{16020 + i % 10}" for i in range(1000)]
    machines = tuple(HostSample(host=f"rs{h}.bench", cpu=0.5, io_wait=0.01, memory=0.4)
                     for h in range(100))

    def jvm_once():
        cpu = {srv: parse_process_cpu(json.loads(t)["beans"][0]) for srv, t in zip(servers, os_texts)}
        return process_cpu_samples(cpu, {}, "shared_hosts")

    t = timed(jvm_once, 15)
    print(f"hbase JVM CPU: 1,000 RegionServers (10 per host): json+parse median "
          f"{statistics.median(t):.1f} ms, min {min(t):.1f} ms, max {max(t):.1f} ms "
          f"(target < 200 ms)", flush=True)
    procs = tuple(jvm_once())

    class _Fixed:
        def sample(self):
            return Sample(taken_at=0.0, hosts=machines + procs, servers=tuple(servers))

    collector = Collector([_Fixed()], MonitorSettings())
    t = timed(lambda: collector.poll(0.0), 15)
    print(f"collector: 1,000 process samples merged with 100 machines: median "
          f"{statistics.median(t):.1f} ms, max {max(t):.1f} ms", flush=True)

    # Memory over many polls: the collector's history must stay bounded (splits, resets,
    # clear() after every 60 polls as the control loop does after an actuation). RSS and the
    # count of live Python objects over the full run; tracemalloc (slow) over a shorter one.
    print(f"collector: {args.polls} polls of {args.hosts} hosts + ~{args.regions} regions "
          "(split every 100, reset every 50, snapshot every 6, never cleared)", flush=True)
    run_polls(args, args.polls, traced=False, clear_every=0)
    traced = max(10, args.polls // 10)
    print(f"collector under tracemalloc: {traced} polls, cleared every 60 as after actuations",
          flush=True)
    run_polls(args, traced, traced=True, clear_every=60)


def run_polls(args: argparse.Namespace, polls: int, traced: bool, clear_every: int) -> None:
    src = SyntheticSource(args.hosts, args.regions)
    c = Collector([src], MonitorSettings())
    marks = {max(1, polls // 10) * k - 1 for k in range(1, 11)}
    if traced:
        tracemalloc.start()
    figures = []
    t0 = time.perf_counter()
    for i in range(1, polls + 1):
        c.poll(src.t + 30.0)
        if i % 6 == 0:
            c.complete_enough(c.snapshot(src.t))
        if i in marks:
            gc.collect()
            fig = (tracemalloc.get_traced_memory()[0] / 2**20 if traced else len(gc.get_objects()))
            figures.append(fig)
            print(f"  poll {i:6d}: " + (f"traced {fig:7.2f} MiB" if traced else
                                        f"{fig:8d} live objects") +
                  f", RSS {rss_mb():6.1f} MiB, partitions tracked {len(c._parts)}", flush=True)
        if clear_every and i % clear_every == 0:
            c.clear()
    elapsed = time.perf_counter() - t0
    if traced:
        tracemalloc.stop()
    unit = "MiB traced" if traced else "live objects"
    print(f"  {elapsed / polls * 1000:.2f} ms per poll (incl. building the synthetic sample); "
          f"{unit}: first mark {figures[0]:.2f}, last {figures[-1]:.2f}, max {max(figures):.2f}",
          flush=True)


if __name__ == "__main__":
    main()
