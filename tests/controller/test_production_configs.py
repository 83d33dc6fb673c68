"""The production configs shipped in configs/production/ are complete (they load, with the real
drivers chosen and every site-specific value present) and say what an operator must change."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.config import load_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs" / "production").glob("*.yaml"))
# values that only make sense at the example site: each line holding one must say CHANGE
SITE_VALUE = re.compile(r"example|ami-|subnet-|sg-|mycloud|hbase-prod|/opt/hbase|hbase-restart-rs"
                        r"|eu-west-1|m5\.|m1\.|hbase-net|debian-12|min_nodes|max_nodes|0\.0\.0\.0")


def test_both_clouds_ship():
    assert {p.stem for p in CONFIGS} == {"ec2", "openstack"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_loads_with_real_drivers_and_every_site_value_present(path):
    config = load_config(path)
    assert config.infrastructure.driver == path.stem
    assert config.datastore.driver == "hbase"
    assert config.monitor.hbase_jmx_urls and config.monitor.ganglia_endpoints
    hb = config.datastore.hbase
    assert hb.client_jars_dir and hb.restart_command and "{settings}" in hb.restart_command
    if path.stem == "ec2":
        assert config.infrastructure.ec2.image_id and config.infrastructure.ec2.subnet_id
    else:
        assert config.infrastructure.openstack.image and config.infrastructure.openstack.cloud
    assert str(config.executor.journal_path).startswith("/var/lib/metctl/")


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_every_value_an_operator_must_change_says_so(path):
    lines = path.read_text().splitlines()
    unmarked = [f"{path.name}:{i}: {line.strip()}" for i, line in enumerate(lines, 1)
                if not line.lstrip().startswith("#") and SITE_VALUE.search(line.split("#")[0])
                and "CHANGE" not in line and "CHANGE" not in lines[i - 2]]
    assert not unmarked, "\n".join(unmarked)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_the_commented_adopt_example_loads_once_uncommented(path, tmp_path):
    # what the operator does: drop the [] and uncomment the entries below it
    text = path.read_text()
    assert "\n  adopt: []" in text
    text = re.sub(r"\n  adopt: \[\]", "\n  adopt:", text)
    text = re.sub(r"\n  #  - ", "\n    - ", text)
    edited = tmp_path / path.name
    edited.write_text(text)
    adopt = load_config(edited).infrastructure.adopt
    assert [bool(e.tags) for e in adopt] == [True, False, False]
    assert adopt[1].instance_ids and adopt[2].hosts == ("rs1.internal.example",)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_a_template_still_marked_change_is_warned_by_validate_and_refused_by_run(path, tmp_path, capsys):
    """Issue 24, friction: `validate` passed production templates still holding their CHANGE
    placeholders. It warns (counting the marks left), and `run` refuses the file until every
    mark is gone; a finished copy validates without the warning."""
    from controller.cli import main

    marks = [i for i, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"#\s*CHANGE\b", line)]
    assert len(marks) > 10
    assert main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("ok:") and f"{len(marks)} line(s) still marked" in err
    assert main(["run", "--config", str(path), "--once", "--api", "off"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"line {marks[0]}" in err[0] and "CHANGE" in err[0], err
    finished = tmp_path / path.name
    finished.write_text(re.sub(r"#\s*CHANGE\b.*", "", path.read_text()))
    assert main(["validate", str(finished)]) == 0
    assert "CHANGE" not in capsys.readouterr().err
