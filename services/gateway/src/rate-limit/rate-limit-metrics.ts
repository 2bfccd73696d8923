import { Counter, Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import { METRIC_PREFIX } from '@app/observability';

/** `plan`: an account over its quota; `unauthenticated`: a client IP over its failed-authentication limit. */
export type RejectionKind = 'plan' | 'unauthenticated';

/** Requests the limiter answered 429, and checks that could not reach Redis. */
export class RateLimitMetrics {
  private readonly rejections: Counter<'kind'>;
  private readonly errors: Counter<'fail_mode'>;

  constructor(registry: Registry) {
    this.rejections = new Counter({
      name: `${METRIC_PREFIX}rate_limit_rejections_total`,
      help: 'Requests answered 429 by the rate limiter, by kind (plan quota or failed authentications per IP)',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.errors = new Counter({
      name: `${METRIC_PREFIX}rate_limiter_errors_total`,
      help: 'Rate-limit checks that could not reach Redis, by RATE_LIMIT_FAIL_MODE (open: admitted, closed: 503)',
      labelNames: ['fail_mode'],
      registers: [registry],
    });
  }

  rejected(kind: RejectionKind): void {
    this.rejections.inc({ kind });
  }

  redisFailed(failMode: GatewayConfig['RATE_LIMIT_FAIL_MODE']): void {
    this.errors.inc({ fail_mode: failMode });
  }
}
