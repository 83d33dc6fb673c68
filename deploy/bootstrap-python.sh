#!/usr/bin/env bash
# Make a virtualenv at $2 with interpreter $1, installing Debian's venv support if it is missing.
set -euo pipefail
python=${1:-python3}; venv=${2:-.venv}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "metctl needs Python >= 3.11 (found: $("$python" --version 2>&1))" >&2; exit 2
fi
if ! "$python" -m venv --help >/dev/null 2>&1 || ! "$python" -c 'import ensurepip' 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-pip >/dev/null
  else
    echo "python3-venv is missing: apt-get install python3-venv" >&2; exit 2
  fi
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
