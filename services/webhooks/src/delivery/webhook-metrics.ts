import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { LATENCY_BUCKETS, METRIC_PREFIX, scrapeTimeGauges } from '@app/observability';
import type { AttemptResult } from './webhook-sender';

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

interface Backlog {
  pending: number;
  oldest_due_age_seconds: number;
}

/**
 * Pending deliveries through the partial index of pending ones, and how long the most overdue
 * one has been due (its next attempt time passed and no replica made it): a dispatcher falling
 * behind, not an endpoint that fails (its retries are not yet due).
 */
const BACKLOG_SQL = `
  SELECT (SELECT count(*) FROM webhooks.deliveries WHERE status = 'pending')::int AS pending,
         COALESCE((SELECT extract(epoch FROM now() - next_attempt_at) FROM webhooks.deliveries
                    WHERE status = 'pending' AND next_attempt_at <= now()
                    ORDER BY next_attempt_at LIMIT 1), 0)::float8 AS oldest_due_age_seconds`;

/**
 * Events consumed, webhook attempts and their duration, how long events took to be delivered,
 * and the backlog of pending deliveries read from Postgres at scrape time (scrapeTimeGauges).
 */
@Injectable()
export class WebhookMetrics {
  private readonly events: Counter<'outcome'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly attemptDuration: Histogram<'outcome'>;
  private readonly deliveryLatency: Histogram;

  constructor(@Inject(Registry) registry: Registry, @InjectDataSource() db: DataSource) {
    scrapeTimeGauges(registry, () => db.query<Backlog[]>(BACKLOG_SQL).then(([row]) => row), [
      {
        name: 'webhook_deliveries_pending',
        help: 'Webhook deliveries pending: waiting for their first attempt or a retry',
        value: (backlog) => backlog.pending,
      },
      {
        name: 'webhook_oldest_due_delivery_age_seconds',
        help: 'How long the most overdue pending delivery has been due without an attempt (0 when none)',
        value: (backlog) => backlog.oldest_due_age_seconds,
      },
    ]);
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
