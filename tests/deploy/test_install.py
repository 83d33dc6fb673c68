"""A plain install as docs/install.md says: `pip install .` into a fresh virtualenv, then
`metctl` on the configs and examples shipped inside the package, run from another directory.
Real pip, real build (setuptools from PyPI through pip's build isolation). To keep `make test`
short the fresh venv sees the test venv's third-party packages through a .pth line (so pip finds
the dependencies satisfied and installs metctl alone); metctl itself, its package data and its
entry point come from this install only. (A clean install of the README's own lines, with every
dependency, is tests/deploy/test_readme_install.py.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, a directory outside the source tree, env) with metctl pip-installed from ROOT."""
    tmp = tmp_path_factory.mktemp("install")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python3*/site-packages"))
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--disable-pip-version-check", "-q",
                          str(ROOT)], capture_output=True, text=True, timeout=600, env=env)
    assert pip.returncode == 0, pip.stderr[-2000:]
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return venv, elsewhere, env


def test_pip_install_dot_into_a_fresh_venv_then_plan_from_another_directory(installed):
    venv, elsewhere, env = installed
    site = next(venv.glob("lib/python3*/site-packages"))
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


def test_shipped_configs_and_examples_are_reachable_by_name_from_an_installed_copy(installed):
    """Issue 24 item 4: after `pip install`, from another directory `metctl plan --snapshot
    configs/examples/met-5-nodes.yaml` and `metctl validate configs/met.yaml` failed with "no
    such file" although the files are installed in the package. They go by name (`example:`,
    `config:`, `scenario:`; `metctl config list|show`), and the source tree's path names the
    name to use."""
    venv, elsewhere, env = installed
    metctl = str(venv / "bin" / "metctl")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([metctl, *args], cwd=elsewhere, capture_output=True, text=True,
                              timeout=120, env=env)

    done = run("plan", "--snapshot", "example:met-5-nodes", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["actions"]
    done = run("plan", "--snapshot", "example:met-5-nodes.json", "--config", "config:tiramola")
    assert done.returncode == 0 and "policy tiramola" in done.stdout, done.stderr
    done = run("validate", "config:met")
    assert done.returncode == 0 and done.stdout.startswith("ok:") and "'demo'" in done.stdout, done.stderr
    assert run("validate", "scenario:sudden-spike").returncode == 0
    listing = run("config", "list").stdout
    for name in ("config:met", "config:production/ec2", "example:met-5-nodes", "scenario:met-elasticity"):
        assert name in listing, listing
    shown = run("config", "show", "production/ec2")
    assert shown.returncode == 0 and "driver: ec2" in shown.stdout
    assert shown.stdout == (ROOT / "configs" / "production" / "ec2.yaml").read_text()
    # the source tree's paths from elsewhere: one line naming the name to use, exit 2
    missing = run("plan", "--snapshot", "configs/examples/met-5-nodes.yaml")
    assert missing.returncode == 2 and "example:met-5-nodes" in missing.stderr, missing.stderr
    missing = run("validate", "configs/met.yaml")
    assert missing.returncode == 2 and "config:met" in missing.stderr, missing.stderr
    unknown = run("plan", "--snapshot", "example:no-such-example")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "met-5-nodes" in unknown.stderr  # the names there are
