"""The README's install lines, run as written: a clean virtualenv made elsewhere (every
dependency from the package index, nothing borrowed from the test venv), `pip install` in the
source tree, then the installed `metctl` from another directory. What CI (`make test`) checks
of a newcomer's first install; it takes a few minutes (the dependencies' downloads)."""
from __future__ import annotations

import os
import re
import shlex
import sys
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def install_lines() -> list[str]:
    """The commands of the README's first fenced block after **Install**."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"\*\*Install\*\*.*?```sh\n(.*?)```", text, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_readme_install_lines_work_from_a_clean_venv_in_another_directory(tmp_path, source_tree_kept_clean):
    lines = install_lines()
    venv = re.match(r"python3 -m venv (\S+)$", lines[0].split("#")[0].strip())
    assert venv, f"the README's install block opens with `python3 -m venv DIR`: {lines[0]!r}"
    where = venv.group(1)
    assert any("/bin/pip install" in ln for ln in lines) and any("/bin/metctl" in ln for ln in lines)
    mine = str(tmp_path / "venv")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(Path(sys.executable).parent)))
    for line in lines:
        cmd = line.replace(where, mine)
        # pip installs "." from the source tree, as the README says; the rest runs elsewhere
        cwd = ROOT if "/bin/pip install" in cmd else elsewhere
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", cmd], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"{line!r}: exit {done.returncode}: {done.stderr[-2000:]}"
    # the install is clean: metctl and its dependencies are the new venv's own
    probe = subprocess.run([f"{mine}/bin/python", "-c",
                            "import controller, numpy, boto3, py4j; print(controller.__file__, numpy.__file__)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0 and all(p.startswith(mine) for p in probe.stdout.split()), probe
    # what the block's last lines made: a plan, and a template copied to start from
    written = [shlex.split(ln.split("#")[0])[-1] for ln in lines if ">" in ln.split("#")[0]]
    for name in written:
        assert (elsewhere / name).stat().st_size > 0, name
