#!/usr/bin/env bash
# HBase 2.6 server + client jars from Maven Central into ~/.cache/metctl/hbase-<version>/
# (once; later runs find the cache and return at once), for the HBase integration tests and
# `make demo-hbase`. Also builds the YCSB binding (ycsb-hbase/) so its jars are cached too.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
"$py" deploy/local_hbase/cluster.py fetch
"$py" deploy/local_hbase/ycsb.py build >/dev/null
