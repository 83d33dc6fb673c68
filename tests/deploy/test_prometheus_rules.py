"""deploy/prometheus/metctl-rules.yml: valid for Prometheus (`promtool check rules`), each alert
fires when it should and not before (`promtool test rules`, Debian's `prometheus` package), and
every metric it reads is one metctl exports."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from controller.control_plane import CONTROL_METRICS
from controller.telemetry import METRIC_NAMES

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"


def promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["promtool", *args], cwd=RULES, capture_output=True, text=True,
                          timeout=120)


def test_promtool_checks_the_rules():
    done = promtool("check", "rules", "metctl-rules.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 4 rules found" in done.stdout


def test_promtool_unit_tests_pass():
    done = promtool("test", "rules", "metctl-rules.test.yml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_catches_a_broken_rule(tmp_path):
    broken = (RULES / "metctl-rules.yml").read_text().replace("for: 5m", "for: 5 minutes", 1)
    (tmp_path / "r.yml").write_text(broken)
    done = subprocess.run(["promtool", "check", "rules", str(tmp_path / "r.yml")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0


def test_rules_read_only_exported_metrics_and_cover_the_four_alerts():
    doc = yaml.safe_load((RULES / "metctl-rules.yml").read_text())
    rules = doc["groups"][0]["rules"]
    assert [r["alert"] for r in rules] == ["MetctlDown", "MetctlPausedTooLong",
                                           "MetctlHoldingTooLong", "MetctlPlansFailing"]
    exported = set(METRIC_NAMES) | {n for n, _ in CONTROL_METRICS} | {"up"}
    used = {m for r in rules for m in re.findall(r"\b(metctl_[a-z_]+|up)\{", r["expr"])}
    assert used and used <= exported
