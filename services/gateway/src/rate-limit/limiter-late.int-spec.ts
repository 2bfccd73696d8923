import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import pino from 'pino';
import { Registry } from 'prom-client';
import { gatewaySchema, loadConfig } from '@app/config';
import { DomainError } from '@app/errors';
import { LoadShedder } from '../load-shedding/load-shedding';
import { connectRedis } from './redis-connection';
import { RateLimitMetrics } from './rate-limit-metrics';
import { RateLimits } from './rate-limits';

/**
 * The rate limiter when the gateway itself is the slow part (docs/operations.md, "Load
 * shedding"): Redis answers at once, but the event loop runs too late to read the answer within
 * REDIS_TIMEOUT_MS, so the command's timeout fires first. That is no Redis outage: the request is
 * the 503 `overloaded`, never admitted uncounted (fail open), and no Redis failure is recorded.
 */
describe('rate limiter with a late event loop', () => {
  const config = loadConfig(gatewaySchema, {
    ...process.env,
    REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX ?? 'cms_test:'}limiter-late:${randomBytes(4).toString('hex')}:`,
    REDIS_TIMEOUT_MS: '100',
    RATE_LIMIT_FAIL_MODE: 'open',
  });
  const redis = connectRedis(config);
  const limits = new RateLimits(
    redis,
    config,
    pino({ level: 'silent' }),
    new RateLimitMetrics(new Registry()),
  );
  const shedder = new LoadShedder({ maxInFlight: 0, maxEventLoopDelayMs: 0 }, new Registry());
  const principal = { accountId: randomUUID(), keyId: 'k', plan: 'business' as const, scopes: [] };

  beforeAll(async () => {
    if (redis.status !== 'ready') await once(redis, 'ready');
  });

  afterAll(() => {
    shedder.close();
    redis.disconnect();
  });

  /** Starts a check, then holds the event loop for 3x the timeout once the check was sent. */
  async function checkWhileLate(gatewayLate?: () => boolean) {
    await redis.ping(); // connected, so the check is sent at once
    const decision = limits.checkAccount(principal, gatewayLate).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await new Promise((resolve) => setImmediate(resolve)); // after the limiter's send
    const until = Date.now() + 3 * config.REDIS_TIMEOUT_MS;
    while (Date.now() < until); // the gateway busy: no turn of the loop
    return decision;
  }

  it('without knowing the loop was late, it failed open: admitted uncounted, a Redis failure recorded', async () => {
    const failures = limits.redisFailures;
    expect(await checkWhileLate()).toEqual({ value: undefined });
    expect(limits.redisFailures).toBe(failures + 1);
  });

  it('knowing it (the shedder measured the delay), the request is the 503 overloaded and no Redis failure', async () => {
    const failures = limits.redisFailures;
    const outcome = await checkWhileLate(() => shedder.loopLate(config.REDIS_TIMEOUT_MS));
    expect(outcome).toEqual({ error: expect.any(DomainError) });
    expect((outcome as { error: DomainError }).error.code).toBe('overloaded');
    expect(limits.redisFailures).toBe(failures);
    // With the loop on time, a check is made and counted as usual.
    await new Promise((resolve) => setTimeout(resolve, 600)); // two delay windows go by
    expect(
      await limits.checkAccount(principal, () => shedder.loopLate(config.REDIS_TIMEOUT_MS)),
    ).toMatchObject({
      admitted: true,
    });
  });
});
