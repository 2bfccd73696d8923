import { Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { startPeriodicTask } from '@app/database';
import { IdempotencyRepository } from './idempotency.repository';

/** Deletes idempotency keys past their window once an hour. */
@Injectable()
export class IdempotencyRetentionJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private task?: { stop(): Promise<void> };

  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.task = startPeriodicTask(
      'idempotency-retention',
      60 * 60 * 1000,
      () => this.keys.deleteExpired(),
      this.logger,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task?.stop();
  }
}
