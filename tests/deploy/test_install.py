"""A plain install as docs/install.md says: `pip install .` into a fresh virtualenv, then
`metctl plan` on an example shipped inside the package, run from another directory. Real pip,
real build (setuptools from PyPI through pip's build isolation). To keep `make test` short the
fresh venv sees the test venv's third-party packages through a .pth line (so pip finds the
dependencies satisfied and installs metctl alone); metctl itself, its package data and its
entry point come from this install only. The full core install is what `make run` does.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_dot_into_a_fresh_venv_then_plan_from_another_directory(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
                          str(ROOT)], capture_output=True, text=True, timeout=600, env=env)
    assert pip.returncode == 0, pip.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    python = str(venv / "bin" / "python")
    shipped = subprocess.run(
        [python, "-c", "import configs, pathlib; print(pathlib.Path(configs.__file__).parent)"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, check=True, env=env).stdout.strip()
    assert not shipped.startswith(str(ROOT)), shipped  # the installed copy, not this tree
    # project.license is an SPDX expression (core metadata 2.4), not the deprecated TOML table
    license_ = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.metadata('metctl')['License-Expression'])"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, check=True, env=env).stdout.strip()
    assert license_ == "Apache-2.0"
    assert (Path(shipped) / "production" / "ec2.yaml").is_file()  # production configs ship too
    example = Path(shipped) / "examples" / "met-5-nodes.yaml"
    done = subprocess.run([str(venv / "bin" / "metctl"), "plan", "--snapshot", str(example),
                           "--format", "json"], cwd=elsewhere, capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["policy"] == "met" and plan["actions"]
    # metctl itself is the fresh install's, not the test venv's editable copy
    where = subprocess.run([python, "-c", "import controller, pathlib; print(controller.__file__)"],
                           cwd=elsewhere, capture_output=True, text=True, timeout=60, check=True,
                           env=env).stdout.strip()
    assert where.startswith(str(site)), where
