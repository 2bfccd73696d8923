import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Counter, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { METRIC_PREFIX, scrapeTimeGauges } from '@app/observability';

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
 * age of the oldest), read from Postgres at scrape time (scrapeTimeGauges).
 */
@Injectable()
export class OutboxMetrics {
  private readonly publishedEvents: Counter<'type'>;

  constructor(@Inject(Registry) registry: Registry, @InjectDataSource() db: DataSource) {
    this.publishedEvents = new Counter({
      name: `${METRIC_PREFIX}outbox_events_published_total`,
      help: 'Events this replica published to conversations.events (confirmed by the broker), by type',
      labelNames: ['type'],
      registers: [registry],
    });
    scrapeTimeGauges(registry, () => db.query<Backlog[]>(BACKLOG_SQL).then(([row]) => row), [
      {
        name: 'outbox_backlog_events',
        help: 'Outbox events not yet published',
        value: (backlog) => backlog.events,
      },
      {
        name: 'outbox_oldest_unsent_age_seconds',
        help: 'Age of the oldest outbox event not yet published (0 when none)',
        value: (backlog) => backlog.oldest_age_seconds,
      },
    ]);
  }

  published(types: string[]): void {
    for (const type of types) this.publishedEvents.inc({ type });
  }
}
