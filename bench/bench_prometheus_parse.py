"""Benchmark of the Prometheus source's parsing: an answer to its node query for 1,000 hosts,
from the body's bytes to one HostSample per host (JSON, grouping by instance, the fractions).
Prints figures; asserts nothing (the target is for people to judge).

Target (issue #13): 1,000 hosts parsed in < 200 ms.

The answer is synthetic but shaped like the real one recorded in
tests/monitor/data/prometheus-node-answer.json (Prometheus 2.42 answering the source's query
about node_exporter 1.5): the recorded series of one of its hosts, repeated for each host with
other instance labels and values — five series per host (idle and iowait shares, MemAvailable,
MemTotal, the latest memory sample's time).

Run: .venv/bin/python bench/bench_prometheus_parse.py [--hosts N] [--runs N]
"""
from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from monitor.prometheus import hosts_from_answer  # noqa: E402
from monitor.settings import MonitorSettings  # noqa: E402

RECORDED = ROOT / "tests" / "monitor" / "data" / "prometheus-node-answer.json"


def answer(hosts: int) -> bytes:
    """The recorded answer's series for `hosts` hosts (rs0000.bench:9100, …), values varied."""
    doc = json.loads(RECORDED.read_bytes())
    first = doc["data"]["result"][0]["metric"]["instance"]
    series = [s for s in doc["data"]["result"] if s["metric"]["instance"] == first]
    rnd = random.Random(1)
    out = []
    for i in range(hosts):
        for s in series:
            s = copy.deepcopy(s)
            s["metric"]["instance"] = f"rs{i:04d}.bench.example.org:9100"
            tag = s["metric"]["metctl_series"]
            if tag == "idle":
                s["value"][1] = repr(rnd.uniform(0, 0.9))
            elif tag == "iowait":
                s["value"][1] = repr(rnd.uniform(0, 0.1))
            elif tag == "mem_available":
                s["value"][1] = str(rnd.randrange(1 << 30, 24 << 30))
            out.append(s)
    doc["data"]["result"] = out
    return json.dumps(doc, separators=(",", ":")).encode()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    body = answer(args.hosts)
    settings = MonitorSettings()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        hosts, problems = hosts_from_answer(body, settings)
        times.append(time.perf_counter() - start)
    assert len(hosts) == args.hosts and not problems, problems  # the bench measured real work
    assert all(h.cpu is not None and h.memory is not None for h in hosts)
    print(f"prometheus answer: {args.hosts} hosts, {len(body) / 2**20:.2f} MiB, "
          f"{len(body) // args.hosts} bytes/host")
    print(f"parse to HostSamples: median {statistics.median(times) * 1000:.1f} ms, "
          f"min {min(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms over {args.runs} runs "
          f"(target < 200 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
