"""Screenshots of the console on `make run`'s demo for docs/console.md: runs the demo
(configs/demo.yaml, at its own speed) with the API on a free port, opens the console in Debian's
headless Chromium with the demo's token, and saves the page while the first scale-out runs,
once the hot region is split and after the cluster scaled back in.

    .venv/bin/python deploy/console/screenshots.py [--out docs/img] [--speed 30]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from common.waiting import poll  # noqa: E402
from deploy.console import browser  # noqa: E402


def serving(page) -> int:
    return page.eval_on_selector_all(
        "#nodes tbody tr", "rows => rows.filter(r => r.querySelector('.state.serving')).length")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    ap.add_argument("--speed", type=float, default=None, help="simulator.run_speed (demo's own)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="metctl-shots-"))
    config = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    config["control"]["api_address"] = "127.0.0.1:0"
    config["control"]["token_file"] = str(work / "token")
    if args.speed:
        config["simulator"]["run_speed"] = args.speed
    (work / "demo.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config",
                             str(work / "demo.yaml"), "--out", str(work / "out")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        url = re.match(r"console: (\S+) ", proc.stdout.readline()).group(1)
        print(f"demo console at {url}")
        with sync_playwright() as p:
            b = browser.launch(p)
            page = b.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            page.fill("#token", (work / "token").read_text().strip())
            page.click("#token-form button[type=submit]")
            start = poll(lambda: serving(page), 60, "the demo's nodes")
            poll(lambda: "plan " in page.inner_text("#plan") and "launch" in page.inner_text("#plan"),
                 300, "the first scale-out in flight")
            time.sleep(1.0)
            page.screenshot(path=str(args.out / "console-scale-out.png"))
            print(f"{time.monotonic() - t0:.0f} s: scale-out in flight -> console-scale-out.png")
            peak = poll(lambda: (n := serving(page)) > start and n, 300, "the scale-out done")
            poll(lambda: "hot partition" in page.inner_text("#history tbody"), 300, "the split")
            time.sleep(1.0)
            page.screenshot(path=str(args.out / "console-split.png"))
            print(f"{time.monotonic() - t0:.0f} s: hot region split -> console-split.png")
            # a snapshot after the scale-in: fewer nodes listed at all, not just one draining
            poll(lambda: len(page.query_selector_all("#nodes tbody tr")) < peak, 300,
                 "the scale-in")
            time.sleep(1.0)
            page.screenshot(path=str(args.out / "console-after-scale-in.png"), full_page=True)
            print(f"{time.monotonic() - t0:.0f} s: scaled back in -> console-after-scale-in.png")
            b.close()
    finally:
        proc.kill()
        proc.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
