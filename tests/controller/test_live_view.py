"""`metctl run`'s live view as an operator sees it: in a real terminal (tmux, read back with
capture-pane) and piped into another program (JSON log lines)."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml


ROOT = Path(__file__).resolve().parents[2]


def sim_config(tmp_path: Path, *, duration_s: int = 600, run_speed: float = 60.0) -> Path:
    from tests.fixtures.simcluster import small_scenario_dict

    scen = tmp_path / "small.yaml"
    scen.write_text(yaml.safe_dump(small_scenario_dict(duration_s=duration_s)))
    cfg = tmp_path / "metctl.yaml"
    cfg.write_text(yaml.safe_dump({
        "cluster": "demo", "infrastructure": {"driver": "sim"}, "datastore": {"driver": "sim"},
        "simulator": {"scenario": str(scen), "run_speed": run_speed},
        "loop": {"memory_path": None}, "telemetry": {"prometheus_enabled": False}}))
    return cfg


def metctl_command(*args: str) -> str:
    # the terminal's own size, not one pytest's environment fixes (COLUMNS, LINES)
    env = f"-u COLUMNS -u LINES PYTHONPATH={shlex.quote(str(ROOT))}"
    return f"env {env} {shlex.quote(sys.executable)} -m controller.cli " + " ".join(map(shlex.quote, args))


class Tmux:
    """A private tmux server (its own socket) with one window of the given size."""

    def __init__(self, width: int, height: int):
        self.socket = f"metctl-test-{uuid.uuid4().hex[:8]}"
        self.size = (width, height)

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True, capture_output=True,
                              text=True, timeout=30).stdout

    def start(self, command: str, cwd: Path) -> None:
        w, h = self.size
        self("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(w), "-y", str(h), "-c", str(cwd),
             f"{command}; echo METCTL-EXIT $?; sleep 600")
        self("set-option", "-t", "t", "history-limit", "50000")

    def everything(self) -> str:
        """The scrollback and the screen, as text."""
        return self("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "t")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)


@pytest.mark.parametrize("width,height", [(200, 50), (120, 40)])
def test_live_view_in_tmux_leaves_no_stale_copies_and_shows_verdicts(tmp_path, width, height):
    """Issue 24 item 3: in tmux (200x50, 120x40) every refresh left a stale copy of the view's
    title and table in the scrollback, and there was no verdict column. After a whole run the
    scrollback holds the view once (its last frame), with a verdict for each node."""
    cfg = sim_config(tmp_path)  # 10 simulated minutes at 60x: about 10 s
    tmux = Tmux(width, height)
    tmux.start(metctl_command("run", "--config", str(cfg), "--api", "off", "--out", str(tmp_path / "out")),
               tmp_path)
    try:
        deadline = time.monotonic() + 180
        seen_mid_run = None
        while "METCTL-EXIT" not in (text := tmux.everything()):
            if seen_mid_run is None and "simulated 5." in text:
                seen_mid_run = text
            assert time.monotonic() < deadline, text[-3000:]
            time.sleep(0.5)
    finally:
        tmux.kill()
    assert "METCTL-EXIT 0" in text, text[-3000:]
    titles = [ln for ln in text.splitlines() if "small — simulated" in ln]
    assert len(titles) == 1 and "simulated 10.0 / 10 min" in titles[0], "\n".join(titles)
    # the table's header row (a plan's action line says node=… profile=… too)
    header = next(ln for ln in text.splitlines() if {"node", "profile"} <= set(ln.split()))
    assert "verdict" in header
    # its table rows, not a decision's log line or the last hold's words that name it
    rows = [ln for ln in text.splitlines() if "│ rs1.sim" in ln and "%" in ln]
    assert rows and any(v in rows[-1] for v in ("healthy", "overloaded", "underloaded")), rows
    if seen_mid_run is not None:  # mid-run too, one view on the screen and in the scrollback
        assert sum("small — simulated" in ln for ln in seen_mid_run.splitlines()) == 1


def test_piped_output_is_compact_json_lines_without_repetition(tmp_path):
    """Issue 24 item 3: piped (`make run | tee`), each decision was a 1.5 KB JSON line holding
    its reason three times. Each line is one JSON object saying each thing once."""
    cfg = sim_config(tmp_path, run_speed=0)
    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(cfg),
                           "--api", "off", "--out", str(tmp_path / "out")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(ln) for ln in done.stderr.splitlines()]
    rounds = [ln for ln in lines if ln.get("event") in ("decision", "hold")]
    assert rounds
    for line in rounds:
        texts = [v for v in line.values() if isinstance(v, str) and len(v) >= 20]
        for i, a in enumerate(texts):
            for b in texts[i + 1:]:
                assert a not in b and b not in a, line
    # one line per round: the policy's hold is one hold line, not a decision line and a hold line
    assert len(rounds) == json.loads((tmp_path / "out" / "summary.json").read_text())["decisions"]
