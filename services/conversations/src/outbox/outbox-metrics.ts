import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Gauge, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRIC_PREFIX } from '@app/observability';

interface Backlog {
  events: number;
  oldest_age_seconds: number;
}

/** Both gauges in one statement: the unpublished rows through the partial index, the oldest by id. */
const BACKLOG_SQL = `
  SELECT (SELECT count(*) FROM conversations.outbox WHERE published_at IS NULL)::int AS events,
         COALESCE((SELECT extract(epoch FROM now() - created_at) FROM conversations.outbox
                    WHERE published_at IS NULL ORDER BY id LIMIT 1), 0)::float8 AS oldest_age_seconds`;

/**
 * The outbox as Prometheus sees it: events published, and the backlog (unpublished rows and the
 * age of the oldest), read from Postgres at scrape time so that every replica reports the truth
 * whichever of them is relaying. Without Postgres the two gauges are NaN (unknown), never a reassuring 0.
 */
@Injectable()
export class OutboxMetrics {
  private readonly publishedEvents: Counter<'type'>;
  private reading?: Promise<Backlog | undefined>;

  constructor(
    @Inject(Registry) registry: Registry,
    @InjectDataSource() private readonly db: DataSource,
  ) {
    this.publishedEvents = new Counter({
      name: `${METRIC_PREFIX}outbox_events_published_total`,
      help: 'Events this replica published to conversations.events (confirmed by the broker), by type',
      labelNames: ['type'],
      registers: [registry],
    });
    this.backlogGauge(
      registry,
      'outbox_backlog_events',
      'Outbox events not yet published',
      (backlog) => backlog.events,
    );
    this.backlogGauge(
      registry,
      'outbox_oldest_unsent_age_seconds',
      'Age of the oldest outbox event not yet published (0 when none)',
      (backlog) => backlog.oldest_age_seconds,
    );
  }

  published(types: string[]): void {
    for (const type of types) this.publishedEvents.inc({ type });
  }

  private backlogGauge(
    registry: Registry,
    name: string,
    help: string,
    value: (backlog: Backlog) => number,
  ): void {
    const read = () => this.readBacklog();
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [registry],
      async collect() {
        const backlog = await read();
        this.set(backlog ? value(backlog) : NaN);
      },
    });
  }

  /** One query per scrape: both gauges' collect() start together and share it. */
  private readBacklog(): Promise<Backlog | undefined> {
    this.reading ??= this.db
      .query<Backlog[]>(BACKLOG_SQL)
      .then(([row]) => row)
      .catch(() => undefined)
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
