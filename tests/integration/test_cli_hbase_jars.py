"""`metctl hbase-jars fetch` with real Maven (a JVM): a version the repository lacks (exit 2,
against a loopback repository answering 404), an unreachable repository (exit 1, one line), the
default cache, and a real fetch from Maven's local repository (~/.m2), never downloading the set
again. (The cases that need no Maven are tests/controller/test_cli_hbase_jars.py.)"""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from actuator import hbase_jars
from tests.controller.test_cli_hbase_jars import V, run

pytestmark = pytest.mark.integration


@pytest.fixture
def repository_404() -> Iterator[str]:
    """A Maven repository on loopback that has nothing."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_HEAD = do_GET

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/maven2"
    finally:
        server.shutdown()
        server.server_close()


def test_a_version_the_repository_does_not_have_is_refused(tmp_path, capsys, repository_404):
    code, out, err = run(capsys, "hbase-jars", "fetch", "--version", "2.6.99-hadoop3", "--dir", str(tmp_path),
                         "--repository", repository_404)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "HBase 2.6.99-hadoop3 is not on the repository" in err
    assert list(tmp_path.iterdir()) == []  # the partial folder is gone


def test_an_unreachable_repository_is_exit_1_in_one_line(tmp_path, capsys):
    # a version Maven's local repository cannot have, so Maven must ask the (dead) repository
    code, out, err = run(capsys, "hbase-jars", "fetch", "--version", "0.0.1-metctl-test", "--dir", str(tmp_path),
                         "--repository", "http://127.0.0.1:9/maven2")
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.strip() == "metctl: mvn could not reach the repository http://127.0.0.1:9/maven2: Connection refused"
    assert list(tmp_path.iterdir()) == []


def test_the_default_cache_is_found_and_named_as_the_default(capsys):
    # the test machine caches the jars there (deploy/test-deps.d/hbase.sh); fetched once if not
    code, out, err = run(capsys, "hbase-jars", "fetch")
    lib = hbase_jars.default_client_jars_dir().resolve()
    assert code == 0, err
    assert f"client_jars_dir: {lib}" in out and "(the default" in out
    assert any(lib.glob("hbase-client-*.jar"))
    code, out, _ = run(capsys, "hbase-jars", "fetch")
    assert code == 0 and "already present" in out


def test_a_real_fetch_lays_out_lib_and_a_second_call_finds_it(tmp_path, capsys):
    m2 = Path.home() / ".m2" / "repository" / "org" / "apache" / "hbase" / "hbase-client" / V
    if not m2.is_dir():
        # make test installs it (deploy/test-deps.d/hbase.sh): missing, the setup is broken
        pytest.fail(f"Maven's local repository has no hbase-client {V} (run deploy/test-deps.d/hbase.sh)")
    # the dead repository proves nothing is downloaded: Maven copies from ~/.m2
    code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(tmp_path), "--repository",
                         "http://127.0.0.1:9/maven2")
    assert code == 0, err
    lib = tmp_path / f"hbase-{V}" / "lib"
    assert f"jars fetched into {lib}" in out
    assert (lib / f"hbase-client-{V}.jar").is_file() and len(list(lib.glob("*.jar"))) > 100
    assert sorted(p.name for p in lib.parent.iterdir()) == [".complete", "lib"]
    code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(tmp_path))
    assert code == 0 and "already present" in out


def test_hbase_jars_fetch_from_an_unreachable_repository_says_so(tmp_path, capsys, monkeypatch):
    """Issue 24 item 13: on a machine whose Maven has nothing yet, `--repository
    http://127.0.0.1:1` said "No plugin found for prefix 'dependency'" (Maven cannot get the
    plugin it runs); docs/install.md promises "could not reach the repository". An empty local
    Maven repository stands for the fresh machine."""
    monkeypatch.setenv("MAVEN_OPTS", f"-Dmaven.repo.local={tmp_path / 'empty-m2'}")
    code, out, err = run(capsys, "hbase-jars", "fetch", "--dir", str(tmp_path / "jars"),
                         "--repository", "http://127.0.0.1:1/maven2")
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.strip() == "metctl: mvn could not reach the repository http://127.0.0.1:1/maven2: Connection refused"
    assert "No plugin found" not in err
    assert not (tmp_path / "jars").exists() or list((tmp_path / "jars").iterdir()) == []
