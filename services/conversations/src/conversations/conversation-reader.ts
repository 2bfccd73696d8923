import { Inject, Injectable } from '@nestjs/common';
import type { ConversationsConfig } from '@app/config';
import { BatchedCalls } from '@app/runtime';
import { CONVERSATIONS_CONFIG } from '../tokens';
import { type ConversationRead, ConversationsRepository } from './conversations.repository';
import type { ConversationJsonRow } from './conversations.sql';
import { StatementBatchMetrics } from './statement-batch-metrics';

/**
 * Reads of one conversation with its messages, several to a statement when they arrive together
 * (BatchedCalls): a read's round trip, planning and executor start are most of its cost.
 */
@Injectable()
export class ConversationReader {
  private readonly batches: BatchedCalls<ConversationRead, ConversationJsonRow | undefined>;

  constructor(
    conversations: ConversationsRepository,
    @Inject(CONVERSATIONS_CONFIG) config: ConversationsConfig,
    metrics: StatementBatchMetrics,
  ) {
    this.batches = new BatchedCalls({
      concurrency: config.DATABASE_BATCH_CONCURRENCY,
      maxBatch: config.DATABASE_BATCH_MAX,
      run: async (reads) => {
        const rows = await conversations.readConversations(reads);
        const found = new Map(rows.map((row) => [readKey(row.account_id, row.id), row]));
        return reads.map((read) => found.get(readKey(read.accountId, read.conversationId)));
      },
      ...metrics.for('read_conversations'),
    });
  }

  /** The account's conversation with its messages, or undefined if it has no such conversation. */
  read(accountId: string, conversationId: string): Promise<ConversationJsonRow | undefined> {
    return this.batches.call({ accountId, conversationId });
  }
}

const readKey = (accountId: string, conversationId: string) => `${accountId}/${conversationId}`;
