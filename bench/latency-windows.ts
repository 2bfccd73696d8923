/**
 * Where a load's slowest requests came from: `BENCH_TRACE_DIR=/tmp/trace npm run bench -- ...`
 * records every response's time and latency and each service's garbage collections; then
 * `npm run bench:latency-windows -- /tmp/trace` prints, for each load, its
 * p50 and p99, the 100-ms windows that held at least five requests slower than the p99, with the
 * collections of each service around them (pauses of 3 ms or more, and every mark-compact), and
 * each service's collections during the load.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface Collection {
  at: number;
  service: string;
  kind: string;
  pauseMs: number;
}

const WINDOW_MS = 100;
const SLOW_IN_WINDOW = 5;

function collections(dir: string): Collection[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.gc.log'))
    .flatMap((file) => {
      const [service, , spawnedAt] = file.replace('.gc.log', '').split('-');
      return readFileSync(path.join(dir, file), 'utf8')
        .split('\n')
        .map((line) =>
          /\s(\d+) ms: (Scavenge|Mark-Compact|Minor Mark-Compact)\b.*?MB, ([\d.]+) \//.exec(line),
        )
        .filter((match): match is RegExpExecArray => match !== null)
        .map((match) => ({
          at: Number(spawnedAt) + Number(match[1]),
          service,
          kind: match[2],
          pauseMs: Number(match[3]),
        }));
    });
}

const signed = (ms: number) => (ms < 0 ? `${ms}` : `+${ms}`);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function report(dir: string, file: string, gcs: Collection[]): void {
  const responses = readFileSync(path.join(dir, file), 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split('\t').map(Number) as [number, number]);
  if (responses.length === 0) return;
  const latencies = responses.map(([, latency]) => latency).sort((a, b) => a - b);
  const p99 = percentile(latencies, 0.99);
  const start = responses[0][0];
  const end = responses[responses.length - 1][0];
  console.log(`${file}: ${responses.length} requests, p50 ${percentile(latencies, 0.5)} ms, p99 ${p99} ms`);
  const windows = new Map<number, number[]>();
  for (const [at, latency] of responses) {
    const index = Math.floor((at - start) / WINDOW_MS);
    const window = windows.get(index);
    if (window) window.push(latency);
    else windows.set(index, [latency]);
  }
  for (const [index, window] of [...windows].sort(([a], [b]) => a - b)) {
    const slow = window.filter((latency) => latency >= p99).length;
    if (slow < SLOW_IN_WINDOW) continue;
    const from = start + index * WINDOW_MS;
    const near = gcs
      .filter(
        (gc) =>
          gc.at >= from - 150 && gc.at <= from + WINDOW_MS && (gc.pauseMs >= 3 || gc.kind !== 'Scavenge'),
      )
      .map((gc) => `${gc.service} ${gc.kind} ${gc.pauseMs} ms at ${signed(gc.at - start)} ms`);
    console.log(
      `  +${index * WINDOW_MS} ms: ${window.length} requests, ${slow} over the p99, slowest ${Math.max(...window)} ms; ${near.join(', ') || 'no collection'}`,
    );
  }
  const during = gcs.filter((gc) => gc.at >= start && gc.at <= end);
  for (const service of [...new Set(during.map((gc) => gc.service))].sort()) {
    for (const kind of ['Scavenge', 'Mark-Compact']) {
      const pauses = during
        .filter((gc) => gc.service === service && gc.kind === kind)
        .map((gc) => gc.pauseMs);
      const total = pauses.reduce((sum, pause) => sum + pause, 0);
      console.log(
        `  ${service}: ${pauses.length} ${kind}, ${total.toFixed(0)} ms in all, longest ${Math.max(0, ...pauses)} ms`,
      );
    }
  }
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: latency-windows.ts <BENCH_TRACE_DIR>');
const gcs = collections(dir);
for (const file of readdirSync(dir).filter((name) => name.endsWith('.tsv') && !name.includes('warmup'))) {
  report(dir, file, gcs);
}
