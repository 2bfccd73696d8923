import autocannon from 'autocannon';
import { type ListLoadStack, PrometheusText, startListLoadStack } from '@app/testing';
import { openLoop, type OpenLoopResult } from './open-loop';

/**
 * `npm run bench:overload` (BENCHMARKS.md, "Overload"): a real gateway, with its default shedding
 * bounds (the adaptive in-flight limit), and a conversations service as processes. First the
 * sustainable rate (a closed loop of 16 connections, 5 s), then an open loop at 2x and 4x that
 * rate over OVERLOAD_CONNECTIONS connections: `GET /v1/conversations?limit=5` over 20 accounts
 * whose limit is far away, so the limiter checks every request and refuses none. The goal, which
 * fails this run when missed: at 2x and 4x the admitted (200) requests keep a client-side p99
 * under 1 s, nothing but 200 and 503 `overloaded`, and the limiter never fails open (a check
 * that timed out admitted uncounted). Run it under `flock /work/.bench.lock` on a shared machine.
 */

const KEYS = 20;
const SECONDS = Number(process.env.OVERLOAD_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.OVERLOAD_CONNECTIONS ?? 1000);
const P99_GOAL_MS = 1000;

describe('overload bench: open loop at 2x and 4x the sustainable rate', () => {
  let stack: ListLoadStack;

  beforeAll(async () => {
    stack = await startListLoadStack({ name: 'overload-bench', accounts: KEYS });
  }, 180_000);

  afterAll(() => stack?.stop());

  it('keeps the admitted p99 under 1 s at the client, sheds the rest, never fails open', async () => {
    const { gateway, apiKeys } = stack;
    const url = `${gateway.url}/v1/conversations?limit=5`;
    let next = 0;
    const calibration = await new Promise<autocannon.Result>((resolve, reject) =>
      autocannon(
        {
          url,
          connections: 16,
          duration: 5,
          setupClient: (client) =>
            client.setHeaders({ authorization: `Bearer ${apiKeys[next++ % apiKeys.length]}` }),
        },
        (error: Error | null, result) => (error ? reject(error) : resolve(result)),
      ),
    );
    const sustainable = Math.round(calibration.requests.average);
    const runs: Record<string, OpenLoopResult & { shed: number; failOpen: number }> = {};
    for (const factor of [2, 4]) {
      const before = await PrometheusText.scrape(gateway.url);
      const result = await openLoop({
        url,
        rate: factor * sustainable,
        seconds: SECONDS,
        connections: CONNECTIONS,
        headers: (i) => ({ authorization: `Bearer ${apiKeys[i % apiKeys.length]}` }),
      });
      const after = await PrometheusText.scrape(gateway.url);
      runs[`${factor}x`] = {
        ...result,
        shed: ['in_flight', 'event_loop_delay', 'queued', 'limiter_late']
          .map((reason) => after.since(before, 'cms_http_requests_shed_total', { reason }))
          .reduce((a, b) => a + b, 0),
        failOpen: after.since(before, 'cms_rate_limiter_errors_total', { fail_mode: 'open' }),
      };
      await new Promise((resolve) => setTimeout(resolve, 3000)); // the queue drains between runs
    }
    const figures = { sustainable: { rps: sustainable, p99Ms: calibration.latency.p99 }, ...runs };
    console.log(`overload bench figures: ${JSON.stringify(figures, null, 2)}`);
    for (const [name, run] of Object.entries(runs)) {
      const other = Object.keys(run.statuses).filter((status) => status !== '200' && status !== '503');
      expect({ name, other, failOpen: run.failOpen, p99Under1s: run.admittedP99Ms < P99_GOAL_MS }).toEqual({
        name,
        other: [],
        failOpen: 0,
        p99Under1s: true,
      });
    }
  }, 600_000);
});
