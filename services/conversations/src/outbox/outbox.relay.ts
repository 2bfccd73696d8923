import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { dedicatedClientConfig } from '@app/database';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { CloudEvent } from '@app/contracts';
import { EventPublisher } from '@app/messaging';
import { CONVERSATIONS_CONFIG, LOGGER } from '../tokens';
import { OutboxMetrics } from './outbox-metrics';
import type { ConversationsConfig } from '@app/config';

interface OutboxRow {
  id: string;
  type: string;
  envelope: CloudEvent;
  created_at: Date;
}

export const OUTBOX_CHANNEL = 'conversations_outbox';
const RELAY_LOCK = 'conversations:outbox-relay';

/**
 * Publishes committed outbox rows to `conversations.events` with publisher confirms, then marks
 * them published. Woken by NOTIFY from the insert trigger, with a poll as a fallback.
 *
 * Only one replica relays at a time (a transaction-scoped advisory lock per batch): with one
 * publisher, rows leave in id order, and since every change locks its conversation row before
 * writing its event, id order is commit order within a conversation. A crash between the
 * broker's confirm and the commit republishes the batch: delivery is at least once, and
 * consumers deduplicate by the CloudEvents `id`.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private listener?: Client;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly publisher: EventPublisher,
    @Inject(CONVERSATIONS_CONFIG) private readonly config: ConversationsConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: OutboxMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
    this.timer = setInterval(() => this.wake(), this.config.OUTBOX_POLL_MS);
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.listener?.end().catch(() => undefined);
  }

  /**
   * Starts a drain after OUTBOX_COALESCE_MS (so a burst of commits leaves in one batch and one
   * transaction rather than one each), or asks the running one to go round once more.
   */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = delay(this.config.OUTBOX_COALESCE_MS)
      .then(() => this.drain())
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.publishBatch()) === this.config.OUTBOX_BATCH_SIZE) {
        // a full batch: there may be more
      }
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'outbox relay batch failed; retrying on next wake');
    }
  }

  private async publishBatch(): Promise<number> {
    const published = await this.db.transaction(async (tx): Promise<OutboxRow[]> => {
      const [{ locked }] = await tx.query('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', [
        RELAY_LOCK,
      ]);
      if (!locked) return [];
      const rows: OutboxRow[] = await tx.query(
        `SELECT id, type, envelope, created_at FROM conversations.outbox
          WHERE published_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [this.config.OUTBOX_BATCH_SIZE],
      );
      if (rows.length === 0) return [];
      await this.publisher.publishAll(
        rows.map((row) => ({
          id: row.envelope.id,
          routingKey: row.type,
          body: Buffer.from(JSON.stringify(row.envelope)),
          timestamp: row.created_at,
        })),
      );
      await tx.query(`UPDATE conversations.outbox SET published_at = now() WHERE id = ANY($1::bigint[])`, [
        rows.map((row) => row.id),
      ]);
      return rows;
    });
    this.metrics.published(published.map((row) => row.type));
    return published.length;
  }

  /** A dedicated connection for LISTEN; if it drops, the poll keeps events flowing until it is back. */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new Client(dedicatedClientConfig(this.config, 'conversations-outbox-listener'));
    client.on('notification', () => this.wake());
    client.on('error', (error) => {
      this.logger.warn({ err: error.message }, 'outbox listener connection lost');
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      this.listener = client;
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'outbox listener could not connect; polling only');
      await client.end().catch(() => undefined);
      setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
    }
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
