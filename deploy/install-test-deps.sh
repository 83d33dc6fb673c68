#!/usr/bin/env bash
# Install the real components the integration tests start on loopback (Debian packages).
# Idempotent: installs only what is missing. Needs root (or everything already present).
set -euo pipefail
need=()
command -v gmond  >/dev/null || need+=(ganglia-monitor)
command -v gmetad >/dev/null || need+=(gmetad)
command -v gmetric >/dev/null || need+=(ganglia-monitor)
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeper)
command -v java >/dev/null || need+=(default-jre-headless)
command -v mvn  >/dev/null || need+=(maven)
# promtool: tests of deploy/prometheus rules; prometheus + node_exporter: the Prometheus source's
command -v promtool >/dev/null && command -v prometheus >/dev/null || need+=(prometheus)
command -v prometheus-node-exporter >/dev/null || need+=(prometheus-node-exporter)
# a real browser for the console's tests (Playwright drives it; its own download is not used)
[ -x /usr/bin/chromium ] || need+=(chromium)
# tmux: the live view's test in a real terminal (capture-pane shows what an operator sees)
command -v tmux >/dev/null || need+=(tmux)
if ((${#need[@]})); then
  if [ "$(id -u)" != 0 ]; then echo "missing test components (${need[*]}); run as root" >&2; exit 2; fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Further components (HBase jars from Maven Central, …) are fetched by their own scripts,
# cached under ~/.cache/metctl, and called from here as they arrive.
for hook in deploy/test-deps.d/*.sh; do
  [ -e "$hook" ] || continue
  bash "$hook"
done
