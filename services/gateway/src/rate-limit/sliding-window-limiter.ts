import type Redis from 'ioredis';
import { SLIDING_WINDOW_SCRIPT } from './sliding-window-script';

export interface LimitDecision {
  admitted: boolean;
  limit: number;
  remaining: number;
  /** Unix ms at which the oldest request counted in the window leaves it. */
  resetAtMs: number;
  nowMs: number;
}

type SlidingWindowRedis = Redis & {
  slidingWindow(key: string, limit: number, windowMs: number, bucketMs: number): Promise<[number, number, number, number]>;
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
    redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
    this.redis = redis as SlidingWindowRedis;
  }

  async check(key: string, limit: number): Promise<LimitDecision> {
    const [admitted, remaining, resetAtMs, nowMs] = await this.redis.slidingWindow(key, limit, this.windowMs, this.bucketMs);
    return { admitted: admitted === 1, limit, remaining: Math.max(0, remaining), resetAtMs, nowMs };
  }
}
