import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import { METRIC_PREFIX } from '@app/observability';

/** How send-message commands share statements (MessageAppender): batch sizes, and batches split after a failure. */
@Injectable()
export class MessageAppenderMetrics {
  private readonly batchSize: Histogram;
  private readonly splits: Counter;

  constructor(@Inject(Registry) registry: Registry) {
    this.batchSize = new Histogram({
      name: `${METRIC_PREFIX}message_append_batch_size`,
      help: 'Send-message commands written by one statement',
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    });
    this.splits = new Counter({
      name: `${METRIC_PREFIX}message_append_batches_split_total`,
      help: 'Statements of several send-message commands that failed and were retried one command each',
      registers: [registry],
    });
  }

  statement(commands: number): void {
    this.batchSize.observe(commands);
  }

  split(): void {
    this.splits.inc();
  }
}
