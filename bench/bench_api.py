"""What the HTTP API costs: `GET /v1/status` latency with 100 concurrent clients while the control
loop runs, and how much slower the loop runs beside the API (idle and under that load). Two
loads: "at once" — 100 clients call at the same instant, twice a second (the test's 100
concurrent calls, repeated); "back to back" — 100 clients call again as soon as answered
(saturation).

The loop is MET on the simulated cluster (met-elasticity scenario, simulated time as fast as it
goes), wired exactly as `metctl run` wires it (ControlPlane: gate, live status, API server in
its own thread). The clients run in a separate process (100 threads, one keep-alive session
each), so their own CPU is not the daemon's GIL. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_api.py [--clients 100] [--sim-minutes 120] [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CLIENT = r"""
import json, sys, threading, time, requests
url, clients, stop_file, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
lat, errors, lock = [], [0], threading.Lock()
barrier = threading.Barrier(clients)
import os
def worker():
    s = requests.Session()
    mine = []
    while not os.path.exists(stop_file):
        if mode == "burst":  # every client calls at the same instant, then all wait 0.5 s
            try:
                barrier.wait(timeout=5)
            except threading.BrokenBarrierError:
                break
        t0 = time.perf_counter()
        try:
            r = s.get(url, timeout=10)
            ok = r.status_code == 200
        except requests.RequestException:
            ok = False
        dt = time.perf_counter() - t0
        if ok:
            mine.append(dt)
        else:
            with lock:
                errors[0] += 1
        if mode == "burst":
            time.sleep(0.5)
    with lock:
        lat.extend(mine)
ts = [threading.Thread(target=worker) for _ in range(clients)]
[t.start() for t in ts]
print("ready", flush=True)
[t.join() for t in ts]
print(json.dumps({"latencies": lat, "errors": errors[0]}))
"""


MAX_RPS: list[float] = []


def build(api: bool, workdir: Path):
    from controller.config import default_config
    from controller.control import ControlSettings
    from controller.control_plane import ControlPlane
    from controller.harness import build_run

    config = default_config().model_copy(update={"control": ControlSettings(
        api_address="127.0.0.1:0" if api else None, token_file=str(workdir / "token"),
        state_path=str(workdir / "control.json"),
        **({"max_requests_per_s": MAX_RPS[0]} if MAX_RPS else {}))})
    run = build_run(config, "met-elasticity.yaml", seed=1)
    plane = ControlPlane(config)
    plane.attach(run.loop)
    address = plane.start()
    return run, plane, address


def loop_seconds(api: bool, load: int, sim_minutes: float, workdir: Path,
                 mode: str = "flood") -> dict:
    """Wall seconds for the loop to cover `sim_minutes` (and iterations), with the API off,
    idle, or under `load` concurrent status clients; the clients' latencies."""
    run, plane, address = build(api, workdir)
    client = None
    stop = workdir / f"stop-{time.monotonic_ns()}"
    try:
        if load and address:
            url = f"http://{address[0]}:{address[1]}/v1/status"
            client = subprocess.Popen([sys.executable, "-c", CLIENT, url, str(load), str(stop), mode],
                                      stdout=subprocess.PIPE, text=True)
            assert client.stdout.readline().strip() == "ready"
            time.sleep(1.0)  # let every client connect before the loop starts
        iterations = [0]
        server = plane.server
        api0 = thread_cpu_s(server.native_id) if server else 0.0
        t0 = time.perf_counter()
        cpu0 = time.thread_time()
        run.loop.run(until=sim_minutes * 60,
                     on_iteration=lambda now: iterations.__setitem__(0, iterations[0] + 1))
        wall = time.perf_counter() - t0
        cpu = time.thread_time() - cpu0
        api_cpu = (thread_cpu_s(server.native_id) - api0) if server else 0.0
        result = {"wall_s": wall, "cpu_s": cpu, "api_cpu_s": api_cpu,
                  "iterations": iterations[0], "decisions": run.loop.counters.decisions}
        if client is not None:
            stop.write_text("")
            out, _ = client.communicate(timeout=60)
            data = json.loads(out.strip().splitlines()[-1])
            lat = sorted(data["latencies"])
            result.update(requests=len(lat), errors=data["errors"],
                          p50_ms=1000 * lat[len(lat) // 2] if lat else float("nan"),
                          p99_ms=1000 * lat[int(len(lat) * 0.99)] if lat else float("nan"),
                          rps=len(lat) / wall)
        return result
    finally:
        if client is not None and client.poll() is None:
            stop.write_text("")
            client.kill()
        plane.close()


def thread_cpu_s(tid: int | None) -> float:
    """User + system CPU seconds of one thread of this process (Linux /proc)."""
    if tid is None:
        return 0.0
    import os
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--sim-minutes", type=float, default=120)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-rps", type=float, default=None,
                    help="control.max_requests_per_s (default: the config's)")
    args = ap.parse_args()
    if args.max_rps:
        MAX_RPS.append(args.max_rps)
    import logging
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        n = args.clients
        cases = [("API off", False, 0, ""), ("API idle", True, 0, ""),
                 (f"{n} at once, 2/s", True, n, "burst"),
                 (f"{n} back to back", True, n, "flood")]
        results: dict[str, list[dict]] = {name: [] for name, *_ in cases}
        for _ in range(args.repeat):  # interleaved, so drift on a shared machine hits all
            for name, api, load, mode in cases:
                results[name].append(loop_seconds(api, load, args.sim_minutes, work, mode))
    base = statistics.median(r["wall_s"] for r in results["API off"])
    from controller.control import ControlSettings
    rps_cap = args.max_rps or ControlSettings().max_requests_per_s
    print(f"loop over {args.sim_minutes:g} simulated minutes (MET, met-elasticity), "
          f"median of {args.repeat}; API capped at {rps_cap:g} requests/s:")
    for name, rs in results.items():
        wall = statistics.median(r["wall_s"] for r in rs)
        its = statistics.median(r["iterations"] for r in rs)
        cpu = statistics.median(r["cpu_s"] for r in rs)
        api = statistics.median(r["api_cpu_s"] for r in rs)
        line = (f"  {name:<20} {wall:6.2f} s wall ({(wall / base - 1) * 100:+5.1f} % vs off), "
                f"{1000 * wall / max(its, 1):.2f} ms/iteration; loop thread CPU {cpu:.2f} s, "
                f"API thread CPU {api:.2f} s")
        if "p50_ms" in rs[0]:
            p50 = statistics.median(r["p50_ms"] for r in rs)
            p99 = statistics.median(r["p99_ms"] for r in rs)
            rps = statistics.median(r["rps"] for r in rs)
            errs = sum(r["errors"] for r in rs)
            per = statistics.median(1000 * r["api_cpu_s"] / max(r["requests"], 1) for r in rs)
            line += (f"\n  {'':<20} GET /v1/status: p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
                     f"{rps:.0f} req/s, {errs} errors, {per:.2f} ms API CPU a request")
        print(line)


if __name__ == "__main__":
    main()
