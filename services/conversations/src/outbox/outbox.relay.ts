import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { execute, prepare } from '@app/database';
import { EventPublisher } from '@app/messaging';
import { contextFrom, contextOf, endSpan, SpanKind, startSpan, traceHeaders } from '@app/observability';
import { Coalescer } from '@app/runtime';
import { CONVERSATIONS_CONFIG, LOGGER } from '../core/tokens';
import { OutboxMetrics } from './outbox-metrics';
import type { ConversationsConfig } from '@app/config';
import { CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';

interface OutboxRow {
  id: string;
  event_id: string;
  type: string;
  /** The CloudEvent's JSON as stored: published as it is, never parsed here. */
  envelope: string;
  /** The CloudEvent's `traceparent`: the command that made the event, when it was traced. */
  traceparent: string | null;
  created_at: Date;
}

const RELAY_LOCK = 'conversations:outbox-relay';

const SQL = {
  lock: prepare<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked'),
  batch: prepare<OutboxRow>(
    `SELECT id, event_id, type, envelope::text AS envelope, envelope->>'traceparent' AS traceparent, created_at
       FROM conversations.outbox
      WHERE published_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
  ),
  /** Publication order, for stream resumes: positions taken in the order the rows were published. */
  markPublished: prepare(
    `UPDATE conversations.outbox o SET published_at = now(), published_seq = p.position
       FROM (SELECT id, nextval('conversations.outbox_published_seq') AS position
               FROM (SELECT id FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord) ORDER BY ord) ordered) p
      WHERE o.id = p.id`,
  ),
};
const LOCKED_ELSEWHERE = 'locked elsewhere';

/**
 * Publishes committed outbox rows to `conversations.events` with publisher confirms, then marks
 * them published. Woken in process by the commit that wrote them (OutboxWriter.relayOnCommit),
 * and by a poll for rows another replica wrote and did not get to relay (it crashed, say).
 *
 * Only one replica relays at a time (a transaction-scoped advisory lock per batch): with one
 * publisher, rows leave in id order, and since every change locks its conversation row before
 * writing its event, id order is commit order within a conversation. A crash between the
 * broker's confirm and the commit republishes the batch: delivery is at least once, and
 * consumers deduplicate by the CloudEvents `id`. Marking a batch published numbers its rows in
 * publication order (`published_seq`): batches follow one another under the lock, so that
 * number is the order every consumer of `conversations.events` received them in, which the
 * stream's resume relies on (docs/events.md). A replica woken while another holds the lock
 * tries again after OUTBOX_COALESCE_MS until it gets it, so its rows never wait for the poll.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer?: NodeJS.Timeout;
  /** A burst of commits leaves in one batch and one transaction rather than one each. */
  private readonly drains: Coalescer;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly publisher: EventPublisher,
    @Inject(CONVERSATIONS_CONFIG) private readonly config: ConversationsConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: OutboxMetrics,
  ) {
    this.drains = new Coalescer(() => this.drain(), { ms: config.OUTBOX_COALESCE_MS });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.wake(), this.config.OUTBOX_POLL_MS);
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.drains.stop();
  }

  /**
   * Starts a drain after OUTBOX_COALESCE_MS (so a burst of commits leaves in one batch and one
   * transaction rather than one each), or asks the running one to go round once more.
   */
  wake(): void {
    if (!this.stopped) this.drains.wake();
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        if (this.stopped) return;
        const published = await this.publishBatch();
        if (published === LOCKED_ELSEWHERE) {
          this.drains.wake(); // once more after OUTBOX_COALESCE_MS, until the lock is ours
          return;
        }
        if (published < this.config.OUTBOX_BATCH_SIZE) return;
        // a full batch: there may be more
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'outbox relay batch failed; retrying on next wake');
    }
  }

  /** How many rows it published, or LOCKED_ELSEWHERE if another replica is relaying. */
  private async publishBatch(): Promise<number | typeof LOCKED_ELSEWHERE> {
    const published = await this.db.transaction(async (tx): Promise<OutboxRow[] | undefined> => {
      const lock = await execute(tx, SQL.lock, [RELAY_LOCK]);
      if (!lock.rows[0].locked) return undefined;
      const { rows } = await execute(tx, SQL.batch, [this.config.OUTBOX_BATCH_SIZE]);
      if (rows.length === 0) return [];
      await this.publishTraced(rows);
      await execute(tx, SQL.markPublished, [rows.map((row) => row.id)]);
      return rows;
    });
    if (!published) return LOCKED_ELSEWHERE;
    this.metrics.published(published.map((row) => row.type));
    return published.length;
  }

  /**
   * Publishes with confirms, one span per event (docs/operations.md "Tracing"): a child of the
   * command that made the event, its context in the message's headers for the consumers.
   */
  private async publishTraced(rows: OutboxRow[]): Promise<void> {
    const spans = rows.map((row) =>
      startSpan(`${CONVERSATIONS_EVENTS_EXCHANGE} publish`, {
        kind: SpanKind.PRODUCER,
        parent: contextFrom(row.traceparent ? { traceparent: row.traceparent } : undefined),
        attributes: { 'messaging.message.id': row.event_id },
      }),
    );
    try {
      await this.publisher.publishAll(
        rows.map((row, index) => ({
          id: row.event_id,
          routingKey: row.type,
          body: Buffer.from(row.envelope),
          timestamp: row.created_at,
          headers: traceHeaders(contextOf(spans[index])),
        })),
      );
      for (const span of spans) endSpan(span);
    } catch (error) {
      for (const span of spans) endSpan(span, error);
      throw error;
    }
  }
}
