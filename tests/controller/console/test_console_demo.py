"""`make run`'s demo (configs/demo.yaml) acts, and the console shows it: the first line printed
is the console's address; in the browser, without a token (the demo allows a read-only view),
the cluster grows, a hot region is split, the cluster shrinks, and the history says why.
Simulated time runs faster here than in the demo (run_speed 120 instead of 30) so the day
passes in seconds."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.fixtures.poll import poll

pytestmark = pytest.mark.integration
DEMO = Path(__file__).resolve().parents[3] / "configs" / "demo.yaml"


def serving(page) -> int:
    return page.eval_on_selector_all(
        "#nodes tbody tr", "rows => rows.filter(r => r.querySelector('.state.serving')).length")


def test_the_demo_scales_out_splits_and_scales_in_and_the_console_shows_it(tmp_path, console_page):
    config = yaml.safe_load(DEMO.read_text())
    config["simulator"]["run_speed"] = 120
    config["control"]["api_address"] = "127.0.0.1:0"
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(config))
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config",
                             str(tmp_path / "demo.yaml"), "--out", str(tmp_path / "out")],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    try:
        first = proc.stdout.readline()
        m = re.match(r"console: (http://127\.0\.0\.1:\d+/) ", first)
        assert m, f"the first line is not the console's address: {first!r}"
        p = console_page
        p.page.goto(m.group(1))
        start = poll(lambda: serving(p.page), 60, "the demo's nodes on the page")
        assert "read-only view" in p.page.inner_text("#token-state")
        poll(lambda: serving(p.page) > start, 120, "the cluster to scale out on the page")
        # it may grow in steps (a plan extended as the ramp rises): back in is below the most
        most = [start]

        def shrunk() -> bool:
            n = serving(p.page)
            most[0] = max(most[0], n)
            return n < most[0]

        poll(shrunk, 120, "the cluster to scale back in on the page")
        # the campaign's hot region: a rebalance that splits it (issue 29 item 4), before or
        # after the scale-in
        split = r"rebalance.*hot partition.*split \d+ hot partition"
        history = poll(lambda: (h := p.page.inner_text("#history tbody")) and re.search(split, h) and h,
                       120, "the hot region's split on the page")
        assert "scale_out" in history and "scale_in" in history, history
        # asked every 30 s, the policy's holds for one cause in a row are one row with a count
        assert re.search(r"held \u00d7\d+ since \d\d:\d\d:\d\d", history), history
        assert not p.problems(), p.problems()
    finally:
        proc.kill()
        proc.wait(10)
