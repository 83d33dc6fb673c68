"""The HBase jars metctl's HBase driver needs (hbase-client and hbase-server with their runtime
dependencies), fetched from Maven Central with Maven into a folder per version:
`<root>/hbase-<version>/lib`, root = $METCTL_CACHE or ~/.cache/metctl unless given.

One fetch serves `metctl hbase-jars fetch` (an operator's jars for
`datastore.hbase.client_jars_dir`) and deploy/local_hbase/cluster.py (the local cluster's and
the tests' jars). It is idempotent: a `.complete` marker written last means the folder is whole,
so a second call returns at once; an interrupted one leaves only `hbase-<version>.partial`,
removed by the next call. Maven's own settings (~/.m2/settings.xml: proxies, mirrors) apply;
`repository` points Maven at another mirror of Maven Central instead.

Standard library only: cluster.py imports it on a bare python3.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from xml.sax.saxutils import escape

HBASE_VERSION = "2.6.4-hadoop3"
# HBase's release versions on Maven Central: 2.6.4, 2.6.4-hadoop3, 3.0.0-beta-1 …
VERSION = re.compile(r"^\d+\.\d+\.\d+(-[A-Za-z0-9]+(\.[A-Za-z0-9]+)*)*$")

# What to fetch. Nothing is built from this pom: it only lists what to copy.
POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.metctl</groupId>
  <artifactId>hbase-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>org.apache.hbase</groupId><artifactId>hbase-server</artifactId><version>{v}</version></dependency>
    <dependency><groupId>org.apache.hbase</groupId><artifactId>hbase-client</artifactId><version>{v}</version></dependency>
    <!-- HQuorumPeer (ZooKeeper), for the local cluster -->
    <dependency><groupId>org.apache.hbase</groupId><artifactId>hbase-zookeeper</artifactId><version>{v}</version></dependency>
  </dependencies>
</project>
"""
# A mirror of every repository (`repository=`). Its id is "central" so that what Maven already
# holds in ~/.m2 from Maven Central counts as available from it too.
MIRROR_SETTINGS = """<settings><mirrors><mirror><id>central</id><mirrorOf>*</mirrorOf>
<url>{url}</url></mirror></mirrors></settings>
"""
# Maven's words for "the repository has no such artifact" (a version that does not exist) …
_NOT_FOUND = re.compile(r"Could not find artifact|Failure to find|was not found in|status code: 404"
                        r"|\b404\b", re.I)
# … and for "the repository could not be reached".
_UNREACHABLE = re.compile(r"Could not transfer|Unknown host|Connection refused|Connect to .* failed"
                          r"|timed out|Network is unreachable|No route to host|transfer failed", re.I)


class JarsError(Exception):
    """The jars could not be fetched. `kind`: version (no such HBase version), dir (the folder
    cannot be written), maven (no mvn), repository (not a URL Maven can use) or network (the
    repository could not be reached, or anything else Maven reported)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def cache_root() -> Path:
    return Path(os.environ.get("METCTL_CACHE", Path.home() / ".cache" / "metctl"))


def home_for(version: str = HBASE_VERSION, root: Path | None = None) -> Path:
    """The folder of one HBase version: lib/ (the jars), and webapps/ for the local cluster."""
    return (root if root is not None else cache_root()) / f"hbase-{version}"


def default_client_jars_dir(version: str = HBASE_VERSION) -> Path:
    """Where the HBase driver looks when datastore.hbase.client_jars_dir is unset."""
    return home_for(version) / "lib"


def present(home: Path) -> bool:
    """The folder holds a whole fetch (its marker was written last, and the client jar is there)."""
    return (home / ".complete").is_file() and any((home / "lib").glob("hbase-client-*.jar"))


def _check_writable(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise JarsError("dir", f"{root} is a file, not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root, prefix=".metctl-write-test-"):
            pass
    except OSError as err:
        raise JarsError("dir", f"{root} cannot be written ({err.strerror or err})") from None


CENTRAL = "https://repo.maven.apache.org/maven2"


def check_repository(url: str) -> None:
    """A repository Maven can use: an http(s) URL with a host (`ftp://x` was accepted, then
    failed inside Maven)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise JarsError("repository", f"an http:// or https:// URL of a Maven repository (a mirror "
                                      f"of Maven Central), got {url!r}")


def unreachable(url: str, timeout_s: float = 10.0) -> str | None:
    """Why `url` cannot be reached (one short phrase), or None when something answers there
    (any HTTP status will do: only the connection is in question)."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout_s).close()
    except urllib.error.HTTPError:
        return None
    except urllib.error.URLError as err:
        reason = err.reason
        return getattr(reason, "strerror", None) or str(reason)
    except (OSError, ValueError) as err:
        return getattr(err, "strerror", None) or str(err)
    return None


def _maven_problem(version: str, output: str, repository: str | None = None) -> JarsError:
    """Sort Maven's failure into a bad version or an unreachable repository, in one line."""
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    errors = [re.sub(r"^\[ERROR\]\s*", "", ln.strip()) for ln in output.splitlines() if "[ERROR]" in ln]
    first = next((e for e in errors if e), " ".join(output.split()) or "no output")
    first = first.replace(" -> [Help 1]", "")
    if "No plugin found for prefix" in first:
        # Maven could not even get its dependency plugin: from a fresh ~/.m2 that is the
        # repository's doing, said in Maven's words that name neither (issue 24 item 13)
        where = repository or CENTRAL
        why = unreachable(where)
        if why is not None:
            return JarsError("network", f"mvn could not reach the repository {where}: {why}")
        return JarsError("network", f"mvn could not get its dependency plugin from the repository "
                                    f"{where} (is it a mirror of Maven Central?)")
    if "org.apache.hbase:hbase-" in first and version in first and _NOT_FOUND.search(first) \
            and not _UNREACHABLE.search(first):
        return JarsError("version", f"HBase {version} is not on the repository (Maven Central, or "
                                    "--repository): check the version, e.g. 2.6.4-hadoop3")
    if _UNREACHABLE.search(first):
        where = re.search(r"from/to \S+ \(([^)]*)\)", first)
        cause = first.rsplit(": ", 1)[-1]
        return JarsError("network", f"mvn could not reach the repository"
                                    f"{f' {where.group(1)}' if where else ''}: {cause[:200]}")
    return JarsError("network", f"mvn could not fetch HBase {version}: "
                                f"{first.removeprefix('Failed to execute goal on project hbase-jars: ')[:300]}")


def fetch(version: str = HBASE_VERSION, root: Path | None = None, *, repository: str | None = None,
          quiet: bool = True) -> tuple[Path, bool]:
    """Fetch HBase `version`'s jars into `home_for(version, root)/lib` unless already there.
    Returns (home, fetched_now). Raises JarsError."""
    if repository is not None:
        check_repository(repository)
    if not VERSION.match(version):
        raise JarsError("version", f"{version!r} is not an HBase version (digits.digits.digits, "
                                   "optionally -suffix, e.g. 2.6.4-hadoop3)")
    home = home_for(version, root)
    if present(home):
        return home, False
    _check_writable(home.parent)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarsError("maven", "mvn (Apache Maven) is not on PATH: install it (apt install maven)")
    tmp = home.with_name(home.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    (tmp / "pom.xml").write_text(POM.format(v=escape(version)))
    cmd = [mvn, "-B", "-Dstyle.color=never", *(["-q"] if quiet else []), "-f", str(tmp / "pom.xml"),
           "dependency:copy-dependencies", "-DincludeScope=runtime", f"-DoutputDirectory={tmp / 'lib'}"]
    if repository:
        # as the global settings: the user's ~/.m2/settings.xml (proxies) still applies
        (tmp / "settings.xml").write_text(MIRROR_SETTINGS.format(url=escape(repository)))
        cmd[2:2] = ["-gs", str(tmp / "settings.xml")]
    # A short-lived Maven: C1 only and the serial collector start it with about half the CPU.
    env = dict(os.environ, MAVEN_OPTS=f"{os.environ.get('MAVEN_OPTS', '')} -XX:TieredStopAtLevel=1 "
                                      "-XX:+UseSerialGC".strip())
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, env=env)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _maven_problem(version, proc.stdout + "\n" + proc.stderr, repository)
    for extra in ("pom.xml", "settings.xml"):
        (tmp / extra).unlink(missing_ok=True)
    shutil.rmtree(home, ignore_errors=True)
    tmp.rename(home)
    (home / ".complete").write_text(version + "\n")
    return home, True
