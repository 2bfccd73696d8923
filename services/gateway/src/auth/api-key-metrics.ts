import { Counter, Registry } from 'prom-client';
import { METRIC_PREFIX } from '@app/observability';

/** Reads of API keys from Postgres: cache misses and refreshes, one per key however many requests wait for it. */
export class ApiKeyMetrics {
  private readonly reads: Counter;

  constructor(registry: Registry) {
    this.reads = new Counter({
      name: `${METRIC_PREFIX}api_key_reads_total`,
      help: 'API keys read from Postgres (cache misses and refreshes ahead of expiry; concurrent requests for one key share a read)',
      registers: [registry],
    });
  }

  keyRead(): void {
    this.reads.inc();
  }
}
