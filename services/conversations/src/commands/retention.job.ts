import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { ConversationsConfig } from '@app/config';
import { startPeriodicTask } from '@app/database';
import { CONVERSATIONS_CONFIG, LOGGER } from '../tokens';

const HOUR = 60 * 60 * 1000;

/**
 * Keeps the bookkeeping tables small. Published outbox rows are the events of the events API and
 * of stream resumes: kept EVENT_RETENTION_DAYS (30), then deleted. Command results are kept 7 days
 * (far longer than any redelivery or the gateway's 24 h idempotency window). Analytics reads
 * rollups, never the outbox (the analytics migration read it once, to backfill), so the retention
 * may be any length.
 */
@Injectable()
export class RetentionJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: { stop(): Promise<void> };

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CONVERSATIONS_CONFIG) private readonly config: ConversationsConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.task = startPeriodicTask('conversations-retention', HOUR, () => this.purge(), this.logger);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }

  async purge(): Promise<{ outbox: number; commands: number }> {
    const [, outbox] = await this.db.query(
      `DELETE FROM conversations.outbox
        WHERE created_at < now() - make_interval(days => $1) AND published_at IS NOT NULL`,
      [this.config.EVENT_RETENTION_DAYS],
    );
    const [, commands] = await this.db.query(
      `DELETE FROM conversations.processed_commands WHERE created_at < now() - interval '7 days'`,
    );
    return { outbox, commands };
  }
}
