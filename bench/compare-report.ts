import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Medians of the rounds bench/compare.sh ran: for list, get and send, the stack's CPU per
 * request, throughput and p99 against the baseline's `broker` variant, as ratios with the
 * targets in BENCHMARKS.md, "Request path against the baseline" (CPU <= 1.25x, throughput
 * >= 0.8x, p99 <= 1.25x).
 */
interface Row {
  rps: number;
  p99: number;
  microsPerRequest: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ReportLine);

/** One line of a bench result file: the baseline's (cpu_cores) or the stack's (cpuMicros). */
interface ReportLine {
  label: string;
  rps: number;
  p99: number;
  cpu_cores: Record<string, number | undefined>;
  cpuMicros: { total: number };
}

const dir = process.argv[2];
const files = readdirSync(dir);
const ENDPOINTS = { list: 'list', get: 'get', send: 'post' } as const;
const SERVER_GROUPS = ['server', 'gateway', 'worker', 'postgres', 'rabbitmq', 'redis'];

const baseline: Record<string, Row[]> = {};
const stack: Record<string, Row[]> = {};
for (const file of files.filter((name) => name.startsWith('baseline-') && name.endsWith('.jsonl'))) {
  for (const row of lines(path.join(dir, file))) {
    const [, endpoint] = row.label.split('/');
    const cores = SERVER_GROUPS.reduce((sum, group) => sum + (row.cpu_cores[group] ?? 0), 0);
    (baseline[endpoint] ??= []).push({
      rps: row.rps,
      p99: row.p99,
      microsPerRequest: (cores / row.rps) * 1e6,
    });
  }
}
for (const file of files.filter((name) => name.startsWith('stack-') && name.endsWith('.jsonl'))) {
  for (const row of lines(path.join(dir, file))) {
    const endpoint = row.label.replace('stack/', '');
    (stack[endpoint] ??= []).push({ rps: row.rps, p99: row.p99, microsPerRequest: row.cpuMicros.total });
  }
}

console.log(`\n${dir}: medians of ${stack.get?.length ?? 0} rounds (us/req: server-side CPU per request)`);
console.log(
  'endpoint | baseline us/req | stack us/req | CPU ratio (<= 1.25) | req/s ratio (>= 0.8) | p99 ms base/stack | p99 ratio (<= 1.25)',
);
for (const [ours, theirs] of Object.entries(ENDPOINTS)) {
  const b = baseline[theirs];
  const s = stack[ours];
  if (!b || !s) continue;
  const m = (rows: Row[], key: keyof Row) => median(rows.map((row) => row[key]));
  const cell = (value: number) => value.toFixed(2);
  console.log(
    [
      ours,
      Math.round(m(b, 'microsPerRequest')),
      Math.round(m(s, 'microsPerRequest')),
      cell(m(s, 'microsPerRequest') / m(b, 'microsPerRequest')),
      cell(m(s, 'rps') / m(b, 'rps')),
      `${m(b, 'p99')}/${m(s, 'p99')}`,
      cell(m(s, 'p99') / m(b, 'p99')),
    ].join(' | '),
  );
}
