#!/usr/bin/env bash
# Stops what `npm run ha:up` started (by the pids it recorded and the node names it gave RabbitMQ)
# and removes its state. The machine's own servers are not touched.
set -uo pipefail
source "$(dirname "$0")/env.sh"
[ -d "$HA_STATE" ] || { echo "HA testbed not running"; exit 0; }

stop_pid() {
  local file="$HA_STATE/pids/$1"
  [ -f "$file" ] || return 0
  local pid
  pid=$(cat "$file")
  kill "$pid" 2>/dev/null
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -9 "$pid" 2>/dev/null
  rm -f "$file"
}

for index in 0 1 2; do
  (rabbit_env "$index" && /usr/lib/rabbitmq/bin/rabbitmqctl -q stop >/dev/null 2>&1) || stop_pid "rabbit-$index"
done
stop_pid haproxy
for index in 0 1 2; do stop_pid "patroni-$index"; done
# A postmaster left by a SIGKILLed patroni (the fault tests) belongs to the testbed too.
for index in 0 1 2; do
  pidfile="$HA_STATE/patroni/pg$index/data/postmaster.pid"
  [ -f "$pidfile" ] && kill -9 "$(head -1 "$pidfile")" 2>/dev/null
done
stop_pid etcd
for port in "${HA_SENTINEL_PORTS[@]}"; do stop_pid "sentinel-$port"; done
stop_pid "redis-$HA_REDIS_REPLICA_PORT"
stop_pid "redis-$HA_REDIS_PRIMARY_PORT"
rm -rf "$HA_STATE"
echo "HA testbed stopped"
