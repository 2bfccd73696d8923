#!/usr/bin/env bash
# Starts the HA testbed on 127.0.0.1 from Debian packages (installed if missing): a three-node
# RabbitMQ cluster, Postgres 15 under Patroni (leader + 2 replicas, etcd) behind HAProxy, and a
# Redis primary + replica watched by three Sentinels. Idempotent: what already runs is kept.
# `npm run ha:down` stops exactly what this started (the pid files under $HA_STATE/pids).
# Exits 77 when the packages cannot be installed (CI then skips the HA stage).
set -euo pipefail
source "$(dirname "$0")/env.sh"

PACKAGES=(rabbitmq-server postgresql-15 patroni python3-etcd etcd-server haproxy redis-server redis-sentinel)

install_missing() {
  local missing=()
  for package in "${PACKAGES[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]}"
  # Debian starts packaged daemons on install; the testbed runs its own instances instead.
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  local status=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } || status=$?
  rm -f /usr/sbin/policy-rc.d
  if [ "$status" -ne 0 ]; then
    echo "cannot install ${missing[*]} (apt-get exited $status): no HA testbed on this machine" >&2
    exit 77
  fi
}

alive() { [ -f "$HA_STATE/pids/$1" ] && kill -0 "$(cat "$HA_STATE/pids/$1")" 2>/dev/null; }

# Waits (bounded) until `command` succeeds.
wait_for() {
  local what=$1 seconds=$2
  shift 2
  for _ in $(seq "$seconds"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "timed out waiting for $what; the testbed's logs end:" >&2
  local log
  for log in "$HA_STATE"/*/*.log "$HA_STATE"/*/*/*.log; do
    [ -f "$log" ] && { echo "--- $log" && tail -n 15 "$log"; } >&2
  done
  return 1
}

# A node that is alive (its pid file names a live process) is kept; ha:up checks nothing more on it,
# so restoring the one node a fault killed costs that node's start-up only (rabbitmqctl boots an
# Erlang VM per call: seconds each on a loaded machine).
rabbit_ctl() { /usr/lib/rabbitmq/bin/rabbitmqctl "$@"; }

start_rabbit() {
  mkdir -p "$HA_STATE/rabbit-home"
  local cookie="$HA_STATE/rabbit-home/.erlang.cookie"
  [ -f "$cookie" ] || { echo "CMSHATESTBEDCOOKIE" >"$cookie" && chmod 400 "$cookie"; }
  echo "[]." >"$HA_STATE/rabbit-home/enabled_plugins"
  printf 'loopback_users = none\ncluster_partition_handling = pause_minority\n' >"$HA_STATE/rabbit-home/rabbitmq.conf"
  echo "[]." >"$HA_STATE/rabbit-home/advanced.config"
  local started=() index
  for index in 0 1 2; do
    alive "rabbit-$index" && continue
    started+=("$index")
    (
      rabbit_env "$index"
      mkdir -p "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
      exec setsid /usr/lib/rabbitmq/bin/rabbitmq-server >"$RABBITMQ_LOG_BASE/console.log" 2>&1 </dev/null
    ) &
  done
  # The nodes boot side by side; each waits for its own start-up. A node that was a member before
  # (a restart after a fault) rejoins by itself; a new one joins the first node's cluster.
  local waits=()
  for index in "${started[@]}"; do
    (
      rabbit_env "$index"
      # await_startup needs the Erlang node up first; a cold start takes a few seconds to get there.
      wait_for "rabbitmq node $RABBITMQ_NODENAME" 90 rabbit_ctl -q ping
      rabbit_ctl -q await_startup --timeout 120 >/dev/null
    ) &
    waits+=($!)
  done
  for index in "${!waits[@]}"; do wait "${waits[$index]}" || { echo "rabbitmq node ${HA_RABBIT_NODES[${started[$index]}]} did not start" >&2; return 1; }; done
  for index in 1 2; do
    [ -f "$HA_STATE/rabbit-$index/joined" ] && continue
    (
      rabbit_env "$index"
      rabbit_ctl -q stop_app
      rabbit_ctl -q join_cluster "${HA_RABBIT_NODES[0]}"
      rabbit_ctl -q start_app
    )
    touch "$HA_STATE/rabbit-$index/joined"
  done
  echo "rabbitmq: ${HA_RABBIT_NODES[*]} on ${HA_RABBIT_PORTS[*]}"
}

start_redis() {
  mkdir -p "$HA_STATE/redis"
  local dir="$HA_STATE/redis"
  alive "redis-$HA_REDIS_PRIMARY_PORT" || redis-server --port "$HA_REDIS_PRIMARY_PORT" --bind 127.0.0.1 --dir "$dir" \
    --dbfilename primary.rdb --save '' --appendonly no --daemonize yes \
    --pidfile "$HA_STATE/pids/redis-$HA_REDIS_PRIMARY_PORT" --logfile "$dir/primary.log"
  alive "redis-$HA_REDIS_REPLICA_PORT" || redis-server --port "$HA_REDIS_REPLICA_PORT" --bind 127.0.0.1 --dir "$dir" \
    --dbfilename replica.rdb --save '' --appendonly no --daemonize yes \
    --replicaof 127.0.0.1 "$HA_REDIS_PRIMARY_PORT" \
    --pidfile "$HA_STATE/pids/redis-$HA_REDIS_REPLICA_PORT" --logfile "$dir/replica.log"
  for port in "${HA_SENTINEL_PORTS[@]}"; do
    alive "sentinel-$port" && continue
    # Sentinel rewrites its configuration file, so each gets its own copy.
    cat >"$dir/sentinel-$port.conf" <<EOF
port $port
bind 127.0.0.1
daemonize yes
pidfile $HA_STATE/pids/sentinel-$port
logfile $dir/sentinel-$port.log
sentinel monitor $HA_SENTINEL_NAME 127.0.0.1 $HA_REDIS_PRIMARY_PORT 2
sentinel down-after-milliseconds $HA_SENTINEL_NAME 2000
sentinel failover-timeout $HA_SENTINEL_NAME 10000
EOF
    redis-sentinel "$dir/sentinel-$port.conf"
  done
  wait_for "redis sentinels" 30 redis-cli -p "${HA_SENTINEL_PORTS[0]}" sentinel get-master-addr-by-name "$HA_SENTINEL_NAME"
  echo "redis: primary $HA_REDIS_PRIMARY_PORT, replica $HA_REDIS_REPLICA_PORT, sentinels ${HA_SENTINEL_PORTS[*]} ($HA_SENTINEL_NAME)"
}

start_etcd() {
  alive etcd && return 0
  mkdir -p "$HA_STATE/etcd"
  setsid etcd --name cms-ha --data-dir "$HA_STATE/etcd/data" \
    --listen-client-urls "http://127.0.0.1:$HA_ETCD_CLIENT_PORT" \
    --advertise-client-urls "http://127.0.0.1:$HA_ETCD_CLIENT_PORT" \
    --listen-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$HA_ETCD_PEER_PORT" \
    --initial-cluster "cms-ha=http://127.0.0.1:$HA_ETCD_PEER_PORT" \
    --enable-v2=true >"$HA_STATE/etcd/etcd.log" 2>&1 </dev/null &
  echo $! >"$HA_STATE/pids/etcd"
  wait_for etcd 30 curl -sf "http://127.0.0.1:$HA_ETCD_CLIENT_PORT/health"
}

start_patroni() {
  for index in 0 1 2; do
    local name="pg$index" dir="$HA_STATE/patroni/pg$index"
    alive "patroni-$index" && continue
    mkdir -p "$dir"
    chown postgres:postgres "$HA_STATE/patroni" "$dir"
    cat >"$dir/patroni.yml" <<EOF
scope: cms-ha
name: $name
restapi:
  listen: 127.0.0.1:${HA_PATRONI_PORTS[$index]}
  connect_address: 127.0.0.1:${HA_PATRONI_PORTS[$index]}
etcd3:
  host: 127.0.0.1:$HA_ETCD_CLIENT_PORT
bootstrap:
  # Failover fitted within RPC_TIMEOUT_MS, no acknowledged write lost (docs/scaling.md,
  # "Postgres: Patroni behind HAProxy", has the trade-off).
  dcs:
    ttl: 5
    loop_wait: 1
    retry_timeout: 2
    synchronous_mode: true
    synchronous_mode_strict: false
    maximum_lag_on_failover: 1048576
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: 'on'
  initdb: [{ encoding: UTF8 }, { locale: C }]
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${HA_PG_PORTS[$index]}
  connect_address: 127.0.0.1:${HA_PG_PORTS[$index]}
  data_dir: $dir/data
  bin_dir: $HA_PG_BIN
  pgpass: $dir/pgpass
  authentication:
    superuser: { username: postgres, password: postgres }
    replication: { username: postgres, password: postgres }
  parameters:
    unix_socket_directories: $dir
EOF
    chown postgres:postgres "$dir/patroni.yml"
    # From a directory the postgres user may enter: Patroni starts Postgres through Python's
    # multiprocessing, whose child changes into the parent's working directory first (a checkout
    # in a private directory, as mktemp -d makes, left the bootstrap hanging).
    # exec: no shell is left waiting for it, holding the caller's output open.
    (cd "$dir" && exec setsid runuser -u postgres -- patroni "$dir/patroni.yml" >"$dir/patroni.log" 2>&1 </dev/null) &
    # The pid of patroni itself (runuser stays as its parent), found by its own configuration file.
    wait_for "patroni $index" 10 pgrep -u postgres -f "patroni $dir/patroni.yml"
    pgrep -u postgres -f "patroni $dir/patroni.yml" >"$HA_STATE/pids/patroni-$index"
    # The first node bootstraps the cluster; the others clone it once it has a leader. A node
    # restarted after a fault rejoins the existing leader (pg_rewind if it was the old one).
    wait_for "patroni leader" 180 patroni_leader
  done
  wait_for "patroni nodes" 120 patroni_all_running
}

patroni_leader() {
  local port
  for port in "${HA_PATRONI_PORTS[@]}"; do curl -sf -o /dev/null "http://127.0.0.1:$port/primary" && return 0; done
  return 1
}

patroni_all_running() {
  local port
  for port in "${HA_PATRONI_PORTS[@]}"; do curl -sf -o /dev/null "http://127.0.0.1:$port/health" || return 1; done
}

start_haproxy() {
  alive haproxy && return 0
  mkdir -p "$HA_STATE/haproxy"
  {
    printf 'global\n  maxconn 1000\ndefaults\n  mode tcp\n  timeout connect 500ms\n  timeout client 30m\n  timeout server 30m\n  timeout check 1s\n'
    printf 'listen postgres\n  bind 127.0.0.1:%s\n  option httpchk GET /primary\n  http-check expect status 200\n' "$HA_HAPROXY_PORT"
    # Connections to a demoted leader are cut at once, so clients reconnect to the new one.
    # A dead leader is down within a second, a promoted one up within half a second.
    printf '  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions\n'
    for index in 0 1 2; do
      printf '  server pg%s 127.0.0.1:%s check port %s\n' "$index" "${HA_PG_PORTS[$index]}" "${HA_PATRONI_PORTS[$index]}"
    done
  } >"$HA_STATE/haproxy/haproxy.cfg"
  haproxy -D -f "$HA_STATE/haproxy/haproxy.cfg" -p "$HA_STATE/pids/haproxy"
  wait_for haproxy 30 psql "$HA_DATABASE_URL" -Atc 'select 1'
  echo "postgres: patroni ${HA_PATRONI_PORTS[*]}, nodes ${HA_PG_PORTS[*]}, haproxy $HA_HAPROXY_PORT"
}

# The daemons started here must not inherit the caller's descriptors: the lock of a
# `flock /work/.ha.lock npm run ha:up` would stay held by the testbed until ha:down, a test
# runner's sockets open. (255 is the one bash reads this script from.)
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then eval "exec $fd>&-"; fi
done
install_missing
mkdir -p "$HA_STATE/pids"
# The three clusters start side by side (a cold start is then as long as the slowest, RabbitMQ or
# Patroni's bootstrap, not their sum); each line says how long its cluster took.
timed() { local began=$SECONDS; "$@" && echo "($1: $((SECONDS - began)) s)"; }
pids=() names=()
timed start_redis & pids+=($!) names+=(redis)
{ timed start_etcd && timed start_patroni && timed start_haproxy; } & pids+=($!) names+=(postgres)
timed start_rabbit & pids+=($!) names+=(rabbitmq)
failed=()
for index in "${!pids[@]}"; do wait "${pids[$index]}" || failed+=("${names[$index]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  echo "HA testbed not up: ${failed[*]} did not start (see above; npm run ha:down cleans up)" >&2
  exit 1
fi
cat <<EOF
HA testbed up. For the services:
  AMQP_URL=$HA_AMQP_URL
  DATABASE_URL=$HA_DATABASE_URL
  REDIS_SENTINELS=$HA_REDIS_SENTINELS REDIS_SENTINEL_NAME=$HA_SENTINEL_NAME
EOF
