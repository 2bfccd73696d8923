#!/usr/bin/env bash
# `npm run bench:compare`: the baseline's `broker` variant and `npm run bench` (list, get, send),
# alternating ROUNDS times in one sitting, each on its own database and RabbitMQ vhost, then the
# medians side by side (CPU per request, throughput, p99), then CPU per request by process.
# Knobs: ROUNDS=3 DURATION=15 WARMUP=5 BASELINE_DIR=bench/baseline. Takes about 3 minutes per
# round on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-5}
BASELINE_DIR=$(cd "${BASELINE_DIR:-bench/baseline}" && pwd)
# The baseline writes its results (and node_modules) next to itself: a read-only checkout of it
# is run from a copy.
if [ ! -w "$BASELINE_DIR" ]; then
  copy=${TMPDIR:-/tmp}/cms-bench-baseline
  rm -rf "$copy" && cp -r "$BASELINE_DIR" "$copy" && chmod -R u+w "$copy"
  BASELINE_DIR=$copy
fi
OUT_DIR=bench/results/compare-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT_DIR"

# The baseline's queue is not durable and ours is: its own vhost keeps them apart (and from anyone else's).
rabbitmqctl -q add_vhost bench 2>/dev/null || true
rabbitmqctl -q set_permissions -p bench guest '.*' '.*' '.*'

npm run build >&2
for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round/$ROUNDS: baseline broker" >&2
  (cd "$BASELINE_DIR" && AMQP_URL=amqp://guest:guest@127.0.0.1:5672/bench VARIANTS=broker REPS=1 \
    DURATION="$DURATION" WARMUP="$WARMUP" ./run.sh) | tee "$OUT_DIR/baseline-$round.txt" >&2
  cp "$(ls -t "$BASELINE_DIR"/results/run-*.jsonl | head -1)" "$OUT_DIR/baseline-$round.jsonl"
  echo "# round $round/$ROUNDS: stack" >&2
  node dist/bench/run.js --skip-webhooks --skip-limiter-cost --duration "$DURATION" --warmup "$WARMUP" \
    | tee "$OUT_DIR/stack-$round.txt" >&2
  cp "$(ls -t bench/results/run-*.jsonl | head -1)" "$OUT_DIR/stack-$round.jsonl"
done
node -r @swc-node/register bench/compare-report.ts "$OUT_DIR"
