#!/usr/bin/env bash
# `npm run test:alerts`: checks deploy/prometheus/rules.yml and runs its unit tests
# (rules.test.yml) with promtool, and checks prometheus.yml (the compose file's Prometheus, which
# loads those rules). When promtool is missing, it is taken from Debian's `prometheus` package
# (which ships it): the binary alone, put in /usr/local/bin. Installing the package would also
# start its Prometheus service on a host with systemd, holding the port 9090 that the compose
# suite's Prometheus publishes.
set -euo pipefail
cd "$(dirname "$0")/../deploy/prometheus"

install_promtool() {
  echo "test:alerts: promtool missing; taking it from Debian's prometheus package" >&2
  local sudo=() work
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then sudo=(sudo); fi
  work="$(mktemp -d)"
  # Another install on this machine may hold apt's lock: wait for it (up to 10 minutes).
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -q >&2
  (cd "$work" && apt-get -o APT::Sandbox::User="$(id -un)" download prometheus >&2)
  dpkg-deb --fsys-tarfile "$work"/prometheus_*.deb | tar -xO ./usr/bin/promtool >"$work/promtool"
  "${sudo[@]}" install -m 755 "$work/promtool" /usr/local/bin/promtool
  rm -rf "$work"
}

command -v promtool >/dev/null || install_promtool
promtool check rules rules.yml
promtool test rules rules.test.yml
promtool check config prometheus.yml
