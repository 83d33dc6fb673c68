"""`metctl hbase-jars fetch` through the CLI without Maven: where the jars went and the config
line, a second call that finds them without Maven, and the errors an operator meets before
Maven runs — a bad version or folder (exit 2), no Maven (exit 2). With real Maven:
tests/integration/test_cli_hbase_jars.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from actuator import hbase_jars
from controller.cli import main

V = hbase_jars.HBASE_VERSION


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fake_fetched(root: Path, version: str = V) -> Path:
    """A folder as a whole earlier fetch leaves it (marker last), with one jar."""
    lib = root / f"hbase-{version}" / "lib"
    lib.mkdir(parents=True)
    (lib / f"hbase-client-{version}.jar").write_bytes(b"PK")
    (lib.parent / ".complete").write_text(version + "\n")
    return lib


@pytest.fixture
def no_maven(tmp_path, monkeypatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_jars_already_there_are_reported_at_once_with_the_config_line(tmp_path, capsys, no_maven):
    lib = fake_fetched(tmp_path)
    code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(tmp_path))
    assert code == 0, err
    assert f"HBase {V}: 1 jars already present in {lib}" in out  # no mvn on PATH: none was needed
    assert f"      client_jars_dir: {lib}\n" in out and "datastore:\n    hbase:" in out
    assert "(the default" not in out


@pytest.mark.parametrize("version", ["2.6", "latest", "2.6.4; rm -rf /", "../2.6.4"])
def test_a_bad_version_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, version):
    code, out, err = run(capsys, "hbase-jars", "fetch", "--version", version, "--dir", str(tmp_path / "jars"))
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "--version" in err and "is not an HBase version" in err
    assert not (tmp_path / "jars").exists()


def test_a_folder_that_cannot_be_written_is_refused_in_one_line(tmp_path, capsys):
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for where in (a_file, a_file / "sub"):
        code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(where))
        assert code == 2 and len(err.splitlines()) == 1 and "--dir" in err and str(where) in err


def test_no_maven_is_said_in_one_line(tmp_path, capsys, no_maven):
    code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(tmp_path))
    assert code == 2 and len(err.splitlines()) == 1 and "mvn" in err and "apt install maven" in err


@pytest.mark.parametrize("url", ["ftp://x", "x", "file:///srv/maven", "http://", "https:///maven2"])
def test_hbase_jars_repository_that_is_no_http_url_is_refused(tmp_path, capsys, url):
    """Issue 24 item 13 (its second half): `--repository ftp://x` was accepted. A repository is
    an http(s) URL with a host: exit 2, one line naming --repository, nothing written, even
    when the jars are already there."""
    fake_fetched(tmp_path / "present")
    for where in (tmp_path / "jars", tmp_path / "present"):
        code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(where), "--repository", url)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, err
        assert "--repository" in err and "http://" in err
    assert not (tmp_path / "jars").exists()
