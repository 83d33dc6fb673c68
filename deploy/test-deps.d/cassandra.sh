#!/usr/bin/env bash
# Cassandra 5.0 jars (cassandra-all and its runtime dependencies) from Maven Central into
# ~/.cache/metctl/cassandra-<version>/ (once; later runs find the cache and return at once), for
# the Cassandra integration tests and `make demo-cassandra`.
set -euo pipefail
cd "$(dirname "$0")/../.."
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
"$py" deploy/local_cassandra/cluster.py fetch
