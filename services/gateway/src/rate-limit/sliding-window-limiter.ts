import type Redis from 'ioredis';
import type { ChainableCommander } from 'ioredis';
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

type ScriptReply = [number, number, number, number, number, number];

type SlidingWindowPipeline = ChainableCommander & {
  slidingWindow(
    key: string,
    planKey: string,
    limit: number,
    windowMs: number,
    bucketMs: number,
    quotas: string,
    deadlineMs: number,
  ): SlidingWindowPipeline;
};

interface PendingCheck {
  key: string;
  planKey: string;
  limit: number;
  quotas: string;
  resolve: (reply: ScriptReply) => void;
  reject: (error: unknown) => void;
}

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
 *
 * Checks made in the same turn of the event loop go to Redis in one write (a loopback write
 * costs more CPU than the script itself), each carrying a deadline: the time, on Redis's clock,
 * after which its caller no longer waits (REDIS_TIMEOUT_MS from that write, less a margin). A
 * check that runs later (Redis hung, then resumed with the commands in its socket) counts nothing,
 * so requests refused (fail closed) or admitted unlimited (fail open) meanwhile never count
 * against the account afterwards (issue 10, item 14).
 */
export class SlidingWindowLimiter {
  private readonly redis: Redis;
  private readonly clock = new RedisClock();
  private batch: PendingCheck[] = [];

  /** `timeoutMs`: how long the caller waits for Redis (the connection's command timeout); none: no deadline. */
  constructor(
    redis: Redis,
    readonly windowMs: number,
    readonly bucketMs: number,
    private readonly timeoutMs?: number,
  ) {
    redis.defineCommand('slidingWindow', { numberOfKeys: 2, lua: SLIDING_WINDOW_SCRIPT });
    this.redis = redis;
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
      await new Promise<ScriptReply>((resolve, reject) => {
        this.batch.push({
          key,
          planKey: planOverride?.key ?? `${key}:no-plan`,
          limit,
          quotas: JSON.stringify(planOverride?.quotas ?? {}),
          resolve,
          reject,
        });
        if (this.batch.length === 1) setImmediate(() => this.send());
      });
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

  /** Sends the checks gathered in this turn of the event loop, with their deadline from now. */
  private send(): void {
    const batch = this.batch;
    this.batch = [];
    const sentAtMs = Date.now();
    const deadlineMs =
      this.timeoutMs === undefined
        ? undefined
        : this.clock.latestRedisTime(sentAtMs + this.timeoutMs * (1 - DEADLINE_MARGIN));
    const pipeline = this.redis.pipeline() as SlidingWindowPipeline;
    for (const check of batch) {
      pipeline.slidingWindow(
        check.key,
        check.planKey,
        check.limit,
        this.windowMs,
        this.bucketMs,
        check.quotas,
        deadlineMs ?? 0,
      );
    }
    pipeline.exec().then(
      (results) => {
        const receivedAtMs = Date.now();
        batch.forEach((check, i) => {
          const [error, reply] = results?.[i] ?? [new Error('no reply from Redis'), undefined];
          if (error) return check.reject(error);
          this.clock.observe(sentAtMs, receivedAtMs, (reply as ScriptReply)[3]);
          check.resolve(reply as ScriptReply);
        });
      },
      (error: unknown) => batch.forEach((check) => check.reject(error)),
    );
  }
}
