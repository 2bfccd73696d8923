import autocannon from 'autocannon';
import {
  type ListLoadStack,
  percentile,
  PrometheusText,
  type ServiceProcess,
  startListLoadStack,
} from '@app/testing';

/**
 * Overload (docs/operations.md, "Overload and time bounds"): a real gateway and conversations service (processes) on
 * 127.0.0.1, driven by autocannon first at a moderate closed-loop load (its sustainable rate
 * here), then at twice and four times that rate. Past its bounds the gateway sheds load (503
 * `overloaded` with Retry-After, at once) instead of queueing: nothing is a 500, health answers
 * throughout. API keys expire from the cache every second, and each is read from Postgres once
 * per refresh, however many requests use it. The admitted requests' latency goal is held by the
 * open-loop bench (`npm run bench:overload`), never asserted here.
 *
 * Bounded: about 25 s of load. Latencies are of admitted (200) requests sent after the first
 * second of each run (while autocannon opens its connections). The figures are printed, and
 * recorded in BENCHMARKS.md.
 */

const KEYS = 20;
const AUTH_CACHE_TTL_MS = 1000;
const CALIBRATION_SECONDS = 5;
const OVERLOAD_SECONDS = 8;
/** The first second of a run opens its connections; latencies are measured after it. */
const WARM_UP_MS = 1000;

interface LoadFigures {
  offeredRate?: number;
  connections: number;
  seconds: number;
  statuses: Record<number, number>;
  admitted: number;
  admittedPerSecond: number;
  admittedP50Ms: number;
  admittedP99Ms: number;
  /** Transport errors and timeouts seen by the client. */
  errors: number;
}

describe('overload: a real gateway at 2x and 4x its sustainable rate', () => {
  let stack: ListLoadStack;
  let gateway: ServiceProcess;
  let apiKeys: string[];

  beforeAll(async () => {
    stack = await startListLoadStack({
      name: 'overload',
      accounts: KEYS,
      // The default bounds: the in-flight limit adapts to the time requests take.
      gatewayEnv: { AUTH_CACHE_TTL_MS: String(AUTH_CACHE_TTL_MS), DATABASE_POOL_SIZE: '4' },
    });
    ({ gateway, apiKeys } = stack);
  }, 120_000);

  afterAll(() => stack?.stop());

  /** autocannon on the list endpoint, connections spread over the keys; latency per response. */
  async function drive(options: {
    connections: number;
    seconds: number;
    overallRate?: number;
  }): Promise<LoadFigures> {
    let next = 0;
    const statuses: Record<number, number> = {};
    let admitted = 0;
    /** Latencies of admitted requests sent after the warm-up (connections being opened). */
    const latencies: number[] = [];
    const startedAt = performance.now();
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: `${gateway.url}/v1/conversations?limit=5`,
          connections: options.connections,
          duration: options.seconds,
          overallRate: options.overallRate,
          timeout: 10,
          setupClient: (client) => {
            client.setHeaders({ authorization: `Bearer ${apiKeys[next++ % apiKeys.length]}` });
          },
        },
        (error: Error | null, finished) => (error ? reject(error) : resolve(finished)),
      );
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
        if (statusCode !== 200) return;
        admitted += 1;
        if (performance.now() - responseTime - startedAt >= WARM_UP_MS) latencies.push(responseTime);
      });
    });
    latencies.sort((a, b) => a - b);
    return {
      offeredRate: options.overallRate,
      connections: options.connections,
      seconds: options.seconds,
      statuses,
      admitted,
      admittedPerSecond: Math.round(admitted / options.seconds),
      admittedP50Ms: Math.round(percentile(latencies, 50)),
      admittedP99Ms: Math.round(percentile(latencies, 99)),
      errors: result.errors + result.timeouts,
    };
  }

  /** Polls /health/live while `work` runs: every answer's status and time. */
  async function healthDuring<T>(
    work: Promise<T>,
  ): Promise<{ result: T; health: Array<{ status: number; ms: number }> }> {
    const health: Array<{ status: number; ms: number }> = [];
    let running = true;
    const poller = (async () => {
      while (running) {
        const startedAt = performance.now();
        const response = await fetch(`${gateway.url}/health/live`).catch(() => undefined);
        health.push({ status: response?.status ?? 0, ms: performance.now() - startedAt });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const result = await work;
    running = false;
    await poller;
    return { result, health };
  }

  it('at 2x and 4x: shedding engages, no 500 (nor any 5xx but 503 overloaded), health answers; each key read once per refresh', async () => {
    const before = await PrometheusText.scrape(gateway.url);
    const sustainable = await drive({ connections: 16, seconds: CALIBRATION_SECONDS });
    const rate = sustainable.admittedPerSecond;
    expect(rate).toBeGreaterThan(20);
    const double = await healthDuring(
      drive({ connections: 300, seconds: OVERLOAD_SECONDS, overallRate: 2 * rate }),
    );
    const quadruple = await healthDuring(
      drive({ connections: 600, seconds: OVERLOAD_SECONDS, overallRate: 4 * rate }),
    );
    const after = await PrometheusText.scrape(gateway.url);
    const figures = { sustainable, double: double.result, quadruple: quadruple.result };
    // The figures BENCHMARKS.md records.
    console.log(`overload figures: ${JSON.stringify(figures, null, 2)}`);

    for (const [name, run] of Object.entries(figures)) {
      const failures = Object.entries(run.statuses).filter(
        ([status]) => Number(status) >= 500 && status !== '503',
      );
      expect({ name, failures, errors: run.errors }).toEqual({ name, failures: [], errors: 0 });
    }
    const shed = ['in_flight', 'event_loop_delay', 'queued', 'limiter_late']
      .map((reason) => after.since(before, 'cms_http_requests_shed_total', { reason }))
      .reduce((a, b) => a + b, 0);
    expect(quadruple.result.statuses[503] ?? 0).toBeGreaterThan(0);
    // Every 503 was a shed request (a few more were shed as autocannon stopped, unrecorded).
    expect(shed).toBeGreaterThanOrEqual(
      (double.result.statuses[503] ?? 0) + (quadruple.result.statuses[503] ?? 0),
    );
    // (The admitted rate is printed, not checked: with the load generator on the same two cores
    // it depends on how much CPU generating 4x the load takes; see BENCHMARKS.md.)
    // Latency is printed, not asserted (a shared machine): `npm run bench:overload` holds the
    // admitted p99 to its goal with an open loop (BENCHMARKS.md, "Overload").
    for (const run of [double.result, quadruple.result]) expect(run.admitted).toBeGreaterThan(0);
    for (const probe of [...double.health, ...quadruple.health]) expect(probe.status).toBe(200);

    // Coalesced, refreshed-ahead key reads: at most one per key per refresh period (3/4 TTL),
    // where every request that found its entry expired reading it would be thousands.
    const reads = after.since(before, 'cms_api_key_reads_total');
    const seconds = CALIBRATION_SECONDS + 2 * OVERLOAD_SECONDS + 10;
    expect(reads).toBeLessThanOrEqual(KEYS * Math.ceil(seconds / ((0.75 * AUTH_CACHE_TTL_MS) / 1000)));
  }, 180_000);
});
