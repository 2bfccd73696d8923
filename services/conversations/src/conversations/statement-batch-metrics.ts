import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';
import { METRIC_PREFIX } from '@app/observability';

/** The statements whose calls are batched (BatchedCalls): how full their batches are, and how often one is split. */
export type BatchedStatement = 'append_messages' | 'read_conversations' | 'list_pages';

@Injectable()
export class StatementBatchMetrics {
  private readonly batchSize: Histogram<'statement'>;
  private readonly splits: Counter<'statement'>;

  constructor(@Inject(Registry) registry: Registry) {
    this.batchSize = new Histogram({
      name: `${METRIC_PREFIX}statement_batch_size`,
      help: 'Commands or queries served by one statement, by batched statement',
      labelNames: ['statement'],
      buckets: [1, 2, 4, 8, 16, 32, 64],
      registers: [registry],
    });
    this.splits = new Counter({
      name: `${METRIC_PREFIX}statement_batches_split_total`,
      help: 'Statements of several commands or queries that failed and were run again one each',
      labelNames: ['statement'],
      registers: [registry],
    });
  }

  /** BatchedCalls' name (its spans'), onBatch and onSplit for `statement`. */
  for(statement: BatchedStatement): { name: string; onBatch: (size: number) => void; onSplit: () => void } {
    return {
      name: statement,
      onBatch: (size) => this.batchSize.observe({ statement }, size),
      onSplit: () => this.splits.inc({ statement }),
    };
  }
}
