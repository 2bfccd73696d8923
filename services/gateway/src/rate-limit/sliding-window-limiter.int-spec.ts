import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { gatewaySchema, loadConfig } from '@app/config';
import type { Principal } from '../auth/api-key-authenticator';
import { RateLimitMetrics } from './rate-limit-metrics';
import { RateLimits } from './rate-limits';
import { LimitDecision, SlidingWindowLimiter } from './sliding-window-limiter';
import { sleep } from '@app/testing';

/**
 * The bucketed sliding-window script alone, against the real Redis (docs/rate-limits.md), under
 * a key prefix of its own: memory per subject is bounded by the number of buckets whatever the
 * traffic, and in any window of W ms the admitted requests never exceed the limit. Time is the
 * `nowMs` Redis reports for each call, so the checks do not depend on this process's timing.
 */

const prefix = `${process.env.REDIS_KEY_PREFIX ?? 'cms_test:'}int-sliding-window:${randomBytes(4).toString('hex')}:`;
let subjects = 0;
const newKey = () => `${prefix}${++subjects}`;

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Waits until just after the start of the next bucket (by Redis's clock), so a burst lands in one bucket. */
async function alignToBucket(limiter: SlidingWindowLimiter): Promise<void> {
  const { nowMs } = await limiter.check(`${prefix}clock`, 1_000_000_000);
  await sleep((Math.floor(nowMs / limiter.bucketMs) + 1) * limiter.bucketMs - nowMs + 5);
}

interface Call extends LimitDecision {
  key: string;
}

/**
 * For every admitted request at t, the admitted requests in (t - W, t] are at most `limit`; and
 * the limiter is not trivially strict: some window used the full quota, and over the run it
 * admitted about one quota per W + one bucket (the most the partly expired oldest bucket can hold
 * back; one more bucket of slack for the gaps between calls).
 */
function expectNeverOverLimit(calls: Call[], windowMs: number, bucketMs: number, limit: number): void {
  expect(calls.length).toBeGreaterThan(300);
  const admitted = calls
    .filter((c) => c.admitted)
    .map((c) => c.nowMs)
    .sort((a, b) => a - b);
  let worst = 0;
  for (let i = 0, j = 0; i < admitted.length; i += 1) {
    while (admitted[j] <= admitted[i] - windowMs) j += 1;
    // Requests in the same millisecond as t, after it in the sorted order, are in the window too.
    let end = i;
    while (end + 1 < admitted.length && admitted[end + 1] === admitted[i]) end += 1;
    worst = Math.max(worst, end - j + 1);
  }
  expect(worst).toBeLessThanOrEqual(limit);
  expect(worst).toBe(limit);
  const times = calls.map((c) => c.nowMs);
  const spanMs = Math.max(...times) - Math.min(...times);
  expect(admitted.length).toBeGreaterThanOrEqual(limit * Math.floor(spanMs / (windowMs + 2 * bucketMs)));
  // Every answer is consistent: remaining never negative, 0 on rejections, reset within W + B.
  const inconsistent = calls.filter(
    (c) =>
      c.remaining < 0 ||
      (!c.admitted && c.remaining !== 0) ||
      c.resetAtMs < c.nowMs ||
      c.resetAtMs > c.nowMs + windowMs + bucketMs,
  );
  expect(inconsistent).toEqual([]);
}

describe('sliding-window limiter script (real Redis)', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const hashTotal = async (key: string) =>
    Object.values(await redis.hgetall(key)).reduce((sum, value) => sum + Number(value), 0);

  it('admits exactly `limit` requests, counting remaining down to 0; rejections are not stored', async () => {
    const limiter = new SlidingWindowLimiter(redis, 60_000, 1_000);
    const key = newKey();
    const decisions: LimitDecision[] = [];
    for (let i = 0; i < 5; i += 1) decisions.push(await limiter.check(key, 5));
    expect(decisions.map((d) => [d.admitted, d.remaining, d.limit])).toEqual([
      [true, 4, 5],
      [true, 3, 5],
      [true, 2, 5],
      [true, 1, 5],
      [true, 0, 5],
    ]);
    for (let i = 0; i < 20; i += 1) {
      const rejected = await limiter.check(key, 5);
      expect([rejected.admitted, rejected.remaining]).toEqual([false, 0]);
    }
    expect(await hashTotal(key)).toBe(5);

    // The reset is when the oldest counted request's bucket leaves the window: end of its bucket + W.
    const first = decisions[0];
    const firstBucket = Math.floor(first.nowMs / 1_000);
    for (const d of decisions) expect(d.resetAtMs).toBe((firstBucket + 1) * 1_000 + 60_000);
    expect(first.resetAtMs - first.nowMs).toBeGreaterThan(60_000);
    expect(first.resetAtMs - first.nowMs).toBeLessThanOrEqual(61_000);
    // The key expires on its own once nothing in it can count any more.
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  it('subjects are independent', async () => {
    const limiter = new SlidingWindowLimiter(redis, 60_000, 1_000);
    const a = newKey();
    const b = newKey();
    for (let i = 0; i < 3; i += 1) expect((await limiter.check(a, 3)).admitted).toBe(true);
    expect((await limiter.check(a, 3)).admitted).toBe(false);
    const other = await limiter.check(b, 3);
    expect([other.admitted, other.remaining]).toEqual([true, 2]);
  });

  it('is exact under concurrency: 200 simultaneous checks for a limit of 37 admit 37, remaining values 36..0 once each', async () => {
    const limiter = new SlidingWindowLimiter(redis, 60_000, 1_000);
    const key = newKey();
    // Several connections, as several gateways would have.
    const clients = Array.from({ length: 4 }, () => new Redis(REDIS_URL));
    try {
      const limiters = clients.map((client) => new SlidingWindowLimiter(client, 60_000, 1_000));
      const decisions = await Promise.all(
        Array.from({ length: 200 }, (_, i) => limiters[i % 4].check(key, 37)),
      );
      const admitted = decisions.filter((d) => d.admitted);
      expect(admitted).toHaveLength(37);
      expect(admitted.map((d) => d.remaining).sort((x, y) => x - y)).toEqual(
        Array.from({ length: 37 }, (_, i) => i),
      );
      expect(decisions.filter((d) => !d.admitted).every((d) => d.remaining === 0)).toBe(true);
      expect(await hashTotal(key)).toBe(37);
      expect(limiter.windowMs).toBe(60_000);
    } finally {
      clients.forEach((client) => client.disconnect());
    }
  });

  it('checks made in one turn are admitted in the order they were made, per subject, as if one by one', async () => {
    const limiter = new SlidingWindowLimiter(redis, 60_000, 1_000);
    const [busy, quiet] = [newKey(), newKey()];
    await limiter.check(busy, 10);
    const decisions = await Promise.all(
      Array.from({ length: 12 }, (_, i) => limiter.check(i % 3 === 2 ? quiet : busy, 10)),
    );
    const busyDecisions = decisions.filter((_, i) => i % 3 !== 2);
    expect(busyDecisions.map((d) => [d.admitted, d.remaining])).toEqual([
      [true, 8],
      [true, 7],
      [true, 6],
      [true, 5],
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
    ]);
    expect(decisions.filter((_, i) => i % 3 === 2).map((d) => d.remaining)).toEqual([9, 8, 7, 6]);
    const overflow = await Promise.all(Array.from({ length: 3 }, () => limiter.check(busy, 10)));
    expect(overflow.map((d) => [d.admitted, d.remaining])).toEqual([
      [true, 0],
      [false, 0],
      [false, 0],
    ]);
    expect(await hashTotal(busy)).toBe(10);
  });
  it('a full subject frees a slot exactly when its oldest bucket leaves the window (resetAtMs), not before', async () => {
    const windowMs = 600;
    const bucketMs = 100;
    const limiter = new SlidingWindowLimiter(redis, windowMs, bucketMs);
    const key = newKey();
    await alignToBucket(limiter);
    for (let i = 0; i < 3; i += 1) expect((await limiter.check(key, 3)).admitted).toBe(true);
    const full = await limiter.check(key, 3);
    expect(full.admitted).toBe(false);
    // Poll (rejections do not count) until admitted; every answer before resetAtMs must be a rejection.
    const seen: LimitDecision[] = [];
    for (;;) {
      const decision = await limiter.check(key, 3);
      seen.push(decision);
      if (decision.admitted) break;
      expect(decision.nowMs).toBeLessThan(full.resetAtMs);
      expect(decision.resetAtMs).toBe(full.resetAtMs);
      expect(decision.nowMs).toBeLessThan(full.nowMs + windowMs + 2 * bucketMs);
      await sleep(5);
    }
    const admitted = seen[seen.length - 1];
    expect(admitted.nowMs).toBeGreaterThanOrEqual(full.resetAtMs);
    // The three earlier requests were all in one bucket (same reset), so all three slots came back.
    expect(admitted.remaining).toBe(2);
    expect(seen.length).toBeGreaterThan(1);
  });

  it('quota comes back bucket by bucket, not all at once', async () => {
    const windowMs = 400;
    const bucketMs = 100;
    const limiter = new SlidingWindowLimiter(redis, windowMs, bucketMs);
    const key = newKey();
    await alignToBucket(limiter);
    // Two requests in each of two consecutive buckets.
    const first = await limiter.check(key, 4);
    await limiter.check(key, 4);
    await sleep((Math.floor(first.nowMs / bucketMs) + 1) * bucketMs - first.nowMs + 10);
    const third = await limiter.check(key, 4);
    const fourth = await limiter.check(key, 4);
    expect(Math.floor(third.nowMs / bucketMs)).toBe(Math.floor(first.nowMs / bucketMs) + 1);
    expect(Math.floor(fourth.nowMs / bucketMs)).toBe(Math.floor(first.nowMs / bucketMs) + 1);
    expect([fourth.admitted, fourth.remaining]).toEqual([true, 0]);
    // Poll without consuming (the subject is full: rejections are free) until the first bucket leaves.
    let decision: LimitDecision;
    do {
      await sleep(5);
      decision = await limiter.check(key, 4);
    } while (!decision.admitted);
    // Only the first bucket's two requests came back: one now taken, one left.
    expect(decision.remaining).toBe(1);
    expect(decision.nowMs).toBeGreaterThanOrEqual(first.resetAtMs);
    expect(decision.nowMs).toBeLessThan(first.resetAtMs + bucketMs);
    expect((await limiter.check(key, 4)).remaining).toBe(0);
    expect((await limiter.check(key, 4)).admitted).toBe(false);
  });

  it.each([
    ['10 buckets of 20 ms', 200, 20],
    ['4 buckets of 50 ms', 200, 50],
  ])(
    'memory per subject stays bounded (%s): HLEN never exceeds buckets + 1',
    async (_name, windowMs, bucketMs) => {
      const buckets = Math.round(windowMs / bucketMs);
      const limiter = new SlidingWindowLimiter(redis, windowMs, bucketMs);
      const key = newKey();
      let maxLen = 0;
      let calls = 0;
      const started = Date.now();
      while (Date.now() - started < 700) {
        // Unlimited traffic (every request admitted, a field per bucket): continuous for a while, then
        // with gaps that skip buckets.
        await limiter.check(key, 1_000_000_000);
        calls += 1;
        const len = await redis.hlen(key);
        expect(len).toBeLessThanOrEqual(buckets + 1);
        maxLen = Math.max(maxLen, len);
        if (Date.now() - started > 400 && calls % 20 === 0) await sleep(3 * bucketMs);
        const ttl = await redis.pttl(key);
        expect(ttl).toBeLessThanOrEqual(Math.ceil(windowMs + bucketMs));
      }
      // Several calls per bucket on average (how many fit in 700 ms depends on the machine's load).
      expect(calls).toBeGreaterThan(4 * buckets);
      // The bound is reached, so the check is not vacuous.
      expect(maxLen).toBeGreaterThanOrEqual(buckets);
      // Nothing older than the window is left behind.
      const nowMs = (await limiter.check(key, 1_000_000_000)).nowMs;
      const fields = Object.keys(await redis.hgetall(key)).map(Number);
      for (const index of fields)
        expect(index).toBeGreaterThanOrEqual(Math.floor((nowMs - windowMs) / bucketMs));
    },
  );

  it.each([
    ['W 400 ms, 10 buckets, limit 6', 400, 40, 6],
    ['W 250 ms, 1 bucket, limit 4', 250, 250, 4],
  ])(
    'in any window the admitted count never exceeds the limit (%s), hammered by 6 concurrent clients',
    async (_name, windowMs, bucketMs, limit) => {
      const key = newKey();
      const clients = Array.from({ length: 6 }, () => new Redis(REDIS_URL));
      const calls: Call[] = [];
      try {
        const started = Date.now();
        await Promise.all(
          clients.map(async (client, n) => {
            const limiter = new SlidingWindowLimiter(client, windowMs, bucketMs);
            while (Date.now() - started < 1_200) {
              calls.push({ key, ...(await limiter.check(key, limit)) });
              // Irregular pacing: some clients hammer, others trickle.
              if (n % 2 === 1) await sleep(1 + ((calls.length * 7) % 13));
            }
          }),
        );
      } finally {
        clients.forEach((client) => client.disconnect());
      }
      expectNeverOverLimit(calls, windowMs, bucketMs, limit);
    },
  );

  describe('bucket sizes from the configuration (RateLimits: bucket = window / RATE_LIMIT_BUCKETS)', () => {
    // 1 s / 7 buckets = 142.857… ms: any RATE_LIMIT_BUCKETS that does not divide the window in ms.
    const config = loadConfig(gatewaySchema, {
      ...process.env,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_WINDOW_SECONDS: '1',
      RATE_LIMIT_BUCKETS: '7',
      RATE_LIMIT_TRIAL: '5',
      RATE_LIMIT_FAIL_MODE: 'closed',
    });
    const principal = (accountId: string): Principal => ({
      accountId,
      keyId: '0123456789abcdef',
      plan: 'trial',
      scopes: [],
    });
    const accountKey = (accountId: string) => `${prefix}rl:account:${accountId}`;

    /** RateLimits with a logger whose lines are kept, so a failure shows Redis's own error. */
    function rateLimits() {
      const logs: string[] = [];
      const logger = pino({ level: 'error' }, { write: (line: string) => logs.push(line) });
      return { limits: new RateLimits(redis, config, logger, new RateLimitMetrics(new Registry())), logs };
    }

    it('7 buckets in a 1 s window: checks succeed and count (no Redis error, so no fail mode involved)', async () => {
      const { limits, logs } = rateLimits();
      const decisions: Array<LimitDecision | undefined> = [];
      for (let i = 0; i < 6; i += 1) {
        decisions.push(
          await limits.checkAccount(principal('fractional-a')).catch((e: Error) => {
            throw new Error(`check ${i} failed: ${e.message}; logged: ${logs.join('')}`);
          }),
        );
      }
      expect(decisions.map((d) => d && [d.admitted, d.remaining])).toEqual([
        [true, 4],
        [true, 3],
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect(limits.redisFailures).toBe(0);
    });

    it('7 buckets in a 1 s window: HLEN stays <= 8 and no window of 1 s admits more than 5', async () => {
      const { limits, logs } = rateLimits();
      const windowMs = 1_000;
      const bucketMs = Math.ceil(1_000 / 7); // RateLimits rounds buckets up to whole milliseconds
      const calls: Call[] = [];
      let maxLen = 0;
      const started = Date.now();
      while (Date.now() - started < 2_300) {
        const decision = await limits.checkAccount(principal('fractional-b')).catch((e: Error) => {
          throw new Error(`${e.message}; logged: ${logs.join('')}`);
        });
        if (!decision) throw new Error('no decision');
        calls.push({ key: 'fractional-b', ...decision });
        const len = await redis.hlen(accountKey('fractional-b'));
        maxLen = Math.max(maxLen, len);
        await sleep(2);
      }
      expect(maxLen).toBeLessThanOrEqual(8);
      expectNeverOverLimit(calls, windowMs, bucketMs, 5);
    });
  });
});
