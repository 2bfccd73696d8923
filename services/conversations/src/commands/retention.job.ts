import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { COMMAND_RETENTION_DAYS, CommandLog, execute, prepare } from '@app/database';
import { PeriodicJob } from '@app/runtime';
import { LOGGER } from '../tokens';

const HOUR = 60 * 60 * 1000;

const PURGE_PUBLISHED = prepare(
  `DELETE FROM conversations.outbox WHERE published_at < now() - make_interval(days => $1)`,
);

/**
 * Keeps the bookkeeping tables small: published outbox rows and command results are kept for 7
 * days (far longer than any redelivery or the gateway's 24 h idempotency window), then deleted.
 */
@Injectable()
export class RetentionJob extends PeriodicJob {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly commands: CommandLog,
    @Inject(LOGGER) logger: Logger,
  ) {
    super('conversations-retention', HOUR, logger);
  }

  async run(): Promise<{ outbox: number; commands: number }> {
    const { rowCount: outbox } = await execute(this.db, PURGE_PUBLISHED, [COMMAND_RETENTION_DAYS]);
    return { outbox, commands: await this.commands.purge() };
  }
}
