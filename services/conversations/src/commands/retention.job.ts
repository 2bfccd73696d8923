import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import { startPeriodicTask } from '@app/database';
import { LOGGER } from '../tokens';

const HOUR = 60 * 60 * 1000;

/**
 * Keeps the bookkeeping tables small: published outbox rows and command results are kept for 7
 * days (far longer than any redelivery or the gateway's 24 h idempotency window), then deleted.
 */
@Injectable()
export class RetentionJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: { stop(): Promise<void> };

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.task = startPeriodicTask('conversations-retention', HOUR, () => this.purge(), this.logger);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }

  async purge(): Promise<{ outbox: number; commands: number }> {
    const [, outbox] = await this.db.query(
      `DELETE FROM conversations.outbox WHERE published_at < now() - interval '7 days'`,
    );
    const [, commands] = await this.db.query(
      `DELETE FROM conversations.processed_commands WHERE created_at < now() - interval '7 days'`,
    );
    return { outbox, commands };
  }
}
