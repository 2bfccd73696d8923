import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { PeriodicJob } from '@app/runtime';
import { LOGGER } from '../core/tokens';
import { AnalyticsRepository } from './analytics.repository';

const MINUTE = 60_000;
const BATCH = 5000;

/**
 * Folds the per-writer stripes of finished 15-minute slots into one row each (see the analytics
 * migration), so reading a year stays at most 35,040 rows per account. Reads are exact with or
 * without it; it only keeps them fast.
 */
@Injectable()
export class AnalyticsCompactionJob extends PeriodicJob {
  constructor(
    private readonly analytics: AnalyticsRepository,
    @Inject(LOGGER) logger: Logger,
  ) {
    super('analytics-compaction', MINUTE, logger);
  }

  async run(): Promise<{ moved: number }> {
    let moved = 0;
    for (;;) {
      const batch = await this.analytics.compact(BATCH);
      moved += batch;
      if (batch < BATCH) return { moved };
    }
  }
}
