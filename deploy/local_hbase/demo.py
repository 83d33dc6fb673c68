#!/usr/bin/env python3
"""`make demo-hbase`: metctl reshaping a real HBase cluster on this machine.

1. start the local cluster (ZooKeeper, master, 2 RegionServers; configs/local-hbase.yaml's
   fixed ports) and a gmond reporting this machine's CPU/memory as host "localhost";
2. load MET §3.1's six YCSB tenants (A–F, hotspot keys, one table each) and measure the mix
   with HBase's own placement and the default homogeneous configuration ("before");
3. run metctl's control loop (Ganglia + /jmx monitor, MET decision, journaled executor with the
   local-process and HBase drivers) for a few short decision rounds while the mix keeps running;
4. measure the mix again ("after"), print per-workload throughput, the actions metctl took and
   the availability during them; write report.json and plots to --out; stop everything (by PID).

Also used by bench/bench_hbase_placement.py (same cluster and load, HBase's balancer vs metctl).
"""
from __future__ import annotations

import argparse
import json
import logging
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
if __package__ in (None, ""):  # run as a file: the repository root is not on the path yet
    sys.path.insert(0, str(ROOT))
from deploy.local_hbase import cluster as C  # noqa: E402
from deploy.local_hbase import ycsb as Y  # noqa: E402
from deploy.localproc.cgroups import add_quota_arguments, quota_options  # noqa: E402

from actuator.executor import Executor  # noqa: E402
from actuator.hbase import CommandRestarter, HBaseDriver  # noqa: E402
from actuator.hbase_gateway import HBaseGateway  # noqa: E402
from actuator.journal import Journal  # noqa: E402
from actuator.local import LocalDriver, LocalRestarter  # noqa: E402
from controller.clock import RealClock  # noqa: E402
from controller.config import load_config  # noqa: E402
from controller.loop import ControlLoop, LoopObserver, MemoryStore  # noqa: E402
from monitor.collector import Collector  # noqa: E402
from monitor.datastore_source import DataStoreSource  # noqa: E402
from monitor.ganglia import GangliaSource  # noqa: E402
from monitor.hbase_jmx import HBaseJmxSource  # noqa: E402
from monitor.source import Sample  # noqa: E402

log = logging.getLogger("metctl.demo-hbase")
CONFIG = ROOT / "configs" / "local-hbase.yaml"
BASE_PORT = 16100
GMOND_TCP, GMOND_UDP = 16190, 16191
GMOND_MODULES = "/usr/lib/x86_64-linux-gnu/ganglia"

GMOND_TEMPLATE = ROOT / "deploy" / "ganglia" / "gmond.conf.in"  # shared with tests/fixtures/ganglia.py


class Gmond:
    """This machine's gmond, reporting as host "localhost" (the host part of every local
    RegionServer's id). Stopped by its PID."""

    def __init__(self, workdir: Path):
        conf = workdir / "gmond.conf"
        conf.write_text(GMOND_TEMPLATE.read_text().format(
            tmax=20, metadata_s=10, hostname="localhost", cluster="local-hbase", owner="metctl",
            udp=GMOND_UDP, tcp=GMOND_TCP, mod=GMOND_MODULES, every_s=2, threshold_s=4))
        self.log = open(workdir / "logs" / "gmond.log", "ab")
        self.proc = subprocess.Popen(["gmond", "-c", str(conf), "-f"], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class LiveJmxSource:
    """HBaseJmxSource over every RegionServer running right now, including the ones metctl
    launched (their info ports are recorded in the cluster's state file)."""

    def __init__(self, cluster: Any, settings: Any, admin: Any):
        self.cluster, self.settings, self.admin = cluster, settings, admin

    def sample(self) -> Sample:
        urls = [p.info_url for p in self.cluster.region_servers() if self.cluster.running(p.name)]
        # the profiles each server runs come from DataStoreSource(driver), next to this source
        return HBaseJmxSource(self.settings, urls=urls, admin=self.admin).sample()


class Recorder(LoopObserver):
    """What the loop did: decisions, holds, executor events (for the report)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.plans: list[dict[str, Any]] = []

    def on_decision(self, now, plan, plan_id, snapshot) -> None:  # type: ignore[override]
        self.plans.append({"at": now, "plan_id": plan_id, "reason": plan.reason,
                           "sizing": asdict(plan.sizing),
                           "actions": [a.to_dict() for a in plan.actions],
                           "summary": asdict(plan.summary)})
        log.info("decision: %s (%d actions)", plan.reason, len(plan.actions))

    def on_hold(self, now, cause, words) -> None:  # type: ignore[override]
        self.events.append({"at": now, "hold": str(getattr(cause, "value", cause)), "why": words})
        log.info("hold: %s", words)

    def on_action(self, now, event, plan_id, status) -> None:  # type: ignore[override]
        self.events.append({"at": now, "event": event, "plan_id": plan_id})


class RssWatch:
    """Peak resident memory of the cluster's processes (and metctl's gateway), sampled."""

    def __init__(self, cluster: Any, extra_pids: Iterable[int] = ()):
        self.cluster, self.extra = cluster, list(extra_pids)
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.wait(2.0):
            total = sum(self.cluster.rss_mb().values())
            for pid in self.extra:
                try:
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) / 1024
                except OSError:
                    pass
            self.peak_mb = max(self.peak_mb, total)

    def stop(self) -> float:
        self._stop.set()
        self._t.join(timeout=5)
        return self.peak_mb


def for_workdir(config: Any, workdir: Path) -> Any:
    """configs/local-hbase.yaml names out/local-hbase; another --workdir gets its own node
    directory, journal and decision memory (the node command finds the workdir as {node_dir}/../..)."""
    if workdir.resolve() == (ROOT / "out" / "local-hbase").resolve():
        return config
    local = config.infrastructure.local.model_copy(update={"state_dir": str(workdir / "nodes")})
    return config.model_copy(update={
        "infrastructure": config.infrastructure.model_copy(update={"local": local}),
        "executor": config.executor.model_copy(update={"journal_path": str(workdir / "journal.sqlite")}),
        "loop": config.loop.model_copy(update={"memory_path": str(workdir / "memory.json")}),
    })


def hbase_balance(gw: HBaseGateway, cluster: Any, timeout_s: float = 120) -> None:
    """One run of HBase's balancer (switched on for it, off again after), until no region is
    in transition."""
    admin = gw.admin
    admin.balancerSwitch(True, True)
    try:
        admin.balance()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and cluster.master_status()["ritCount"] != 0:
            time.sleep(1)
    finally:
        admin.balancerSwitch(False, True)


def mix_settings(records: int) -> dict[str, dict[str, Any]]:
    """MET's per-workload client settings, scaled: D (a fast-growing log, loaded with a tenth
    of the records) is throttled; the others run free."""
    return {"D": {"target_ops": 150, "records": max(1, records // 10)}}


def measured(reps: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per workload over the repetitions: median throughput, every run's, and success."""
    out = {}
    for w in reps[0]:
        runs = [rep[w].throughput for rep in reps]
        out[w] = {"throughput": statistics.median(runs), "runs": runs, "min": min(runs), "max": max(runs),
                  "ok": min(rep[w].success_fraction for rep in reps)}
    return out


def verdict(before: list[float], after: list[float]) -> str:
    """helped / hurt when every run after is above / below every run before; otherwise the
    runs overlap and the difference is within the spread."""
    if min(after) > max(before):
        return "helped"
    if max(after) < min(before):
        return "hurt"
    return "no difference beyond the spread"


def run_mix(cluster: Any, seconds: float, records: int, threads: int = 1) -> dict[str, Any]:
    return Y.run_many(cluster, "run", list(Y.WORKLOADS), mix_settings(records), records=records,
                      threads=threads, seconds=seconds)


def open_driver(cluster: Any, config: Any) -> tuple[HBaseGateway, HBaseDriver]:
    gw = HBaseGateway(C.home_for(cluster.version) / "lib", cluster.client_settings(),
                      conf_dir=cluster.client_conf_dir(), log_file=cluster.workdir / "logs" / "gateway.log",
                      rpc_timeout_ms=int(config.datastore.hbase.rpc_timeout_s * 1000))
    gw.open()
    restarter = CommandRestarter([sys.executable, str(HERE / "cluster.py"), "--workdir", str(cluster.workdir),
                                  "--base-port", str(BASE_PORT), "restart-rs", "{server}", "--settings", "{settings}"])
    return gw, HBaseDriver(gw, restarter=restarter, host_format="{host}:{port}")


def metctl_loop(cluster: Any, config: Any, driver: HBaseDriver, recorder: Recorder) -> tuple[ControlLoop, Executor]:
    ganglia = GangliaSource(config.monitor)
    jmx = LiveJmxSource(cluster, config.monitor, driver)
    # DataStoreSource: which servers are up and the profile each runs (from its /conf), so
    # decisions see what is configured and do not re-plan restarts already done
    collector = Collector([ganglia, jmx, DataStoreSource(driver)], config.monitor)
    infra = LocalDriver(config.infrastructure.local, config.cluster)
    # RegionServers metctl launched restart through the local driver, which records their new
    # PID (cluster.py restart-rs would leave the driver a dead PID: a "failed" node)
    driver.restarter = LocalRestarter(infra, fallback=driver.restarter, host_format=driver.host_format)
    executor = Executor(infra, driver, config.executor, time.time, config.cluster,
                        Journal(config.executor.journal_path))
    loop = ControlLoop(collector, executor, config.policy, config.loop, RealClock(),
                       memory=MemoryStore(config.loop.memory_path), observers=[recorder])
    return loop, executor


def plots(report: dict[str, Any], out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(report["before"])
    fig, ax = plt.subplots(figsize=(7, 4))
    xs = range(len(names))
    for side, dx, label in (("before", -0.2, "before (HBase placement, default config)"),
                            ("after", 0.2, "after metctl (placement + profiles)")):
        med = [report[side][w]["throughput"] for w in names]
        err = [[m - report[side][w]["min"] for w, m in zip(names, med)],
               [report[side][w]["max"] - m for w, m in zip(names, med)]]
        ax.bar([x + dx for x in xs], med, 0.4, yerr=err, capsize=3, label=label)
    ax.set_xticks(list(xs), [f"Workload{w}" for w in names])
    ax.set_ylabel("ops/s (median; bars: min–max of the runs)")
    ax.set_title(f"YCSB tenants, {len(report['totals_before'])} runs each side: metctl {report['verdict']}",
                 fontsize=10)
    ax.legend()
    fig.tight_layout()
    bars = out / "throughput.png"
    fig.savefig(bars, dpi=110)
    plt.close(fig)
    files = [str(bars)]
    tl = report.get("during", {})
    if tl:
        fig, ax = plt.subplots(figsize=(7, 4))
        for w, series in sorted(tl.items()):
            if series:
                # YCSB's one-second "current ops/sec" is jumpy: a 5-s moving mean
                vals = [v for _, v in series]
                mean = [sum(vals[max(0, i - 4):i + 1]) / len(vals[max(0, i - 4):i + 1]) for i in range(len(vals))]
                ax.plot([t for t, _ in series], mean, label=f"Workload{w}")
        ax.set_xlabel("seconds since metctl started")
        ax.set_ylabel("ops/s")
        ax.set_title("Throughput while metctl acts")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / "during.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(str(path))
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="out/local-hbase")
    ap.add_argument("--out", default="out/demo-hbase")
    add_quota_arguments(ap)
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--mix-seconds", type=float, default=40)
    ap.add_argument("--repetitions", type=int, default=3,
                    help="measured runs of the mix before and after (the spread decides the verdict)")
    ap.add_argument("--rounds", type=int, default=2, help="metctl decision rounds")
    ap.add_argument("--max-loop-s", type=float, default=420, help="stop metctl after this long")
    ap.add_argument("--rs", type=int, default=2, help="RegionServers to start with (max_nodes is 3)")
    ap.add_argument("--warmup-seconds", type=float, default=15,
                    help="an unmeasured mix first, so 'before' is not a cold start")
    ap.add_argument("--keep", action="store_true", help="leave the cluster running")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    t_demo = time.monotonic()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    workdir = Path(args.workdir)
    config = for_workdir(load_config(CONFIG), workdir)
    for stale in (Path(config.executor.journal_path), Path(config.loop.memory_path)):
        stale.unlink(missing_ok=True)  # a new demo: no plan or memory from an earlier one
    cluster = C.LocalHBase(workdir, base_port=BASE_PORT)  # to stop an earlier demo's, as it was made
    if workdir.exists():
        # a fresh cluster every time: an earlier run's profiles (conf overrides), tables and
        # metctl-launched nodes must not leak into the baseline
        cluster.stop()
        shutil.rmtree(workdir)
    cluster = C.LocalHBase(workdir, base_port=BASE_PORT, **quota_options(args))
    gmond = gw = None
    report: dict[str, Any] = {}
    try:
        t0 = time.monotonic()
        C.fetch()
        Y.build()
        report["fetch_build_s"] = round(time.monotonic() - t0, 1)
        t0 = time.monotonic()
        cluster.start(rs=args.rs)
        report["start_to_ready_s"] = round(time.monotonic() - t0, 1)
        (workdir / "logs").mkdir(exist_ok=True)
        gmond = Gmond(workdir)
        gw, driver = open_driver(cluster, config)
        rss = RssWatch(cluster, [gw.pid or 0])
        driver.set_balancer(False)
        log.info("loading the six tenants (%d records each, D %d)", args.records, args.records // 10)
        t0 = time.monotonic()
        Y.load(cluster, gw, args.records)
        report["load_s"] = round(time.monotonic() - t0, 1)

        if args.warmup_seconds > 0:
            log.info("warm-up: the mix for %.0f s (not measured)", args.warmup_seconds)
            run_mix(cluster, args.warmup_seconds, args.records)
        # the baseline: HBase's own (stochastic) balancer places the regions, every
        # RegionServer runs the default homogeneous configuration
        t0 = time.monotonic()
        hbase_balance(gw, cluster)
        report["balancer_s"] = round(time.monotonic() - t0, 1)
        log.info("before: the mix %d x %.0f s on HBase's balancer placement, default configuration",
                 args.repetitions, args.mix_seconds)
        before = [run_mix(cluster, args.mix_seconds, args.records) for _ in range(args.repetitions)]
        report["before"] = measured(before)
        print(Y.report(before[-1]))

        log.info("metctl: %d decision rounds while the mix runs", args.rounds)
        recorder = Recorder()
        loop, executor = metctl_loop(cluster, config, driver, recorder)
        during = {w: Y.start(cluster, w, "run", **{"records": args.records, "threads": 1,
                                                   "seconds": args.max_loop_s,
                                                   **mix_settings(args.records).get(w, {})})
                  for w in Y.WORKLOADS}
        t_loop = time.monotonic()
        deadline = time.time() + args.max_loop_s - 10
        loop.run(until=deadline, rounds=args.rounds)
        report["metctl_s"] = round(time.monotonic() - t_loop, 1)
        during_results = {w: Y.stop(p, t, w) for w, (p, t) in during.items()}
        report["during"] = {w: r.timeline for w, r in during_results.items()}
        ops = sum(r.ops for r in during_results.values())
        report["availability_during"] = {
            "ops": ops, "ok": sum(r.ok for r in during_results.values()),
            "success_fraction": sum(r.ok for r in during_results.values()) / ops if ops else None}
        report["plans"] = recorder.plans
        report["holds"] = [e for e in recorder.events if "hold" in e]
        report["executor"] = executor.status().to_dict()

        if args.warmup_seconds > 0:
            # restarted RegionServers start with cold JVMs and block caches: settle like "before"
            log.info("settle: the mix for %.0f s (not measured)", args.warmup_seconds)
            run_mix(cluster, args.warmup_seconds, args.records)
        log.info("after: the mix %d x %.0f s on metctl's placement and profiles", args.repetitions,
                 args.mix_seconds)
        after = [run_mix(cluster, args.mix_seconds, args.records) for _ in range(args.repetitions)]
        report["after"] = measured(after)
        totals_b = [sum(r.throughput for r in rep.values()) for rep in before]
        totals_a = [sum(r.throughput for r in rep.values()) for rep in after]
        total_b, total_a = statistics.median(totals_b), statistics.median(totals_a)
        report["total_before"], report["total_after"] = total_b, total_a
        report["totals_before"], report["totals_after"] = totals_b, totals_a
        report["ratio"] = round(total_a / total_b, 3) if total_b else None
        report["verdict"] = verdict(totals_b, totals_a)
        report["verdict_by_workload"] = {w: verdict(report["before"][w]["runs"], report["after"][w]["runs"])
                                         for w in report["before"]}
        report["servers"] = [asdict(s) for s in driver.servers()]
        report["peak_rss_mb"] = round(rss.stop(), 0)
        report["demo_s"] = round(time.monotonic() - t_demo, 1)
        (out / "report.json").write_text(json.dumps(report, indent=2, default=str))
        report["plots"] = plots(report, out)
        print_summary(report)
    finally:
        if gw is not None:
            try:
                gw.close()
            except Exception:  # noqa: BLE001
                pass
        if gmond is not None:
            gmond.stop()
        if not args.keep:
            # metctl-launched RegionServers are the local driver's: stop them the same way
            infra = LocalDriver(config.infrastructure.local, config.cluster)
            for node in infra.nodes():
                infra.terminate(node.instance_id)
                infra.wait_gone(node.instance_id, timeout_s=60)
            cluster.stop()
    return 0


def print_summary(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="YCSB tenants: before / after metctl (median, min–max of the runs)")
    for col in ("workload", "before ops/s", "after ops/s", "change", "verdict"):
        t.add_column(col, justify="right")
    for w in sorted(report["before"]):
        b, a = report["before"][w], report["after"][w]
        t.add_row(w, f"{b['throughput']:,.0f} ({b['min']:,.0f}–{b['max']:,.0f})",
                  f"{a['throughput']:,.0f} ({a['min']:,.0f}–{a['max']:,.0f})",
                  f"{(a['throughput'] / b['throughput'] - 1) * 100:+.0f} %" if b["throughput"] else "-",
                  report["verdict_by_workload"][w])
    tb, ta = report["totals_before"], report["totals_after"]
    t.add_row("total", f"{report['total_before']:,.0f} ({min(tb):,.0f}–{max(tb):,.0f})",
              f"{report['total_after']:,.0f} ({min(ta):,.0f}–{max(ta):,.0f})",
              f"{(report['ratio'] - 1) * 100:+.0f} %" if report["ratio"] else "-", report["verdict"])
    console = Console()
    console.print(t)
    console.print(f"[bold]metctl {report['verdict']}[/bold]: {len(tb)} runs of the mix before and {len(ta)} after; "
                  + ("every run after is above every run before" if report["verdict"] == "helped" else
                     "every run after is below every run before" if report["verdict"] == "hurt" else
                     "the runs before and after overlap"))
    for plan in report["plans"]:
        console.print(f"plan {plan['plan_id']}: {plan['reason']}")
        for a in plan["actions"]:
            console.print(f"  {a['op']:11} {a.get('partition') or a.get('node') or ''} "
                          f"{('-> ' + a['target']) if a.get('target') else ''} {a.get('profile') or ''}")
    console.print(f"executor: {report['executor']['state']} ({report['executor'].get('reason') or 'ok'})")
    console.print(f"cluster ready in {report['start_to_ready_s']} s · metctl ran {report['metctl_s']} s · "
                  f"peak RSS {report['peak_rss_mb']:.0f} MB · whole demo {report['demo_s']} s · "
                  f"plots: {', '.join(report['plots'])}")


if __name__ == "__main__":
    sys.exit(main())
