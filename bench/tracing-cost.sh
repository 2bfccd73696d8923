#!/usr/bin/env bash
# `npm run bench:tracing`: `npm run bench` with tracing off and with every span exported over
# OTLP/HTTP to a sink on this machine (bench/otlp-sink.ts), alternating ROUNDS times in one sitting,
# the limiter's second gateway and the webhooks fan-out left out. Compare the rows' us/req (CPU
# per request of every server process) between `off` and `on`. Knobs: ROUNDS=2 DURATION=15
# WARMUP=5 ENDPOINTS=get,send; the SDK's OTEL_* variables given apply to the `on` runs
# (OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1 for a ratio). About
# 2 minutes per run on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-5}
ENDPOINTS=${ENDPOINTS:-get,send}
SINK_PORT=${SINK_PORT:-4319}
OUT_DIR=bench/results/tracing-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$OUT_DIR"

npm run build >&2
node dist/bench/otlp-sink.js "$SINK_PORT" &
sink=$!
trap 'kill "$sink" 2>/dev/null || true' EXIT

bench() {
  node dist/bench/run.js --skip-webhooks --skip-limiter-cost --endpoints "$ENDPOINTS" \
    --duration "$DURATION" --warmup "$WARMUP"
}
for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round/$ROUNDS: tracing off" >&2
  bench | tee "$OUT_DIR/off-$round.txt" >&2
  echo "# round $round/$ROUNDS: tracing on, exporting" >&2
  OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$SINK_PORT" bench | tee "$OUT_DIR/on-$round.txt" >&2
done
kill "$sink" && wait "$sink" || true
for file in "$OUT_DIR"/*.txt; do
  grep -h 'us/req' "$file" | sed "s|^|$(basename "$file" .txt)  |"
done | sort
