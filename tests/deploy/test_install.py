"""A plain install as docs/install.md says: `pip install .` into a fresh virtualenv, then
`metctl plan` on an example shipped inside the package, run from another directory. Real pip,
real build (setuptools from PyPI through pip's build isolation; wheels from pip's cache)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_dot_into_a_fresh_venv_then_plan_from_another_directory(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
                          str(ROOT)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    python = str(venv / "bin" / "python")
    shipped = subprocess.run(
        [python, "-c", "import configs, pathlib; print(pathlib.Path(configs.__file__).parent)"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert not shipped.startswith(str(ROOT)), shipped  # the installed copy, not this tree
    # project.license is an SPDX expression (core metadata 2.4), not the deprecated TOML table
    license_ = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.metadata('metctl')['License-Expression'])"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert license_ == "Apache-2.0"
    assert (Path(shipped) / "production" / "ec2.yaml").is_file()  # production configs ship too
    example = Path(shipped) / "examples" / "met-5-nodes.yaml"
    done = subprocess.run([str(venv / "bin" / "metctl"), "plan", "--snapshot", str(example),
                           "--format", "json"], cwd=elsewhere, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["policy"] == "met" and plan["actions"]
    # the core only: no driver library came with a plain `pip install .`
    listed = subprocess.run([str(venv / "bin" / "pip"), "list", "--format", "json"],
                            capture_output=True, text=True, timeout=60, check=True).stdout
    names = {p["name"].lower() for p in json.loads(listed)}
    assert "metctl" in names and not names & {"boto3", "openstacksdk", "py4j", "kazoo", "pytest"}
