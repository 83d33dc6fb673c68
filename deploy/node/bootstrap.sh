#!/usr/bin/env bash
# Bootstrap an HBase RegionServer on a fresh Debian VM that metctl launched (docs/production.md,
# "Node bootstrap"). Run by cloud-init (deploy/node/cloud-init.yaml) or by hand, as root:
#
#   1. Java: installs a JRE with apt when `java` is missing (INSTALL_PACKAGES=no: refuse instead);
#   2. HBase's jars: from Maven Central through metctl's own fetch (actuator/hbase_jars.py via
#      deploy/local_hbase/cluster.py fetch, so Maven is installed too when needed), or an HBase
#      the operator already has (HBASE_HOME, with lib/);
#   3. hbase-site.xml: the base file (ZooKeeper quorum, rootdir: the operator's) plus the
#      profile in metctl's /etc/metctl/node.json, merged by apply_profile.py;
#   4. the RegionServer: as the systemd unit metctl-regionserver.service, or, without systemd,
#      in the background with its PID in $STATE_DIR/regionserver.pid.
#
# Idempotent: a second run changes nothing and leaves a running RegionServer alone, unless the
# profile (hbase-site.xml) or the command changed, in which case it restarts it. Every path
# can be overridden from the environment (ROOT prefixes all system paths, for tests).
# Exit 2: bad input (a missing node.json or base file, no java and no apt); 1: anything else.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
ROOT=${ROOT:-}
METCTL_SRC=${METCTL_SRC:-$(cd "$here/../.." && pwd)}
NODE_JSON=${NODE_JSON:-$ROOT/etc/metctl/node.json}
BASE_SITE=${BASE_SITE:-$ROOT/etc/metctl/hbase-site.base.xml}
CONF_DIR=${CONF_DIR:-$ROOT/etc/hbase/conf}
STATE_DIR=${STATE_DIR:-$ROOT/var/lib/metctl-node}
LOG_DIR=${LOG_DIR:-$ROOT/var/log/hbase}
UNIT_DIR=${UNIT_DIR:-$ROOT/etc/systemd/system}
export METCTL_CACHE=${METCTL_CACHE:-$ROOT/var/cache/metctl}
HBASE_HOME=${HBASE_HOME:-}          # an existing HBase (lib/ and optionally webapps/): no fetch
HBASE_VERSION=${HBASE_VERSION:-}    # empty: metctl's default (actuator/hbase_jars.py)
HBASE_HEAP=${HBASE_HEAP:-1g}
HBASE_OPTS=${HBASE_OPTS:-}          # further JVM flags, split on spaces
HBASE_USER=${HBASE_USER:-hbase}     # the unit's user (systemd only; created when missing)
INSTALL_PACKAGES=${INSTALL_PACKAGES:-auto}  # auto: apt-get what is missing; no: refuse
SYSTEMD=${SYSTEMD:-auto}            # auto: when systemd runs this machine and ROOT is empty
PYTHON=${PYTHON:-python3}
UNIT=metctl-regionserver.service

say() { printf 'metctl-node: %s\n' "$*" >&2; }
bad() { say "$*"; exit 2; }

[ -r "$NODE_JSON" ] || bad "$NODE_JSON: no node document (metctl's user data writes it)"
[ -r "$BASE_SITE" ] || bad "$BASE_SITE: no base hbase-site.xml (hbase.zookeeper.quorum, hbase.rootdir: put it in the image or the user data)"
command -v "$PYTHON" >/dev/null 2>&1 || bad "$PYTHON not found: the bootstrap needs python3 (Debian cloud images have it)"

apt_install() {
    [ "$INSTALL_PACKAGES" != no ] || bad "$1 is missing and INSTALL_PACKAGES=no: install $2"
    command -v apt-get >/dev/null 2>&1 || bad "$1 is missing and there is no apt-get: install $2"
    say "installing $2 with apt"
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$2"
}

# 1. Java. HBase 2.6 runs on 17; Debian 13 ships 21 only, which its default-jre-headless is.
if ! command -v java >/dev/null 2>&1; then
    pkg=default-jre-headless
    apt-cache show openjdk-17-jre-headless >/dev/null 2>&1 && pkg=openjdk-17-jre-headless
    apt_install java "$pkg"
fi

# 2. HBase's jars, and the JDK 17 flags HBase needs, from metctl's local cluster module (one
# place for both; it imports only the standard library and actuator/hbase_jars.py).
if [ -z "$HBASE_HOME" ] && ! command -v mvn >/dev/null 2>&1; then
    # the fetch needs Maven unless the cache already holds the jars
    "$PYTHON" - "$METCTL_SRC" "$HBASE_VERSION" <<'EOF' || apt_install mvn maven
import sys
sys.path.insert(0, sys.argv[1])
from actuator import hbase_jars
sys.exit(0 if hbase_jars.present(hbase_jars.home_for(sys.argv[2] or hbase_jars.HBASE_VERSION)) else 1)
EOF
fi
jvm=$("$PYTHON" - "$METCTL_SRC" "$HBASE_VERSION" "$HBASE_HOME" <<'EOF'
import sys
src, version, home = sys.argv[1:4]
sys.path.insert(0, src)
from deploy.local_hbase import cluster
if not home:
    try:
        home = str(cluster.fetch(version or cluster.HBASE_VERSION))
    except cluster.ClusterError as err:
        sys.exit(f"metctl-node: HBase jars: {err}")
print(home)
print(" ".join(cluster.JDK17_FLAGS))
EOF
) || exit 1
home=$(printf '%s\n' "$jvm" | sed -n 1p)
jdk_flags=$(printf '%s\n' "$jvm" | sed -n 2p)
[ -d "$home/lib" ] || bad "$home/lib: no HBase jars there (HBASE_HOME must hold lib/)"
webapps=$home/webapps
[ -d "$webapps" ] || webapps=$home  # a release tarball's layout: hbase-webapps/ in HBASE_HOME

# 3. hbase-site.xml = base + profile.
mkdir -p "$CONF_DIR" "$STATE_DIR" "$LOG_DIR"
site_result=$("$PYTHON" "$here/apply_profile.py" "$CONF_DIR/hbase-site.xml" "$NODE_JSON" --base "$BASE_SITE")
say "$site_result"
if [ ! -e "$CONF_DIR/log4j.properties" ]; then
    # HBase 2.6 logs through reload4j; without a file it logs nothing useful
    printf '%s\n' 'log4j.rootLogger=INFO,console' \
        'log4j.appender.console=org.apache.log4j.ConsoleAppender' \
        'log4j.appender.console.layout=org.apache.log4j.PatternLayout' \
        'log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n' \
        'log4j.logger.org.apache.zookeeper=WARN' 'log4j.logger.org.apache.hadoop=WARN' \
        'log4j.logger.org.apache.hadoop.hbase=INFO' >"$CONF_DIR/log4j.properties"
fi

# 4. The RegionServer's command, as a script both the unit and the background start run.
# Every value is quoted (%q): paths and flags come from the environment.
run=$STATE_DIR/run-regionserver
new_run=$(
    printf '#!/usr/bin/env bash\n# written by deploy/node/bootstrap.sh: the RegionServer of this node\nexec java'
    # shellcheck disable=SC2086  # flag lists are split on purpose
    for a in "-Xmx$HBASE_HEAP" $jdk_flags $HBASE_OPTS "-Dhbase.log.dir=$LOG_DIR" \
             -cp "$CONF_DIR:$webapps:$home/lib/*" org.apache.hadoop.hbase.regionserver.HRegionServer start; do
        printf ' %q' "$a"
    done
    printf '\n'
)
changed=no
case $site_result in *" applied") changed=yes ;; esac
if [ ! -f "$run" ] || [ "$(cat "$run")" != "$new_run" ]; then
    printf '%s\n' "$new_run" >"$run.tmp" && chmod 0755 "$run.tmp" && mv "$run.tmp" "$run"
    changed=yes
fi

if [ "$SYSTEMD" = auto ]; then
    SYSTEMD=no
    [ -z "$ROOT" ] && [ -d /run/systemd/system ] && SYSTEMD=yes
fi

if [ "$SYSTEMD" = yes ]; then
    id "$HBASE_USER" >/dev/null 2>&1 || useradd --system --home-dir "$STATE_DIR" --shell /usr/sbin/nologin "$HBASE_USER"
    chown -R "$HBASE_USER:" "$LOG_DIR"
    unit_text="[Unit]
Description=HBase RegionServer (metctl node, deploy/node/bootstrap.sh)
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
User=$HBASE_USER
ExecStart=$run
# SIGTERM is HBase's graceful stop: the RegionServer closes its regions, the master moves them
KillSignal=SIGTERM
TimeoutStopSec=300
Restart=on-failure
RestartSec=10s
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target"
    if [ ! -f "$UNIT_DIR/$UNIT" ] || [ "$(cat "$UNIT_DIR/$UNIT")" != "$unit_text" ]; then
        mkdir -p "$UNIT_DIR"
        printf '%s\n' "$unit_text" >"$UNIT_DIR/$UNIT"
        systemctl daemon-reload
        changed=yes
    fi
    systemctl enable "$UNIT" >/dev/null 2>&1
    if [ "$changed" = yes ]; then systemctl restart "$UNIT"; else systemctl start "$UNIT"; fi
    say "$UNIT started"
    exit 0
fi

# Without systemd: one background RegionServer, its PID recorded; a recorded PID counts only
# while its command line still names our conf dir (a recycled PID is never signalled).
pidfile=$STATE_DIR/regionserver.pid
ours() { [ -n "$1" ] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$CONF_DIR:"; }
pid=$(cat "$pidfile" 2>/dev/null || true)
if ours "$pid"; then
    if [ "$changed" = no ]; then
        say "RegionServer already running (PID $pid)"
        exit 0
    fi
    say "settings changed: stopping RegionServer PID $pid"
    kill -TERM "$pid"
    i=0
    while ours "$pid" && [ $i -lt 300 ]; do sleep 1; i=$((i + 1)); done
    ours "$pid" && kill -KILL "$pid"
fi
cd "$STATE_DIR"
setsid "$run" </dev/null >>"$LOG_DIR/regionserver.out" 2>&1 &
printf '%s\n' "$!" >"$pidfile"
say "RegionServer started (PID $!, log $LOG_DIR/regionserver.out)"
