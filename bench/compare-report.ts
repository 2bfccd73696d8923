import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Medians of the rounds bench/compare.sh ran: for list, get and send, the stack's CPU per
 * request, throughput and p99 against the baseline's `broker` variant, as ratios with the
 * targets in BENCHMARKS.md, "Request path against the baseline" (CPU <= 1.25x, throughput
 * >= 0.8x, p99 <= 1.25x); then each endpoint's CPU per request process by process, side by side,
 * which is where a gap is looked for.
 */
interface Row {
  rps: number;
  p99: number;
  microsPerRequest: number;
  /** CPU per request of each process, under the names of PROCESSES. */
  byProcess: Record<string, number>;
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
  cpuMicros: Record<string, number> & { total: number };
}

const dir = process.argv[2];
const files = readdirSync(dir);
const ENDPOINTS = { list: 'list', get: 'get', send: 'post' } as const;
const SERVER_GROUPS = ['server', 'gateway', 'worker', 'postgres', 'rabbitmq', 'redis'];
/** The processes that do the same job on both sides: [name in the report, baseline's, stack's]. */
const PROCESSES = [
  ['gateway', 'gateway', 'gateway'],
  ['worker/service', 'worker', 'conversations'],
  ['postgres', 'postgres', 'postgres'],
  ['rabbitmq', 'rabbitmq', 'rabbitmq'],
  ['redis', 'redis', 'redis'],
] as const;

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
      byProcess: Object.fromEntries(
        PROCESSES.map(([name, theirs]) => [name, ((row.cpu_cores[theirs] ?? 0) / row.rps) * 1e6]),
      ),
    });
  }
}
for (const file of files.filter((name) => name.startsWith('stack-') && name.endsWith('.jsonl'))) {
  for (const row of lines(path.join(dir, file))) {
    const endpoint = row.label.replace('stack/', '');
    (stack[endpoint] ??= []).push({
      rps: row.rps,
      p99: row.p99,
      microsPerRequest: row.cpuMicros.total,
      byProcess: Object.fromEntries(PROCESSES.map(([name, , ours]) => [name, row.cpuMicros[ours] ?? 0])),
    });
  }
}

console.log(`\n${dir}: medians of ${stack.get?.length ?? 0} rounds (us/req: server-side CPU per request)`);
console.log(
  'endpoint | baseline us/req | stack us/req | CPU ratio (<= 1.25) | req/s ratio (>= 0.8) | p99 ms base/stack | p99 ratio (<= 1.25)',
);
const m = (rows: Row[], key: Exclude<keyof Row, 'byProcess'>) => median(rows.map((row) => row[key]));
const byProcess = (rows: Row[], name: string) => Math.round(median(rows.map((row) => row.byProcess[name])));
/** The endpoints both sides measured: our name, the baseline's rows, ours. */
const compared = Object.entries(ENDPOINTS).flatMap(([ours, theirs]) =>
  baseline[theirs] && stack[ours] ? [{ endpoint: ours, b: baseline[theirs], s: stack[ours] }] : [],
);

for (const { endpoint, b, s } of compared) {
  const cell = (value: number) => value.toFixed(2);
  console.log(
    [
      endpoint,
      Math.round(m(b, 'microsPerRequest')),
      Math.round(m(s, 'microsPerRequest')),
      cell(m(s, 'microsPerRequest') / m(b, 'microsPerRequest')),
      cell(m(s, 'rps') / m(b, 'rps')),
      `${m(b, 'p99')}/${m(s, 'p99')}`,
      cell(m(s, 'p99') / m(b, 'p99')),
    ].join(' | '),
  );
}

console.log('\nby process, medians of the rounds (us/req, baseline/stack: difference)');
console.log(['endpoint', ...PROCESSES.map(([name]) => name)].join(' | '));
for (const { endpoint, b, s } of compared) {
  const cells = PROCESSES.map(([name]) => {
    const [base, ours] = [byProcess(b, name), byProcess(s, name)];
    return `${base}/${ours}: ${ours - base >= 0 ? '+' : ''}${ours - base}`;
  });
  console.log([endpoint, ...cells].join(' | '));
}
