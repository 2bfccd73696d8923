import { Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { PeriodicJob } from '@app/runtime';
import { IdempotencyRepository } from './idempotency.repository';

/** Deletes idempotency keys past their window once an hour. */
@Injectable()
export class IdempotencyRetentionJob extends PeriodicJob {
  constructor(
    private readonly keys: IdempotencyRepository,
    logger: Logger,
  ) {
    super('idempotency-retention', 60 * 60 * 1000, logger);
  }

  run(): Promise<number> {
    return this.keys.deleteExpired();
  }
}
