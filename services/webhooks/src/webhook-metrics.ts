import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS, METRIC_PREFIX } from '@app/observability';
import type { AttemptResult } from './delivery/webhook-sender';

/** What became of an event taken from `webhooks.events`. */
export type ConsumedOutcome = 'fanned_out' | 'requeued' | 'dead_lettered';

/** How one HTTP attempt ended. */
export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'connection_error' | 'blocked' | 'error';

/** From a fast local receiver to a delivery that succeeded after the whole retry schedule (about a day). */
const DELIVERY_LATENCY_BUCKETS = [
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
  300,
  1800,
  3600,
  4 * 3600,
  12 * 3600,
  86_400,
  3 * 86_400,
];

/** Events consumed, webhook attempts and their duration, and how long events took to be delivered. */
@Injectable()
export class WebhookMetrics {
  private readonly events: Counter<'outcome'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly attemptDuration: Histogram<'outcome'>;
  private readonly deliveryLatency: Histogram;

  constructor(@Inject(Registry) registry: Registry) {
    this.events = new Counter({
      name: `${METRIC_PREFIX}webhook_events_consumed_total`,
      help: 'Events consumed from conversations.events: fanned_out into deliveries, requeued after a failed fan-out, dead_lettered when invalid',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.attempts = new Counter({
      name: `${METRIC_PREFIX}webhook_attempts_total`,
      help: 'Webhook HTTP attempts by outcome (success = 2xx)',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.attemptDuration = new Histogram({
      name: `${METRIC_PREFIX}webhook_attempt_duration_seconds`,
      help: 'Duration of one webhook HTTP attempt (connect to end of response), by outcome',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.deliveryLatency = new Histogram({
      name: `${METRIC_PREFIX}webhook_delivery_latency_seconds`,
      help: "From the event's time to the end of its successful attempt (retries included)",
      buckets: DELIVERY_LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  consumed(outcome: ConsumedOutcome, count = 1): void {
    this.events.inc({ outcome }, count);
  }

  attempted(result: AttemptResult, eventTime: Date): void {
    const outcome = attemptOutcome(result);
    this.attempts.inc({ outcome });
    this.attemptDuration.observe({ outcome }, result.durationMs / 1000);
    if (outcome === 'success') {
      const deliveredAt = result.startedAt.getTime() + result.durationMs;
      this.deliveryLatency.observe(Math.max(0, deliveredAt - new Date(eventTime).getTime()) / 1000);
    }
  }
}

export function attemptOutcome(result: Pick<AttemptResult, 'statusCode' | 'failure'>): AttemptOutcome {
  if (result.statusCode !== null)
    return result.statusCode >= 200 && result.statusCode < 300 ? 'success' : 'http_error';
  switch (result.failure) {
    case 'timeout':
      return 'timeout';
    case 'connection':
      return 'connection_error';
    case 'blocked':
      return 'blocked';
    default:
      return 'error';
  }
}
