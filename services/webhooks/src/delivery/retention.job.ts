import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '@app/config';
import { CommandLog, execute, prepare } from '@app/database';
import { PeriodicJob } from '@app/runtime';
import { LOGGER, WEBHOOKS_CONFIG } from '../core/tokens';

const HOUR = 60 * 60 * 1000;

const SQL = {
  purgeDeliveries: prepare(
    `DELETE FROM webhooks.deliveries WHERE completed_at < now() - make_interval(days => $1)`,
  ),
  purgeEvents: prepare(
    `DELETE FROM webhooks.events e WHERE received_at < now() - make_interval(days => $1)
        AND NOT EXISTS (SELECT 1 FROM webhooks.deliveries d WHERE d.event_id = e.id)`,
  ),
};

/**
 * Keeps the delivery log to WEBHOOK_LOG_RETENTION_DAYS: finished deliveries (with their attempts)
 * older than that go, then events no delivery refers to any more, and command results after 7 days.
 */
@Injectable()
export class RetentionJob extends PeriodicJob {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly commands: CommandLog,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    super('webhooks-retention', HOUR, logger);
  }

  async run(): Promise<{ deliveries: number; events: number; commands: number }> {
    const days = this.config.WEBHOOK_LOG_RETENTION_DAYS;
    const { rowCount: deliveries } = await execute(this.db, SQL.purgeDeliveries, [days]);
    const { rowCount: events } = await execute(this.db, SQL.purgeEvents, [days]);
    return { deliveries, events, commands: await this.commands.purge() };
  }
}
