#!/usr/bin/env bash
# Stops what `npm run ha:up` started (by the pids it recorded, the postmasters' pid files and,
# for anything left, the processes running from its state directory) and removes its state.
# Everything is asked to stop at once, then killed after a bounded wait; safe to run twice, or
# after an interrupted ha:up. The machine's own servers are not touched.
set -uo pipefail
source "$(dirname "$0")/env.sh"
mkdir -p "$HA_STATE"

# Pids the testbed recorded: its own pid files and each postmaster's (a SIGKILLed patroni leaves
# its postmaster behind).
recorded_pids() {
  local file
  for file in "$HA_STATE"/pids/* "$HA_STATE"/patroni/pg*/data/postmaster.pid; do
    [ -f "$file" ] && head -1 "$file"
  done
}
# Any process started from the state directory (a node whose pid file was not written yet), or
# listening on one of the testbed's own ports (env.sh; a node whose pid file is gone).
state_pids() {
  pgrep -f -- "$HA_STATE/" || true
  local ports=(
    "${HA_RABBIT_PORTS[@]}" "${HA_RABBIT_DIST_PORTS[@]}" "$HA_REDIS_PRIMARY_PORT" "$HA_REDIS_REPLICA_PORT"
    "${HA_SENTINEL_PORTS[@]}" "$HA_ETCD_CLIENT_PORT" "$HA_ETCD_PEER_PORT" "${HA_PG_PORTS[@]}"
    "${HA_PATRONI_PORTS[@]}" "$HA_HAPROXY_PORT"
  )
  local filter
  filter=$(printf ' or sport = :%s' "${ports[@]}")
  ss -ltnpH "( ${filter# or } )" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2
}

pids=$( { recorded_pids; state_pids; } | grep -E '^[0-9]+$' | sort -u)
for pid in $pids; do kill "$pid" 2>/dev/null; done
for _ in $(seq 20); do
  running=0
  for pid in $pids; do kill -0 "$pid" 2>/dev/null && running=1; done
  [ "$running" = 0 ] && break
  sleep 0.5
done
for pid in $pids $(state_pids | grep -E '^[0-9]+$'); do kill -9 "$pid" 2>/dev/null; done
rm -rf "$HA_STATE"
echo "HA testbed stopped"
