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

/** The script's answer for a group: see SLIDING_WINDOW_SCRIPT. */
type GroupReply = [number, number, number, number, number, number, number];

/** One request's share of a group's answer. */
interface CheckOutcome {
  admitted: -1 | 0 | 1;
  /** Requests counted in the window after this one (as if the group had come one by one). */
  counted: number;
  resetAtMs: number;
  nowMs: number;
  slotFreeAtMs: number;
  limit: number;
}

type SlidingWindowArgs = readonly [
  key: string,
  planKey: string,
  limit: number,
  windowMs: number,
  bucketMs: number,
  quotas: string,
  deadlineMs: number,
  requests: number,
];

type SlidingWindowPipeline = ChainableCommander & {
  slidingWindow(...args: SlidingWindowArgs): SlidingWindowPipeline;
};

interface SlidingWindowCommands {
  slidingWindow(...args: SlidingWindowArgs): Promise<GroupReply>;
}

interface PendingCheck {
  resolve: (outcome: CheckOutcome) => void;
  reject: (error: unknown) => void;
}

/** The checks of one turn for one subject, plan override and limit: one script call. */
interface CheckGroup {
  key: string;
  planKey: string;
  limit: number;
  quotas: string;
  checks: PendingCheck[];
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
 * costs more CPU than the script itself), and those for the same subject in one script call
 * (a busy account's concurrent requests: the script admits the first of them that fit, exactly as
 * one call each would). Each call carries a deadline: the time, on Redis's clock,
 * after which its caller no longer waits (REDIS_TIMEOUT_MS from that write, less a margin). A
 * check that runs later (Redis hung, then resumed with the commands in its socket) counts nothing,
 * so requests refused (fail closed) or admitted unlimited (fail open) meanwhile never count
 * against the account afterwards (docs/rate-limits.md, "Redis down").
 */
export class SlidingWindowLimiter {
  private readonly redis: Redis;
  private readonly clock = new RedisClock();
  private batch = new Map<string, CheckGroup>();

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
    const planKey = planOverride?.key ?? `${key}:no-plan`;
    const quotas = JSON.stringify(planOverride?.quotas ?? {});
    const outcome = await new Promise<CheckOutcome>((resolve, reject) => {
      const groupKey = `${key}\n${planKey}\n${limit}\n${quotas}`;
      let group = this.batch.get(groupKey);
      if (!group) {
        if (this.batch.size === 0) setImmediate(() => this.send());
        group = { key, planKey, limit, quotas, checks: [] };
        this.batch.set(groupKey, group);
      }
      group.checks.push({ resolve, reject });
    });
    if (outcome.admitted === -1) throw new LimiterCheckTooLate();
    return {
      admitted: outcome.admitted === 1,
      limit: outcome.limit,
      remaining: Math.max(0, outcome.limit - outcome.counted),
      resetAtMs: outcome.resetAtMs,
      slotFreeAtMs: outcome.slotFreeAtMs,
      nowMs: outcome.nowMs,
    };
  }

  /** Sends the checks gathered in this turn of the event loop, with their deadline from now. */
  private send(): void {
    const groups = [...this.batch.values()];
    this.batch = new Map();
    const sentAtMs = Date.now();
    const deadlineMs =
      this.timeoutMs === undefined
        ? undefined
        : this.clock.latestRedisTime(sentAtMs + this.timeoutMs * (1 - DEADLINE_MARGIN));
    const args = (group: CheckGroup) =>
      [
        group.key,
        group.planKey,
        group.limit,
        this.windowMs,
        this.bucketMs,
        group.quotas,
        deadlineMs ?? 0,
        group.checks.length,
      ] as const;
    // One subject (the usual case: a busy account) needs no pipeline, which costs more than the call.
    const replies: Promise<Array<[Error | null, unknown]> | null> =
      groups.length === 1
        ? (this.redis as unknown as SlidingWindowCommands)
            .slidingWindow(...args(groups[0]))
            .then((reply) => [[null, reply]])
        : groups
            .reduce(
              (pipeline, group) => pipeline.slidingWindow(...args(group)),
              this.redis.pipeline() as SlidingWindowPipeline,
            )
            .exec();
    replies.then(
      (results) => {
        const receivedAtMs = Date.now();
        groups.forEach((group, i) => {
          const [error, reply] = results?.[i] ?? [new Error('no reply from Redis'), undefined];
          if (error) return group.checks.forEach((check) => check.reject(error));
          const [admitted, , resetAtMs, nowMs, slotFreeAtMs, limit, before] = reply as GroupReply;
          this.clock.observe(sentAtMs, receivedAtMs, nowMs);
          group.checks.forEach((check, position) =>
            check.resolve({
              admitted: admitted === -1 ? -1 : position < admitted ? 1 : 0,
              counted: before + Math.min(position + 1, Math.max(admitted, 0)),
              resetAtMs,
              nowMs,
              slotFreeAtMs,
              limit,
            }),
          );
        });
      },
      (error: unknown) => groups.forEach((group) => group.checks.forEach((check) => check.reject(error))),
    );
  }
}
