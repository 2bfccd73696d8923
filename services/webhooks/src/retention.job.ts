import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '@app/config';
import { startPeriodicTask } from '@app/database';
import { LOGGER, WEBHOOKS_CONFIG } from './tokens';

const HOUR = 60 * 60 * 1000;

/**
 * Keeps the delivery log to WEBHOOK_LOG_RETENTION_DAYS: finished deliveries (with their attempts)
 * older than that go, then events no delivery refers to any more, and command results after 7 days.
 */
@Injectable()
export class RetentionJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: { stop(): Promise<void> };

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.task = startPeriodicTask('webhooks-retention', HOUR, () => this.purge(), this.logger);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }

  async purge(): Promise<{ deliveries: number; events: number; commands: number }> {
    const days = this.config.WEBHOOK_LOG_RETENTION_DAYS;
    const [, deliveries] = await this.db.query(
      `DELETE FROM webhooks.deliveries WHERE completed_at < now() - make_interval(days => $1)`,
      [days],
    );
    const [, events] = await this.db.query(
      `DELETE FROM webhooks.events e WHERE received_at < now() - make_interval(days => $1)
          AND NOT EXISTS (SELECT 1 FROM webhooks.deliveries d WHERE d.event_id = e.id)`,
      [days],
    );
    const [, commands] = await this.db.query(
      `DELETE FROM webhooks.processed_commands WHERE created_at < now() - interval '7 days'`,
    );
    return { deliveries, events, commands };
  }
}
