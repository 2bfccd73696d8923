import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { ConversationsConfig } from '@app/config';
import { CommandLog, execute, prepare } from '@app/database';
import { PeriodicJob } from '@app/runtime';
import { CONVERSATIONS_CONFIG, LOGGER } from '../core/tokens';

const HOUR = 60 * 60 * 1000;

const PURGE_PUBLISHED = prepare(
  `DELETE FROM conversations.outbox
    WHERE created_at < now() - make_interval(days => $1) AND published_at IS NOT NULL`,
);

/**
 * Keeps the bookkeeping tables small. Published outbox rows are the events of the events API and
 * of stream resumes: kept EVENT_RETENTION_DAYS (30), then deleted. Command results are kept 7 days
 * (far longer than any redelivery or the gateway's 24 h idempotency window). Analytics reads
 * rollups, never the outbox (the analytics migration read it once, to backfill), so the retention
 * may be any length.
 */
@Injectable()
export class RetentionJob extends PeriodicJob {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly commands: CommandLog,
    @Inject(LOGGER) logger: Logger,
    @Inject(CONVERSATIONS_CONFIG) private readonly config: ConversationsConfig,
  ) {
    super('conversations-retention', HOUR, logger);
  }

  async run(): Promise<{ outbox: number; commands: number }> {
    const { rowCount: outbox } = await execute(this.db, PURGE_PUBLISHED, [this.config.EVENT_RETENTION_DAYS]);
    return { outbox, commands: await this.commands.purge() };
  }
}
