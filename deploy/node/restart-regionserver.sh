#!/usr/bin/env bash
# Restart one RegionServer of a multi-host cluster with a new profile: metctl's
# `datastore.hbase.restart_command` for nodes set up by deploy/node/bootstrap.sh.
#
#   restart-regionserver.sh SERVER SETTINGS.json
#
# SERVER is metctl's {server} (host,port[,startcode]: the host is what counts), SETTINGS.json
# its {settings} (a flat JSON map of hbase-site.xml properties, metctl.profile among them).
# Config line (docs/production.md, "Node bootstrap"):
#   restart_command: [/opt/metctl/deploy/node/restart-regionserver.sh, "{server}", "{settings}"]
#
# Over ssh (as the user running metctl; key-based, BatchMode): the settings go through ssh's
# standard input to apply_profile.py on the node, which merges them into its hbase-site.xml,
# then the node's metctl-regionserver.service restarts (SIGTERM: HBase's graceful stop, its
# regions move to other servers), and this script returns once the RegionServer's info server
# answers again. The remote command is built from fixed words and this machine's environment
# only, each quoted; the host is checked to be a host name or address (never an ssh option).
# Environment: SSH (ssh), SSH_OPTS, REMOTE_SRC (/opt/metctl), REMOTE_SITE
# (/etc/hbase/conf/hbase-site.xml), SUDO (sudo; empty when ssh logs in as root), REMOTE_RESTART
# (systemctl restart metctl-regionserver.service), INFO_PORT (16030), WAIT_S (300; 0: no wait).
# Exit 2: bad arguments or settings; 1: the node could not be reached, updated or restarted.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
SSH=${SSH:-ssh}
SSH_OPTS=${SSH_OPTS:--o BatchMode=yes -o ConnectTimeout=10}
REMOTE_SRC=${REMOTE_SRC:-/opt/metctl}
REMOTE_SITE=${REMOTE_SITE:-/etc/hbase/conf/hbase-site.xml}
SUDO=${SUDO-sudo}
REMOTE_RESTART=${REMOTE_RESTART:-systemctl restart metctl-regionserver.service}
INFO_PORT=${INFO_PORT:-16030}
WAIT_S=${WAIT_S:-300}
PYTHON=${PYTHON:-python3}

bad() { printf 'restart-regionserver: %s\n' "$*" >&2; exit 2; }

[ $# -eq 2 ] || bad "usage: restart-regionserver.sh SERVER SETTINGS.json (metctl's {server} {settings})"
server=$1
settings=$2
host=${server%%,*}
# a DNS name or an IPv4/IPv6 address; never starting with '-' (ssh would take it for an option)
printf '%s' "$host" | grep -Eqx '[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*' \
    || bad "SERVER $server: expected host,port with a host name or address"
case $INFO_PORT$WAIT_S in *[!0-9]*) bad "INFO_PORT and WAIT_S must be numbers" ;; esac

# Refuse bad settings here, with their file's name, before touching the node.
"$PYTHON" - "$here" "$settings" <<'EOF' || exit 2
import sys
sys.path.insert(0, sys.argv[1])
import apply_profile
try:
    apply_profile.load_settings(sys.argv[2])
except apply_profile.BadInput as err:
    sys.exit(f"restart-regionserver: {err}")
EOF

remote=""
# shellcheck disable=SC2086  # SUDO and REMOTE_RESTART are word lists on purpose
for a in $SUDO python3 "$REMOTE_SRC/deploy/node/apply_profile.py" "$REMOTE_SITE" -; do
    remote="$remote $(printf '%q' "$a")"
done
remote="$remote &&"
# shellcheck disable=SC2086
for a in $SUDO $REMOTE_RESTART; do remote="$remote $(printf '%q' "$a")"; done

# shellcheck disable=SC2086
if ! $SSH $SSH_OPTS -- "$host" "$remote" <"$settings"; then
    printf 'restart-regionserver: %s: applying the settings or restarting failed (ssh and the node'"'"'s journal say why)\n' "$host" >&2
    exit 1
fi

[ "$WAIT_S" -gt 0 ] || exit 0
"$PYTHON" - "$host" "$INFO_PORT" "$WAIT_S" <<'EOF'
import json, sys, time, urllib.request
host, port, wait_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
url = f"http://{'[%s]' % host if ':' in host else host}:{port}/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=Server"
deadline = time.monotonic() + wait_s
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            if json.load(r).get("beans"):
                sys.exit(0)
    except (OSError, ValueError):
        pass
    time.sleep(2)
sys.exit(f"restart-regionserver: {host}: RegionServer not answering on {url} after {wait_s:.0f} s")
EOF
