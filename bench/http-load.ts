import { writeFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { cpuPerRequest, CpuGroup, sampleCpu } from './cpu-sampler';

export interface LoadResult {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Server-side CPU per request in microseconds, by process group (load generator excluded). */
  cpuMicros: Record<CpuGroup | 'total', number>;
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  requests: autocannon.Request[];
}

/** Drives one endpoint with autocannon; only loopback targets are allowed. */
export async function runLoad(label: string, options: LoadOptions): Promise<LoadResult> {
  if (!/^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(options.url)) {
    throw new Error(`benchmarks only target loopback addresses, not ${options.url}`);
  }
  const cpuBefore = sampleCpu();
  // BENCH_TRACE_DIR: every response's time (epoch ms) and latency, for bench/latency-windows.ts.
  const traceDir = process.env.BENCH_TRACE_DIR;
  const trace: string[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.durationSeconds,
        pipelining: 1,
        timeout: 10,
        requests: options.requests,
      },
      (error: Error | null, finished) => (error ? reject(error) : resolve(finished)),
    );
    if (traceDir) {
      instance.on('response', (_client, _status, _bytes, latencyMs: number) =>
        trace.push(`${Date.now()}\t${latencyMs.toFixed(2)}`),
      );
    }
  });
  if (traceDir)
    writeFileSync(path.join(traceDir, `${label.replace(/\W+/g, '_')}.tsv`), `${trace.join('\n')}\n`);
  const cpuMicros = cpuPerRequest(cpuBefore, sampleCpu(), Math.max(1, result.requests.total));
  return {
    label,
    cpuMicros,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/**
 * Several loads of one endpoint as one: CPU per request weighted by each load's requests, the
 * median p50 and the highest p99 of the slices.
 */
export function combineLoads(label: string, loads: LoadResult[]): LoadResult {
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const requests = sum(loads.map((load) => load.requests));
  const cpuMicros = Object.fromEntries(
    Object.keys(loads[0].cpuMicros).map((group) => [
      group,
      Math.round(
        sum(loads.map((load) => load.cpuMicros[group as CpuGroup | 'total'] * load.requests)) / requests,
      ),
    ]),
  ) as LoadResult['cpuMicros'];
  const p50s = loads.map((load) => load.p50).sort((a, b) => a - b);
  return {
    label,
    cpuMicros,
    rps: Math.round(sum(loads.map((load) => load.rps)) / loads.length),
    p50: p50s[Math.floor(p50s.length / 2)],
    p99: Math.max(...loads.map((load) => load.p99)),
    requests,
    non2xx: sum(loads.map((load) => load.non2xx)),
    errors: sum(loads.map((load) => load.errors)),
  };
}

export function formatRow(row: LoadResult): string {
  const cpu = row.cpuMicros;
  return `${row.label.padEnd(28)} req/s ${String(row.rps).padStart(6)}   p50 ${String(row.p50).padStart(4)} ms   p99 ${String(
    row.p99,
  ).padStart(
    4,
  )} ms   non-2xx ${row.non2xx}   errors ${row.errors}   us/req ${cpu.total} (gateway ${cpu.gateway}, conversations ${
    cpu.conversations
  }, postgres ${cpu.postgres}, rabbitmq ${cpu.rabbitmq}, redis ${cpu.redis})`;
}
