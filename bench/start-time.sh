#!/usr/bin/env bash
# `npm run bench:start`: how long `npm start` takes, with nothing changed since the last build,
# until it prints that the gateway is ready, and the CPU its processes used by then (the figure a
# loaded machine distorts least). ROUNDS=3 starts in a row, each stopped once ready; on a database,
# RabbitMQ vhost and Redis prefix of their own (`cms_bench_start`) and gateway port 3990.
# The load average before each start is printed with it: compare figures taken at similar loads.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
NAME=cms_bench_start
createdb -h 127.0.0.1 -U postgres "$NAME" 2>/dev/null || true
rabbitmqctl -q add_vhost "$NAME" 2>/dev/null || true
rabbitmqctl -q set_permissions -p "$NAME" guest '.*' '.*' '.*'
export DATABASE_URL=postgres://postgres@127.0.0.1:5432/$NAME
export AMQP_URL=amqp://guest:guest@127.0.0.1:5672/$NAME
export REDIS_KEY_PREFIX=$NAME: PORT=3990 OPS_PORT=0 LOG_LEVEL=warn
npm run -s build >&2
ticks=$(getconf CLK_TCK)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  : >"$out"
  started=$(date +%s%N)
  setsid npm start >"$out" 2>&1 &
  group=$!
  until grep -q 'ready: API' "$out"; do
    if ! kill -0 "$group" 2>/dev/null; then
      cat "$out" >&2
      exit 1
    fi
    sleep 0.1
  done
  ready=$(( ($(date +%s%N) - started) / 1000000 ))
  cpu=0
  for pid in $(ps -o pid= -s "$group"); do
    cpu=$((cpu + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  gateway=$(pgrep -s "$group" -f 'services/gateway/src/main' | head -1)
  gateway_cpu=$(awk '{print $14 + $15}' "/proc/$gateway/stat")
  echo "round $round: ready after ${ready} ms; CPU $((cpu * 1000 / ticks)) ms in all, gateway $((gateway_cpu * 1000 / ticks)) ms; load average $load"
  kill -TERM -- "-$group"
  wait "$group" || true
done
