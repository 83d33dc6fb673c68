"""deploy/node/apply_profile.py, run as the bootstrap and the restart command run it (a
subprocess on python3): a profile's settings merged into hbase-site.xml, idempotently; bad
input refused with one line naming the file, exit 2. Also the user data metctl renders: valid
cloud-config, the same form as deploy/node/cloud-init.yaml, and its node.json accepted here."""
from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from actuator.userdata import NODE_FILE, render_user_data

ROOT = Path(__file__).resolve().parents[2]
APPLY = ROOT / "deploy" / "node" / "apply_profile.py"

BASE = """<?xml version="1.0"?>
<!-- the cluster's common settings -->
<configuration>
  <property>
    <name>hbase.zookeeper.quorum</name>
    <value>zk1.example.org</value>
  </property>
  <property><name>hfile.block.cache.size</name><value>0.40</value></property>
</configuration>
"""


def apply(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(APPLY), *args], capture_output=True, text=True,
                          input=stdin, timeout=30)


def props(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    return {p.findtext("name"): p.findtext("value") for p in root.findall("property")}


def test_merge_replaces_existing_adds_new_and_keeps_the_rest(tmp_path):
    site = tmp_path / "hbase-site.xml"
    site.write_text(BASE)
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"hfile.block.cache.size": "0.55",
                                    "hbase.regionserver.global.memstore.size": 0.1,
                                    "hbase.regionserver.wal.enablecompression": True}))
    r = apply(str(site), str(settings))
    assert r.returncode == 0, r.stderr
    assert "3 settings applied" in r.stdout
    assert props(site) == {"hbase.zookeeper.quorum": "zk1.example.org",
                           "hfile.block.cache.size": "0.55",
                           "hbase.regionserver.global.memstore.size": "0.1",
                           "hbase.regionserver.wal.enablecompression": "true"}
    assert "the cluster's common settings" in site.read_text()  # the operator's comment survives


def test_second_run_changes_nothing(tmp_path):
    site = tmp_path / "hbase-site.xml"
    site.write_text(BASE)
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"hfile.block.cache.size": "0.10", "a.b": "1"}))
    assert apply(str(site), str(settings)).returncode == 0
    first = site.read_bytes()
    mtime = site.stat().st_mtime_ns
    again = apply(str(site), str(settings))
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert site.read_bytes() == first and site.stat().st_mtime_ns == mtime


def test_node_document_with_base_file_writes_profile_and_its_name(tmp_path):
    """First boot: base file + metctl's node.json (as its user data carries it) -> site file."""
    base = tmp_path / "base.xml"
    base.write_text(BASE)
    node = tmp_path / "node.json"
    doc = yaml.safe_load(render_user_data("demo", "write"))["write_files"][0]
    node.write_text(doc["content"])
    site = tmp_path / "conf" / "hbase-site.xml"
    r = apply(str(site), str(node), "--base", str(base))
    assert r.returncode == 0, r.stderr
    assert props(site) == {"hbase.zookeeper.quorum": "zk1.example.org",
                           "hfile.block.cache.size": "0.10",
                           "hbase.regionserver.global.memstore.size": "0.55",
                           "hbase.rs.prefetchblocksonopen": "true",
                           "metctl.profile": "write"}
    assert base.read_text() == BASE  # the base file is only read


def test_settings_from_standard_input(tmp_path):
    site = tmp_path / "hbase-site.xml"
    site.write_text(BASE)
    r = apply(str(site), "-", stdin=json.dumps({"metctl.profile": "scan"}))
    assert r.returncode == 0, r.stderr
    assert props(site)["metctl.profile"] == "scan"


@pytest.mark.parametrize("site_text, settings_text, bad_file, expect", [
    ("<configuration><property>", "{}", "site", "not well-formed XML"),
    ("<conf/>", "{}", "site", "expected <configuration>"),
    (BASE, "{not json", "settings", "expected a JSON map"),
    (BASE, "[1, 2]", "settings", "expected a JSON map"),
    (BASE, '{"a.b": {"nested": 1}}', "settings", "'a.b': expected a string or number"),
    (BASE, '{"cluster": "c", "profile": "read", "settings": {}}', "settings", "without an `hbase_site` map"),
])
def test_malformed_input_is_one_line_naming_the_file_exit_2(tmp_path, site_text, settings_text,
                                                            bad_file, expect):
    site = tmp_path / "hbase-site.xml"
    site.write_text(site_text)
    settings = tmp_path / "settings.json"
    settings.write_text(settings_text)
    r = apply(str(site), str(settings))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(site if bad_file == "site" else settings) in lines[0] and expect in lines[0]
    assert site.read_text() == site_text  # nothing written on bad input


def test_rendered_user_data_is_cloud_config_in_the_form_of_the_template():
    rendered = render_user_data("CHANGE-my-cluster", "default")
    assert rendered.startswith("#cloud-config\n")
    doc = yaml.safe_load(rendered)
    template = (ROOT / "deploy" / "node" / "cloud-init.yaml").read_text()
    assert doc == yaml.safe_load(template)
    (entry,) = doc["write_files"]
    assert entry["path"] == NODE_FILE
    node = json.loads(entry["content"])
    assert node["profile"] == "default" and node["hbase_site"]["hfile.block.cache.size"] == "0.40"
    assert "/opt/metctl/deploy/node/bootstrap.sh" in doc["runcmd"][0][2]
