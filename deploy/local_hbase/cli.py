"""The local HBase's command line (`python deploy/local_hbase/cluster.py …`, usage in that
file's docstring): fetch, start, add/stop/start/restart/exec a RegionServer, status, stop."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from deploy.local_hbase import cluster
from deploy.local_hbase.cluster import HBASE_VERSION, PROFILE_KEY, ClusterError, LocalHBase, fetch
from deploy.localproc.cgroups import BadSlice, add_quota_arguments, quota_options


def load_settings(path: str | None) -> dict[str, Any]:
    """hbase-site.xml overrides from a JSON file: a flat {key: value} map, or metctl's node
    document ({"cluster", "profile", "settings": {…}}, what actuator/local.py writes), whose
    profile name is kept as metctl.profile so the data-store driver can read it back."""
    if not path:
        return {}
    doc = json.loads(Path(path).read_text())
    if "profile" in doc and isinstance(doc.get("settings"), dict):
        # the node document carries the profile's YAML; its HBase form comes from profiles/
        try:
            from profiles import render_hbase_settings
            settings = dict(render_hbase_settings(doc["profile"]))
        except ImportError:  # not run from metctl's environment: take HBase-looking keys as given
            settings = {k: v for k, v in doc["settings"].items() if "." in k}
        return {**settings, PROFILE_KEY: doc["profile"]}
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(cluster.__doc__ or "").split("\n\n")[0])
    ap.add_argument("--workdir", default=os.environ.get("METCTL_HBASE_WORKDIR", "out/local-hbase"))
    ap.add_argument("--version", default=HBASE_VERSION)
    ap.add_argument("--rs-heap-mb", type=int, default=384)
    add_quota_arguments(ap)  # start: rs, master, zk, ycsb, cluster, rs.<profile>
    ap.add_argument("--base-port", type=int, default=None,
                    help="fixed ports: ZooKeeper here, master +1/+2, rsN +10N/+10N+1 (default: random free ports)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch")
    s = sub.add_parser("start")
    s.add_argument("--rs", type=int, default=2)
    a = sub.add_parser("add-rs")
    a.add_argument("--settings", help="JSON file of hbase-site.xml overrides (a profile)")
    for name in ("stop-rs", "start-rs"):
        sub.add_parser(name).add_argument("name")
    e = sub.add_parser("exec-rs")
    e.add_argument("name")
    e.add_argument("--port", type=int)
    e.add_argument("--info-port", type=int)
    e.add_argument("--settings", help="JSON file of hbase-site.xml overrides or a metctl node document")
    r = sub.add_parser("restart-rs")
    r.add_argument("name", help="rs<N> or the server id host,port")
    r.add_argument("--settings", help="JSON file of hbase-site.xml overrides (a profile)")
    sub.add_parser("status")
    sub.add_parser("stop")
    args = ap.parse_args(argv)
    try:
        c = LocalHBase(args.workdir, args.version, rs_heap_mb=args.rs_heap_mb, base_port=args.base_port,
                       **quota_options(args))
        if args.cmd == "fetch":
            t0 = time.monotonic()
            home = fetch(args.version)
            print(f"{home} ({time.monotonic() - t0:.1f} s)")
        elif args.cmd == "start":
            t0 = time.monotonic()
            c.start(args.rs)
            print(f"ready in {time.monotonic() - t0:.1f} s; ZooKeeper 127.0.0.1:{c.zk_port}, master {c.master_url}")
        elif args.cmd == "add-rs":
            print(c.add_rs(load_settings(args.settings)).name)
        elif args.cmd == "stop-rs":
            c.stop_rs(args.name)
        elif args.cmd == "start-rs":
            c.start_rs(args.name)
        elif args.cmd == "restart-rs":
            name = args.name if args.name in c.procs() else c.rs_by_server_id(args.name).name
            c.restart_rs(name, load_settings(args.settings))
        elif args.cmd == "exec-rs":
            c.exec_rs(args.name, args.port, args.info_port,
                      load_settings(args.settings) if args.settings else None)
        elif args.cmd == "status":
            print(json.dumps({**c.status(), "rss_mb": c.rss_mb()}, indent=2))
        elif args.cmd == "stop":
            c.stop()
    except ClusterError as e:
        print(f"local-hbase: {e}", file=sys.stderr)
        return 2 if isinstance(e, BadSlice) else 1
    return 0

