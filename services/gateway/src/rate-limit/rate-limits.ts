import type { Logger } from 'pino';
import type { GatewayConfig } from '@app/config';
import type { Plan } from '@app/dialects';
import { DomainError, overloaded } from '@app/errors';
import { planOverrideKey } from '../accounts/account-changes';
import type { Principal } from '../auth/api-key-authenticator';
import type { RateLimitMetrics } from './rate-limit-metrics';
import { LimitDecision, LimiterCheckTooLate, SlidingWindowLimiter } from './sliding-window-limiter';

/** A check that timed out (ioredis's command timeout) or reached Redis after its deadline; not Redis refusing or gone. */
const isLate = (error: unknown) =>
  error instanceof LimiterCheckTooLate || (error instanceof Error && error.message === 'Command timed out');

const FAILED_AUTH_WINDOW_MS = 60_000;
const FAILED_AUTH_BUCKETS = 12;
const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * The gateway's two limits: each account's plan quota per window, and failed authentications
 * per client IP (so made-up keys cannot be tried at full speed; valid keys never count there).
 * When Redis fails, RATE_LIMIT_FAIL_MODE decides: `open` admits, `closed` answers 503.
 */
export class RateLimits {
  /** Checks that could not reach Redis, since start (in the log line; also counted in the metrics). */
  redisFailures = 0;
  private readonly accounts: SlidingWindowLimiter;
  private readonly failedAuth: SlidingWindowLimiter;
  private readonly quotas: Record<Plan, number>;
  private lastFailureLog = 0;

  constructor(
    redis: ConstructorParameters<typeof SlidingWindowLimiter>[0],
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
    private readonly metrics: RateLimitMetrics,
  ) {
    const windowMs = config.RATE_LIMIT_WINDOW_SECONDS * 1000;
    // Whole milliseconds: Redis's PEXPIRE takes integers, and 3600 s / 7 buckets is not one.
    this.accounts = new SlidingWindowLimiter(
      redis,
      windowMs,
      Math.ceil(windowMs / config.RATE_LIMIT_BUCKETS),
      config.REDIS_TIMEOUT_MS,
    );
    this.failedAuth = new SlidingWindowLimiter(
      redis,
      FAILED_AUTH_WINDOW_MS,
      FAILED_AUTH_WINDOW_MS / FAILED_AUTH_BUCKETS,
      config.REDIS_TIMEOUT_MS,
    );
    this.quotas = {
      trial: config.RATE_LIMIT_TRIAL,
      pro: config.RATE_LIMIT_PRO,
      business: config.RATE_LIMIT_BUSINESS,
    };
  }

  get enabled(): boolean {
    return this.config.RATE_LIMIT_ENABLED;
  }

  get windowSeconds(): number {
    return this.config.RATE_LIMIT_WINDOW_SECONDS;
  }

  /**
   * The account's decision, or undefined when Redis failed and the fail mode is open. A check
   * that timed out while `gatewayLate()` (the event loop ran too late to read Redis's answer in
   * time) is the 503 `overloaded`, in either mode: the gateway's own load is no Redis outage and
   * must not admit requests uncounted.
   */
  async checkAccount(principal: Principal, gatewayLate?: () => boolean): Promise<LimitDecision | undefined> {
    if (!this.config.RATE_LIMIT_ENABLED) return undefined;
    let decision: LimitDecision;
    try {
      decision = await this.accounts.check(
        `${this.config.REDIS_KEY_PREFIX}rl:account:${principal.accountId}`,
        this.quotas[principal.plan],
        { key: planOverrideKey(this.config.REDIS_KEY_PREFIX, principal.accountId), quotas: this.quotas },
      );
    } catch (error) {
      if (isLate(error) && gatewayLate?.()) throw overloaded();
      this.recordFailure(error);
      if (this.config.RATE_LIMIT_FAIL_MODE === 'closed') {
        throw new DomainError('service_unavailable', 'Rate limiting is unavailable; retry shortly.');
      }
      return undefined;
    }
    if (!decision.admitted) this.metrics.rejected('plan');
    return decision;
  }

  /** Counts a failed authentication from `ip`; false once that IP is over its limit. */
  async admitFailedAuthentication(ip: string): Promise<LimitDecision | undefined> {
    if (!this.config.RATE_LIMIT_ENABLED) return undefined;
    let decision: LimitDecision;
    try {
      decision = await this.failedAuth.check(
        `${this.config.REDIS_KEY_PREFIX}rl:failed-auth:${ip}`,
        this.config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
      );
    } catch (error) {
      this.recordFailure(error);
      return undefined;
    }
    if (!decision.admitted) this.metrics.rejected('unauthenticated');
    return decision;
  }

  private recordFailure(error: unknown): void {
    this.redisFailures += 1;
    this.metrics.redisFailed(this.config.RATE_LIMIT_FAIL_MODE);
    const now = Date.now();
    if (now - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.lastFailureLog = now;
    this.logger.error(
      {
        err: (error as Error).message,
        fail_mode: this.config.RATE_LIMIT_FAIL_MODE,
        failures: this.redisFailures,
      },
      'rate limiter cannot reach Redis',
    );
  }
}
