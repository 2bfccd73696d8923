#!/usr/bin/env bash
# `npm run bench:scale` (BENCHMARKS.md, "Flat as data grows"): list, get and send on an account of 10,000 and one of
# 1,000,000 conversations (10 messages each) in one database, driven in alternating slices, on a
# private Postgres cluster (127.0.0.1:$BENCH_PG_PORT, its own data directory,
# stopped at the end) set up as an operator would for this machine: shared buffers sized to hold
# the data, autovacuum keeping up with a large table. The machine's own Postgres is not touched.
# After the seed: VACUUM ANALYZE, CHECKPOINT and pg_prewarm, so both are measured as on a server
# that has run a while. Knobs: SIZES=10000,1000000 DURATION=30 WARMUP=5 BENCH_PG_PORT=5499
# BENCH_PG_DIR=/var/tmp/cms-bench-pg. About 9 minutes (seeding 10,000,000 messages is 4 of them).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-10000,1000000}
DURATION=${DURATION:-30}
WARMUP=${WARMUP:-5}
PORT=${BENCH_PG_PORT:-5499}
DIR=${BENCH_PG_DIR:-/var/tmp/cms-bench-pg}
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)

# The settings, recorded with the results (BENCHMARKS.md). 24 GiB machine: a quarter for shared
# buffers; autovacuum triggered by 1-2% of a table instead of 10-20%, and allowed to work faster.
SETTINGS=(
  shared_buffers=6GB effective_cache_size=12GB work_mem=16MB maintenance_work_mem=1GB
  max_wal_size=8GB checkpoint_timeout=15min checkpoint_completion_target=0.9
  random_page_cost=1.1 effective_io_concurrency=200
  autovacuum_vacuum_scale_factor=0.02 autovacuum_analyze_scale_factor=0.01
  autovacuum_vacuum_insert_scale_factor=0.02 autovacuum_vacuum_cost_limit=2000 autovacuum_naptime=10s
  max_connections=200 synchronous_commit=on
)

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop() { as_postgres "$BIN/pg_ctl" -D "$DIR" -m fast stop >/dev/null 2>&1 || true; }
trap stop EXIT

if [ ! -s "$DIR/PG_VERSION" ]; then
  mkdir -p "$DIR"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
  as_postgres "$BIN/initdb" -D "$DIR" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
fi
stop
options="-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$DIR"
for setting in "${SETTINGS[@]}"; do options+=" -c $setting"; done
as_postgres "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -o "$options" -w start >/dev/null
echo "# private Postgres on 127.0.0.1:$PORT: ${SETTINGS[*]}"

npm run build >&2
BENCH_ADMIN_DATABASE_URL="postgres://postgres@127.0.0.1:$PORT/postgres" BENCH_DATABASE=cms_bench_scale \
  node dist/bench/run.js --skip-webhooks --skip-limiter-cost --prewarm --sizes "$SIZES" \
  --duration "$DURATION" --warmup "$WARMUP"
