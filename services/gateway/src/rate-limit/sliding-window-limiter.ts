import type Redis from 'ioredis';
import { RedisClock } from './redis-clock';
import { SLIDING_WINDOW_SCRIPT } from './sliding-window-script';

export interface LimitDecision {
  admitted: boolean;
  limit: number;
  remaining: number;
  /** Unix ms at which the oldest request counted in the window leaves it. */
  resetAtMs: number;
  /** Unix ms at which a slot is next free (the count drops below the limit). */
  slotFreeAtMs: number;
  nowMs: number;
}

type SlidingWindowRedis = Redis & {
  slidingWindow(
    key: string,
    planKey: string,
    limit: number,
    windowMs: number,
    bucketMs: number,
    quotas: string,
    deadlineMs: number,
  ): Promise<[number, number, number, number, number, number]>;
};

/** Part of the wait for Redis left as a margin: a check run this close to it has no time to answer. */
const DEADLINE_MARGIN = 0.1;

/** The check reached Redis after the caller had stopped waiting for it: it counted nothing. */
export class LimiterCheckTooLate extends Error {
  constructor() {
    super('the rate-limit check reached Redis after its deadline');
  }
}

/**
 * Sliding-window counters in Redis. The script is registered once with ioredis, which calls it
 * by SHA (EVALSHA) and reloads it only if Redis lost it.
 */
export class SlidingWindowLimiter {
  private readonly redis: SlidingWindowRedis;
  private readonly clock = new RedisClock();

  /**
   * `timeoutMs`: how long the caller waits for an answer (REDIS_TIMEOUT_MS). A check that reaches
   * Redis later than that (Redis hung, then resumed with commands in its socket) counts nothing,
   * so requests refused or admitted unlimited meanwhile never count against the account later.
   */
  constructor(
    redis: Redis,
    readonly windowMs: number,
    readonly bucketMs: number,
    private readonly timeoutMs?: number,
  ) {
    redis.defineCommand('slidingWindow', { numberOfKeys: 2, lua: SLIDING_WINDOW_SCRIPT });
    this.redis = redis as SlidingWindowRedis;
  }

  /**
   * Counts a request against `key`. The limit is `limit`, unless `planOverride` names a plan
   * (written when a plan changes, see account-changes.ts) that has a quota in `quotas`.
   */
  async check(
    key: string,
    limit: number,
    planOverride?: { key: string; quotas: Record<string, number> },
  ): Promise<LimitDecision> {
    const sentAtMs = Date.now();
    const deadlineMs =
      this.timeoutMs === undefined
        ? undefined
        : this.clock.toRedis(sentAtMs + this.timeoutMs * (1 - DEADLINE_MARGIN));
    const [admitted, remaining, resetAtMs, nowMs, slotFreeAtMs, effectiveLimit] =
      await this.redis.slidingWindow(
        key,
        planOverride?.key ?? `${key}:no-plan`,
        limit,
        this.windowMs,
        this.bucketMs,
        JSON.stringify(planOverride?.quotas ?? {}),
        deadlineMs ?? 0,
      );
    this.clock.observe(sentAtMs, Date.now(), nowMs);
    if (admitted === -1) throw new LimiterCheckTooLate();
    return {
      admitted: admitted === 1,
      limit: effectiveLimit,
      remaining: Math.max(0, remaining),
      resetAtMs,
      slotFreeAtMs,
      nowMs,
    };
  }
}
