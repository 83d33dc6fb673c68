"""Packaging: extras keep the core install light, the core commands work without the optional
libraries, the wheel's metadata says so, the systemd unit verifies, the container file builds
from the distribution (checked statically: no container engine here)."""
from __future__ import annotations

import configparser
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL = {"ec2": "boto3", "openstack": "openstacksdk", "hbase": "py4j", "ha": "kazoo",
            "metrics": "prometheus-client"}
# import names of the optional libraries (and what they drag in)
BLOCKED = ("boto3", "botocore", "openstack", "keystoneauth1", "py4j", "kazoo", "prometheus_client",
           "moto")


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_extras_exist_and_the_core_does_not_pull_them():
    proj = project()
    extras = proj["optional-dependencies"]
    core = " ".join(proj["dependencies"]).lower()
    for extra, package in OPTIONAL.items():
        assert any(dep.lower().startswith(package) for dep in extras[extra]), extra
        assert package not in core


BLOCKED_RUN = f"""
import json, sys, io, contextlib
for name in {BLOCKED!r}:
    sys.modules[name] = None  # any import of it now raises ImportError
from controller.cli import main
from controller.config import MetctlConfig
from controller.ha import HASettings, Leadership
from controller.telemetry import Telemetry, NullTelemetry
import controller.logs, controller.config_reference
for name in ("plan", "validate", "simulate", "snapshot", "status", "run"):
    __import__("controller.commands." + name)
assert isinstance(Telemetry.create(), NullTelemetry)
lead = Leadership(HASettings(), "demo"); lead.start(); assert lead.may_act()
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(["plan", "--snapshot", sys.argv[1], "--format", "json"])
assert code == 0, code
plan = json.loads(out.getvalue())
print(json.dumps(sorted(plan)))
"""


def test_core_commands_work_with_the_optional_libraries_missing():
    snapshot = ROOT / "configs" / "examples" / "met-5-nodes.json"
    done = subprocess.run([sys.executable, "-c", BLOCKED_RUN, str(snapshot)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {"actions", "sizing", "summary"} <= set(json.loads(done.stdout.splitlines()[-1]))


def test_installed_metadata_puts_drivers_behind_extras():
    # The metadata pip generated from pyproject.toml when it installed metctl: what
    # `pip install metctl` resolves. (No wheel is built here: that needs `wheel` from PyPI.)
    requires = importlib.metadata.requires("metctl") or []
    for extra, package in OPTIONAL.items():
        mine = [r for r in requires if r.lower().startswith(package)]
        assert mine and all(f'extra == "{extra}"' in r for r in mine), (extra, mine)
    unconditional = [r for r in requires if "extra ==" not in r]
    assert unconditional and not any(
        r.lower().startswith(tuple(OPTIONAL.values())) for r in unconditional)


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read(ROOT / "deploy" / "systemd" / "metctl.service")
    return parser


def test_systemd_unit_runs_metctl_as_its_own_user_and_restarts_on_failure():
    service = unit()["Service"]
    assert service["User"] == "metctl" and service["Group"] == "metctl"
    assert service["Restart"] == "on-failure"
    assert service["ExecStart"].split()[1:] == ["run", "--config", "/etc/metctl/metctl.yaml"]
    assert service["ConfigurationDirectory"] == "metctl"  # /etc/metctl
    assert service["KillSignal"] == "SIGTERM"  # metctl hands leadership over on SIGTERM
    assert service["RestartPreventExitStatus"] == "2"  # bad config: restarting cannot help


@pytest.mark.integration
def test_systemd_unit_verifies(tmp_path):
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is part of systemd, present on every target system"
    metctl = Path(sys.executable).parent / "metctl"
    text = (ROOT / "deploy/systemd/metctl.service").read_text()
    copy = tmp_path / "metctl.service"
    copy.write_text(text.replace("/opt/metctl/bin/metctl", str(metctl)))
    done = subprocess.run([analyze, "verify", str(copy)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "metctl.service" not in done.stderr, done.stderr


def test_containerfile_builds_the_distribution_and_runs_metctl_unprivileged():
    # No container engine on this machine: the file is checked, not built.
    lines = [line.strip() for line in (ROOT / "deploy/container/Containerfile").read_text()
             .splitlines() if line.strip() and not line.lstrip().startswith("#")]
    instructions = [line.split()[0] for line in lines if line.split()[0].isupper()]
    assert instructions.count("FROM") == 2  # build stage (wheel) + runtime
    assert "RUN pip wheel --no-cache-dir --wheel-dir /wheels ." in lines
    user = [line for line in lines if line.startswith("USER ")]
    assert user == ["USER metctl"]
    entry = next(line for line in lines if line.startswith("ENTRYPOINT"))
    assert json.loads(entry.split(None, 1)[1]) == ["metctl", "run", "--config",
                                                   "/etc/metctl/metctl.yaml"]
    extras = next(line for line in lines if line.startswith("ARG EXTRAS="))
    assert set(extras.split("=", 1)[1].split(",")) <= set(project()["optional-dependencies"])


def test_the_container_image_publishes_the_control_api_port_too():
    """Issue 24, network exposure: the image published only 9464 (Prometheus), so the control
    API was unreachable from the host."""
    from controller.control import ControlSettings
    from controller.telemetry import TelemetrySettings

    text = (ROOT / "deploy/container/Containerfile").read_text()
    exposed = {int(p) for line in text.splitlines() if line.startswith("EXPOSE ")
               for p in line.split()[1:]}
    api_port = ControlSettings().bind()[1]
    metrics_port = int(TelemetrySettings().prometheus_address.rsplit(":", 1)[1])
    assert {api_port, metrics_port} <= exposed
    # and the comment tells how to reach it: published, bound beyond the container's
    # loopback, with TLS
    assert f":{api_port}:{api_port}" in text and f"control.api_address: 0.0.0.0:{api_port}" in text
    assert "control.tls_cert_file" in text


def test_containerfile_copies_every_package_the_distribution_ships():
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]["find"]["include"]
    packages = {p.rstrip("*") for p in find}
    copied = {line.split()[1] for line in (ROOT / "deploy/container/Containerfile").read_text()
              .splitlines() if line.startswith("COPY ") and "--from" not in line}
    assert packages <= copied and "." not in copied
