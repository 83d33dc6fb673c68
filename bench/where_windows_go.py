"""Where a simulated run loses its SLO windows (prints; asserts nothing).

Runs one scenario under one policy and lists every window some tenant missed: when, how many
RegionServers served, and per missing tenant the share of its answers slower than the objective
and the share of its requests that failed. Each missed window is put down to a region move
when a region started opening elsewhere (a policy's move, the store's balancer, a split) within
`--after-move-s` before the window ended, and the count of both kinds is printed. Each is also
put down to what the policy was doing when the window ended (`policy_state`): a plan in flight
that launches nodes (a scale-out, extensions included), one that drains them (a scale-in) or
one that only moves or splits; or no plan, held, and then whether a scale-in ended within
`--after-plan-s` before; the windows are counted by that too. And each is set beside the
oracle's size for its minute (the smallest cluster meeting that minute's load at steady state,
controller/cost.py): a window missed with fewer RegionServers serving than that lacked nodes; one
missed with as many or more lost it to where the load sat or to what the moves cost; for those
the nodes' CPU at the decision before the window's end tells the two apart (`NodeCpu`): uneven
(a node at UNEVEN_HOT or more while the mean is under UNEVEN_MEAN) or all busy.

`--warm-moves` is a what-if about the simulator, not a model of any HBase setting: every
region that opens after the start does so with its caches as warm as if it had always been
there, so the run shows what the cold caches of moved regions cost the policy (a moved region's
first reads are block-cache misses served from the DataNodes' disks, docs/simulator.md). Its
real counterpart, prefetch on open (a profile's `prefetch_on_open`), is modelled with its
costs: the disk and CPU the read takes and the blocks it pushes out; this is its free bound.

    .venv/bin/python bench/where_windows_go.py --scenario steady-growth \\
        --config my-policy.yaml [--seed 1] [--warm-moves]
    .venv/bin/python bench/where_windows_go.py --scenario business-day --static 9
"""
from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.config import load_config  # noqa: E402
from controller.cost import oracle_per_minute  # noqa: E402
from controller.loop import LoopObserver  # noqa: E402
from controller.harness import build_run  # noqa: E402
from controller.scoring import (  # noqa: E402
    DEFAULT_MAX_FAILED, tenant_steps, window_attainment, window_verdicts)
from simulator import store  # noqa: E402
from simulator.scenario import load_scenario, resolve_scenario_path  # noqa: E402

REGION_OPENS = ("move", "balancer", "split")  # events after which a region opens elsewhere
# This listing's reading of the nodes' CPU (not the policy's): a node this busy beside a mean
# this far under it is a load placed unevenly, not a cluster short of nodes.
UNEVEN_HOT, UNEVEN_MEAN = 0.9, 0.85


class NodeCpu(LoopObserver):
    """The active nodes' CPU the monitor gave each decision: (time, hottest, mean)."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float, float]] = []

    def on_decision(self, now, plan, plan_id, snapshot) -> None:
        cpu = [n.metrics.cpu for n in snapshot.nodes if n.state == "active" and n.metrics is not None]
        if cpu:
            self.seen.append((now, max(cpu), sum(cpu) / len(cpu)))

    def before(self, at: float) -> tuple[float, float] | None:
        """The hottest node's and the mean CPU at the last decision at or before `at`."""
        last = [(hot, mean) for t, hot, mean in self.seen if t <= at]
        return last[-1] if last else None


def plan_kinds(decisions) -> dict[str, str]:
    """Each plan's kind from the decisions that made or extended it (controller.harness
    DecisionRecord): `scale-out` when any launched nodes, `scale-in` when any drained or
    terminated them, else `moves` (moves, splits, restarts)."""
    kinds: dict[str, str] = {}
    for d in decisions:
        if d.plan_id is None:
            continue
        if d.kinds.get("launch"):
            kinds[d.plan_id] = "scale-out"
        elif d.kinds.get("drain") or d.kinds.get("terminate"):
            kinds.setdefault(d.plan_id, "scale-in")
        else:
            kinds.setdefault(d.plan_id, "moves")
    return kinds


def policy_state(at: float, decisions, plan_events, holds, after_plan_s: float,
                 kinds: dict[str, str] | None = None) -> str:
    """What the policy was doing at `at`: "<kind> in flight" while a plan runs (submitted at or
    before `at`, not ended by then); otherwise "held (<cause>)" by the last hold at or before
    `at`, "after a scale-in" when a scale-in ended within `after_plan_s` before `at`, and
    "before any decision" when none was made yet. `kinds`: plan_kinds(decisions), when the
    caller asks about many moments of one run."""
    kinds = plan_kinds(decisions) if kinds is None else kinds
    running: dict[str, float] = {}
    ended: list[tuple[float, str]] = []
    for t, event, plan_id in plan_events:
        if t > at or plan_id is None:
            continue
        if event == "submitted":
            running[plan_id] = t
        elif plan_id in running:
            del running[plan_id]
            ended.append((t, plan_id))
    if running:
        return f"{kinds.get(max(running, key=running.get), 'moves')} in flight"
    if any(at - t <= after_plan_s and kinds.get(p) == "scale-in" for t, p in ended):
        return "after a scale-in"
    last = [cause for t, cause, _ in holds if t <= at]
    if last:
        return f"held ({last[-1]})"
    return "before any decision" if not any(d.t <= at for d in decisions) else "held"


def warm_moves() -> None:
    """The what-if: a region that opens after the start has warm caches at once."""
    opened = store.open_region

    def open_warm(cl, r: int, node: int, *, locality: float) -> None:
        opened(cl, r, node, locality=locality)
        if cl.t > 0:
            cl.regions.opened_at[r] = cl.regions.page_since[r] = -np.inf
            cl.invalidate_cache()

    store.open_region = open_warm


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", required=True, help="a name in configs/scenarios/ or a path")
    ap.add_argument("--config", help="a metctl config whose policy runs (default: the default met)")
    ap.add_argument("--static", type=int, metavar="NODES", help="a static cluster of this size instead")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--after-move-s", type=float, default=60.0)
    ap.add_argument("--after-plan-s", type=float, default=300.0,
                    help="a window missed within this after a scale-in ended is put down to it")
    ap.add_argument("--warm-moves", action="store_true", help="the what-if (see above)")
    args = ap.parse_args(argv)
    logging.getLogger("metctl").setLevel(logging.ERROR)
    if args.warm_moves:
        warm_moves()
    scenario = load_scenario(resolve_scenario_path(args.scenario))
    update: dict = {"seed": args.seed}
    if args.static:
        update["initial_nodes"] = args.static
    scenario = scenario.model_copy(update=update)
    config = load_config(args.config)
    cpu = NodeCpu()
    run = build_run(config, scenario, policy="static" if args.static else config.policy.name,
                    observers=[cpu])
    run.run()
    recording = run.cluster.recording()
    steps = tenant_steps(recording, scenario)
    interval = float(scenario.slo_interval_s)
    objective = (float(scenario.slo_latency_ms), interval,
                 getattr(scenario, "slo_max_failed", DEFAULT_MAX_FAILED))
    verdicts = window_verdicts(steps, *objective)
    active, met, slow, failed = verdicts.active, verdicts.met, verdicts.slow, verdicts.failed
    missed = active & ~met
    per = max(1, int(round(interval / steps.dt)))
    n = missed.shape[0]
    servers = np.asarray(recording.servers)[: n * per].reshape(n, per)
    opens = np.array(sorted(e.t for e in run.cluster.events if e.kind in REGION_OPENS))
    attainment = {w: v["attainment"] for w, v in window_attainment(steps, *objective).items()}
    node_minutes = float(np.asarray(recording.vms).sum() * recording.tick_s / 60.0)
    need = oracle_per_minute(scenario, run.cluster.settings)
    after_move = short_of_nodes = uneven = 0
    lines = []
    states: dict[str, int] = {}
    rec = run.recorder
    kinds = plan_kinds(rec.decisions)
    for k in np.where(missed.any(axis=1))[0]:
        start, end = k * interval, (k + 1) * interval
        moved = bool(opens.size and ((opens >= end - args.after_move_s) & (opens < end)).any())
        after_move += moved
        state = policy_state(end, rec.decisions, rec.plan_events, rec.holds, args.after_plan_s, kinds)
        states[state] = states.get(state, 0) + 1
        minute = min(int(start // 60), len(need) - 1)
        needed = need[minute] if minute >= 0 else None
        lacking = needed is not None and servers[k].min() < needed
        short_of_nodes += lacking
        nodes = cpu.before(end)
        if not lacking and nodes is not None and nodes[0] >= UNEVEN_HOT and nodes[1] < UNEVEN_MEAN:
            uneven += 1
        busy = "cpu  ?  /  ?  " if nodes is None else f"cpu {nodes[0]:.2f}/{nodes[1]:.2f}"
        who = " ".join(f"{w}: slow {slow[k, i]:.3f} failed {failed[k, i]:.4f}"
                       for i, w in enumerate(steps.workloads) if missed[k, i])
        lines.append(f"  {start:7.0f} s  {servers[k].min():.0f}-{servers[k].max():.0f} RS"
                     f" (needs {'?' if needed is None else needed:>2}) {busy}"
                     f"{'  after a move' if moved else '              '}  {state:22s}  {who}")
    total = int(missed.any(axis=1).sum())
    what = f"static {args.static}" if args.static else (args.config or "the default met")
    print(f"{scenario.name} seed {args.seed}, {what}{', warm moves (what-if)' if args.warm_moves else ''}")
    print(f"worst-tenant attainment {min(attainment.values()):.3f} "
          f"({', '.join(f'{w} {a:.3f}' for w, a in attainment.items())}), "
          f"{node_minutes:.0f} node-minutes")
    print(f"{total} of {n} windows missed by some tenant: {after_move} within "
          f"{args.after_move_s:g} s after a region started opening elsewhere, {total - after_move} not")
    print(f"{short_of_nodes} with fewer RegionServers serving than the oracle's size for the "
          f"minute, {total - short_of_nodes} with as many or more ({uneven} of them uneven: a "
          f"node at {UNEVEN_HOT:g} CPU or more, the mean under {UNEVEN_MEAN:g}, at the decision before)")
    print("the policy meanwhile: " + ", ".join(
        f"{state} {count}" for state, count in sorted(states.items(), key=lambda kv: -kv[1])))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
