"""HBase 2.6.4's StochasticLoadBalancer against metctl's plan on one Zipf-loaded snapshot.

The same seeded snapshot (default 100 nodes x 5,000 partitions, Zipf exponent 0.8, regions
placed at random) goes to the real `StochasticLoadBalancer` class from the hbase-server jar (stock
hbase-default.xml settings, run in a py4j JVM) and to metctl's decision core exactly as
`metctl plan --snapshot S --config F` calls it (configs/met-marks.yaml unless told: MET's
placement), size pinned to the snapshot's node count
(SLB cannot add or remove servers). For each: moves, restarts (reconfigurations), max/mean node
load, the floor max(largest partition, total / nodes) / mean, the gap to the floor, wall time.
Method and figures: docs/slb-comparison.md. Figures are printed, never asserted.

    .venv/bin/python bench/bench_slb.py                              # default size, ~1 min
    .venv/bin/python bench/bench_slb.py --config configs/met-marks.yaml --config configs/met-paper.yaml
    .venv/bin/python bench/bench_slb.py --nodes 10 --partitions 200 --placement round-robin --json

Needs the HBase jars (deploy/test-deps.d/hbase.sh) and a JDK.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.slb import (  # noqa: E402
    PLACEMENT_CONFIG, Figures, StochasticBalancer, balance_figures, placement_of, run_metctl, run_slb,
    zipf_snapshot,
)
from controller.errors import BadInput  # noqa: E402


def parse_setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def row(f: Figures) -> str:
    return (f"{f.name:<28} {f.moves:>7} {f.restarts:>8} {f.max_mean:>9.4f} {f.floor:>7.4f} "
            f"{f.over_floor_pct:>7.2f} % {f.wall_s:>9.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=5000)
    ap.add_argument("--exponent", type=float, default=0.8, help="Zipf exponent of partition loads")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--placement", choices=["random", "round-robin"], default="random",
                    help="where regions start: a uniformly drawn node each (default), or dealt "
                         "round-robin (equal counts; stock SLB then declines to balance)")
    ap.add_argument("--mean-cpu", type=float, default=0.5,
                    help="cpu of a node serving the mean load; each node's cpu is in proportion "
                         "to its load")
    ap.add_argument("--config", action="append", default=[], metavar="FILE",
                    help="metctl config whose policy plans (repeat to compare; default: "
                         "configs/met-marks.yaml, MET's placement)")
    ap.add_argument("--no-pin", action="store_true",
                    help="keep the config's min_nodes/max_nodes (metctl may then resize)")
    ap.add_argument("--slb-set", action="append", default=[], type=parse_setting,
                    metavar="KEY=VALUE", help="override an HBase setting for SLB (default: stock)")
    ap.add_argument("--slb-runs", type=int, default=1, metavar="N",
                    help="run SLB N times (its random walk is not seeded; shows the spread)")
    ap.add_argument("--no-slb", action="store_true", help="metctl only (no JVM)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)

    try:
        snap = zipf_snapshot(args.nodes, args.partitions, exponent=args.exponent, seed=args.seed,
                             mean_cpu=args.mean_cpu, placement=args.placement)
    except ValueError as e:
        print(f"bench_slb: {e}", file=sys.stderr)
        return 2
    nodes = [n.id for n in snap.nodes]
    results: list[Figures] = [balance_figures("before (no plan)", snap, placement_of(snap), nodes,
                                              0, 0, 0.0)]
    try:
        for config in args.config or [str(PLACEMENT_CONFIG)]:
            figures, _ = run_metctl(snap, config, pin_size=not args.no_pin)
            figures.name = f"metctl {Path(config).name}"
            figures.extra["config"] = config
            results.append(figures)
    except BadInput as e:
        print(f"bench_slb: {e}", file=sys.stderr)
        return 2
    if not args.no_slb:
        with StochasticBalancer(settings=dict(args.slb_set)) as slb:
            for i in range(max(1, args.slb_runs)):
                figures = run_slb(snap, slb)
                if args.slb_runs > 1:
                    figures.name = f"hbase-slb run {i + 1}"
                results.insert(1 + i, figures)

    overloaded = sum(n.metrics.cpu >= 0.6 for n in snap.nodes if n.metrics)
    meta = {"nodes": args.nodes, "partitions": args.partitions, "exponent": args.exponent,
            "seed": args.seed, "placement": args.placement, "mean_cpu": args.mean_cpu,
            "nodes_at_cpu_0.6_or_more": overloaded, "size_pinned": not args.no_pin}
    if args.json:
        print(json.dumps({"snapshot": meta, "results": [r.to_dict() for r in results]}, indent=2))
        return 0
    print(f"{args.nodes} nodes x {args.partitions} partitions, Zipf {args.exponent}, seed "
          f"{args.seed}, {args.placement} placement; node cpu = {args.mean_cpu} x load / mean "
          f"({overloaded} nodes at >= 0.6)")
    print(f"{'':<28} {'moves':>7} {'restarts':>8} {'max/mean':>9} {'floor':>7} {'over floor':>9} "
          f"{'wall s':>9}")
    for r in results:
        print(row(r))
    for r in results:
        x = r.extra
        if r.name.startswith("hbase-slb"):
            s = x["settings"]
            how = (f"searched {x['search_ms'] / 1000:.1f} s, {x['steps_tried']:,} steps"
                   if "search_ms" in x else
                   f"declined: weighted imbalance {x.get('declined_imbalance')} <= "
                   f"minCostNeedBalance {s['hbase.master.balancer.stochastic.minCostNeedBalance']}")
            print(f"  {r.name}: {how}; maxRunningTime {s['hbase.master.balancer.stochastic.maxRunningTime']} ms, "
                  f"maxSteps {s['hbase.master.balancer.stochastic.maxSteps']}, runMaxSteps "
                  f"{s['hbase.master.balancer.stochastic.runMaxSteps']}; inputs built in {x['setup_s']:.1f} s (not timed)")
        elif "reason" in x:
            print(f"  {r.name}: {x['reason']}; actions {x['actions']}; decision cpu {x['cpu_s']:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
