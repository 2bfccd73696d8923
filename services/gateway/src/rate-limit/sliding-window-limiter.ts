import type Redis from 'ioredis';
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
  ): Promise<[number, number, number, number, number, number]>;
};

/**
 * Sliding-window counters in Redis. The script is registered once with ioredis, which calls it
 * by SHA (EVALSHA) and reloads it only if Redis lost it.
 */
export class SlidingWindowLimiter {
  private readonly redis: SlidingWindowRedis;

  constructor(
    redis: Redis,
    readonly windowMs: number,
    readonly bucketMs: number,
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
    const [admitted, remaining, resetAtMs, nowMs, slotFreeAtMs, effectiveLimit] =
      await this.redis.slidingWindow(
        key,
        planOverride?.key ?? `${key}:no-plan`,
        limit,
        this.windowMs,
        this.bucketMs,
        JSON.stringify(planOverride?.quotas ?? {}),
      );
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
