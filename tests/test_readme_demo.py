"""The README's account of `make run` is what `make run` does: the cluster it shows, how long it
runs, that it ends by itself (and on Ctrl-C) with its report where the README says, and what the
default policy does on the demo's load."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import yaml

from controller.cli import main

ROOT = Path(__file__).resolve().parents[1]
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def what_you_see() -> str:
    text = (ROOT / "README.md").read_text()
    para = text[text.index("**What you see.**"):text.index("## Point metctl at your cluster")]
    return " ".join(para.split())


def test_readme_says_what_make_run_does(tmp_path, monkeypatch, capsys):
    """Issue 24 item 1 (and 14's "five-node" where the demo has six): the README said Ctrl-C
    stops `make run`, which stopped by itself after ~60 s, and described a cluster and actions
    the demo did not have. The paragraph is checked against the demo's config and a run of it."""
    demo = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    scenario = yaml.safe_load((ROOT / "configs" / "scenarios" / demo["simulator"]["scenario"]).read_text())
    para = what_you_see()
    minutes = scenario["duration_s"] / 60
    speed = demo["simulator"]["run_speed"]
    assert set(re.findall(r"\b(\w+)-node\b", para)) == {WORDS[scenario["initial_nodes"]]}
    assert f"{minutes:.0f} simulated minutes at {speed:.0f}× speed" in para
    real_s = scenario["duration_s"] / speed
    minutes_real = round(real_s / 60)
    said = "about a minute" if minutes_real <= 1 else f"about {WORDS[minutes_real]} minutes"
    assert f"ends by itself after {said}" in para
    assert "Ctrl-C stops it sooner" in para and "report of what ran is still written" in para
    assert f"out/run-{scenario['name']}/" in para
    assert "$(BIN)/metctl run\n" in (ROOT / "Makefile").read_text()  # make run: the demo itself

    # the run itself, as fast as it goes: it ends by itself, its report where the README says
    monkeypatch.chdir(tmp_path)
    fast = tmp_path / "demo.yaml"
    fast.write_text(yaml.safe_dump({**demo, "simulator": {**demo["simulator"], "run_speed": 0}}))
    assert main(["run", "--config", str(fast), "--api", "off"]) == 0
    summary = json.loads((tmp_path / "out" / f"run-{scenario['name']}" / "summary.json").read_text())
    assert summary["duration_s"] == scenario["duration_s"]
    holds = summary["holds"]
    if "holds every decision with `within_slo`" in para:
        assert holds == {"within_slo": summary["decisions"]}, holds
    else:  # the README must then say what the default policy does do on this load
        assert summary["plans"]["submitted"] > 0 and "holds every decision" not in para
    assert "report in" in capsys.readouterr().out

    # Issue 29 item 4, a demo that acts: the README says the default policy scales out, splits
    # a hot region and scales back in; the run did each (the cluster's own count of what
    # happened), the scale-out and the scale-in when the README says, at the demo's speed
    done = summary["actions"]
    for words, op in (("scale out", "launch"), ("split a region", "split"),
                      ("scale back in", "terminate")):
        assert words in para and done.get(op, 0) >= 1, (words, done)
    rows = list(csv.DictReader((tmp_path / "out" / f"run-{scenario['name']}" / "timeseries.csv").open()))
    t, nodes = [float(r["t_s"]) for r in rows], [int(r["vms"]) for r in rows]
    grew = next(i for i in range(1, len(nodes)) if nodes[i] > nodes[i - 1])
    shrank = next(i for i in range(grew, len(nodes)) if nodes[i] < nodes[i - 1])
    said_at = [int(s) for s in re.findall(r"about (\d+) s in", para)]
    assert len(said_at) == 2, said_at  # the scale-out's and the scale-in's
    for said_s, i in zip(said_at, (grew, shrank)):
        assert abs(t[i] / speed - said_s) <= 10, (said_s, t[i] / speed)
