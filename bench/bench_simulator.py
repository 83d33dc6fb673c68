"""Figures of the simulator and of the policies on it (prints; asserts nothing).

1. Speed: one simulated hour at 1 s resolution, 6 YCSB workloads, 30 regions, no controller;
   then the full MET §6.4 scenario under each policy (collector + executor + loop included).
2. MET §3.4's static experiment on MET §3.2's machines (5 RegionServers, 4 GB, 3 GB heap):
   manually balanced homogeneous (60 % cache / 40 % memstore, as MET §3.3) against MET's
   manual heterogeneous layout (Table 1 profiles; read/write 2 nodes, read, write, scan 1 each).
   Paper: heterogeneous +35 %; scans ~100/s -> ~1,350/s.
3. MET §6.4 (configs/scenarios/met-elasticity.yaml): met vs tiramola vs static.
   Paper: MET +31 % operations in the first 33 minutes, 9 machines against 11.
4. Incremental against parallel transfer under MET on the same scenario.
   Paper (incremental elasticity): 39 % fewer SLO-violating intervals.

    .venv/bin/python bench/bench_simulator.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.config import MetctlConfig  # noqa: E402
from controller.report import summarize  # noqa: E402
from simulator.cluster import SimCluster  # noqa: E402
from controller.harness import build_run  # noqa: E402
from simulator.scenario import load_scenario, scenario_from_dict  # noqa: E402
from simulator.settings import ProfileSettings, SimulatorSettings  # noqa: E402

CONFIG = MetctlConfig.model_validate({"loop": {"memory_path": None},
                                      "telemetry": {"prometheus_enabled": False}})


def speed() -> None:
    wl = [{"name": n, "ycsb": n, "regions": 5, "records": 1_000_000} for n in "ABCDEF"]
    sc = scenario_from_dict({"name": "speed", "duration_s": 3600, "initial_nodes": 6, "workloads": wl})
    t0 = time.perf_counter()
    cl = SimCluster(sc)
    cl.run_until(3600)
    print(f"[speed] 1 h at 1 s, 6 workloads, {len(cl.region_ids)} regions, 6 nodes, cluster only: "
          f"{time.perf_counter() - t0:.2f} s wall")


def static_section_3_4() -> None:
    sc = load_scenario("met-elasticity")
    sc = sc.model_copy(update={"initial_nodes": 5, "hardware": {},
                               "workloads": tuple(w.model_copy(update={"stop_s": None}) for w in sc.workloads)})
    st = SimulatorSettings()
    profiles = dict(st.profiles)
    profiles["tuned_homogeneous"] = ProfileSettings(block_cache_share=0.6, memstore_share=0.4, block_kb=64)
    st = st.model_copy(update={"profiles": profiles})
    results = {}
    for layout in ("homogeneous", "heterogeneous"):
        cl = SimCluster(sc, st)
        cl.balancer_on = False
        if layout == "heterogeneous":
            for node, prof in zip(cl.nodes, ("read_write", "read_write", "read", "write", "scan")):
                node.profile = prof
            rw = sorted((r for r in range(len(cl.reg_cls)) if cl.wl_names[cl.reg_cls[r]] in "AF"),
                        key=lambda r: -cl.reg_share[r])
            load, count = [0.0, 0.0], [0, 0]
            for r in rw:
                j = min((0, 1), key=lambda j: (count[j] >= 4, load[j]))
                load[j] += cl.reg_share[r]
                count[j] += 1
                cl.place(r, j)
            home = {"C": 2, "B": 3, "D": 3, "E": 4}
            for r in range(len(cl.reg_cls)):
                w = cl.wl_names[cl.reg_cls[r]]
                if w in home:
                    cl.place(r, home[w])
        else:
            for node in cl.nodes:
                node.profile = "tuned_homogeneous"
        cl.run_until(1800)
        ops = np.array(cl.rec_ops)[120:]
        results[layout] = (ops.sum(axis=1).mean(), dict(zip(cl.wl_names, ops.mean(axis=0))))
    hom, het = results["homogeneous"], results["heterogeneous"]
    print(f"[MET §3.4] homogeneous {hom[0]:,.0f} ops/s, heterogeneous {het[0]:,.0f} ops/s "
          f"({(het[0] / hom[0] - 1) * 100:+.1f} %; paper +35 %); scans/s {hom[1]['E']:,.0f} -> "
          f"{het[1]['E']:,.0f} (paper ~100 -> ~1,350); reads C/s {hom[1]['C']:,.0f} -> {het[1]['C']:,.0f}")


def elasticity() -> dict:
    out = {}
    for policy in ("met", "tiramola", "static"):
        run = build_run(CONFIG, "met-elasticity", policy=policy)
        run.run()
        s = summarize(run, policy)
        out[policy] = s
        p1 = s["phases"][0]
        print(f"[MET §6.4] {policy:9s} total {s['total_ops'] / 1e6:6.2f} M ops, phase 1 (0-33 min) "
              f"{p1['ops'] / 1e6:6.2f} M, node-minutes {s['node_minutes']:5.0f}, max machines "
              f"{s['max_nodes']} (phase 1: {p1['max_vms']}), SLO windows {s['slo_violation_intervals']}, "
              f"wall {s['wall_time_s']:.1f} s")
    m, t = out["met"], out["tiramola"]
    print(f"[MET §6.4] met vs tiramola: phase-1 operations {(m['phases'][0]['ops'] / t['phases'][0]['ops'] - 1) * 100:+.1f} % "
          f"(paper +31 %), total {(m['total_ops'] / t['total_ops'] - 1) * 100:+.1f} %, node-minutes "
          f"{m['node_minutes']:.0f} vs {t['node_minutes']:.0f}")
    return out


def transfer(scenario: str = "met-elasticity", policy: str = "met") -> None:
    res = {}
    for mode in ("incremental", "parallel"):
        run = build_run(CONFIG, scenario, policy=policy, data_transfer=mode)
        run.run()
        res[mode] = summarize(run, policy)
        moves = [e.t for e in run.cluster.events if e.kind in ("transfer", "move")]
        res[mode]["transfer_span_min"] = (max(moves) - min(moves)) / 60 if moves else 0.0
        # the paper's score: 2-s windows over the SLO from the first to the last transfer (S1..Sn)
        lat = np.asarray(run.cluster.rec_latency_ms)
        thr = np.asarray(run.cluster.rec_ops).sum(axis=1)
        a, b = (int(min(moves)), int(max(moves)) + 1) if moves else (0, 0)
        n = (b - a) // 2
        w = thr[a:a + 2 * n].reshape(n, 2)
        mean = (w * lat[a:a + 2 * n].reshape(n, 2)).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-9)
        res[mode]["streaming_windows"] = int((mean > run.scenario.slo_latency_ms).sum())
    i, p = res["incremental"], res["parallel"]
    print(f"[transfer] {scenario} / {policy}: from first copy to last move: incremental "
          f"{i['transfer_span_min']:.1f} min with {i['streaming_windows']} SLO-violating 2-s windows, "
          f"parallel {p['transfer_span_min']:.1f} min with {p['streaming_windows']} (the paper's S1..Sn score)")
    fewer = (1 - i["slo_violation_intervals"] / p["slo_violation_intervals"]) * 100 if p["slo_violation_intervals"] else float("nan")
    print(f"[transfer] {scenario}: incremental: {i['slo_violation_intervals']} SLO windows ({i['slo_violation_magnitude']:,.0f} ms over), "
          f"{i['total_ops'] / 1e6:.2f} M ops; parallel: {p['slo_violation_intervals']} windows "
          f"({p['slo_violation_magnitude']:,.0f} ms over), {p['total_ops'] / 1e6:.2f} M ops; "
          + (f"incremental has {fewer:.0f} % fewer violating windows" if fewer >= 0
             else f"incremental has {-fewer:.0f} % MORE violating windows") + " (paper: 39 % fewer)")


if __name__ == "__main__":
    speed()
    static_section_3_4()
    elasticity()
    transfer()
    # the incremental-elasticity paper's own setting: one node added under a 50 ms SLO
    transfer("incremental-elasticity", "static")
