import { Inject, Injectable } from '@nestjs/common';
import type { ConversationsConfig } from '@app/config';
import type { ListConversationsQuery } from '@app/contracts';
import type { Context } from '@app/observability';
import { BatchedCalls } from '@app/runtime';
import { CONVERSATIONS_CONFIG } from '../core/tokens';
import {
  type ConversationPageRows,
  type ConversationRead,
  ConversationsRepository,
  type PageRead,
} from './conversations.repository';
import { type ConversationJsonRow, type ListFilter, usedFilters } from './conversations.sql';
import { StatementBatchMetrics } from './statement-batch-metrics';

/**
 * The reads of conversations, several to a statement when they arrive together (BatchedCalls): a
 * read's round trip, planning and executor start are most of its cost. Reads of one conversation
 * with its messages share statements; pages of lists share one when they use the same filters and
 * order (one statement per such variant).
 */
@Injectable()
export class ConversationReader {
  private readonly conversations: BatchedCalls<ConversationRead, ConversationJsonRow | undefined>;
  private readonly pages = new Map<string, BatchedCalls<PageRead, ConversationPageRows>>();

  constructor(
    private readonly repository: ConversationsRepository,
    @Inject(CONVERSATIONS_CONFIG) private readonly config: ConversationsConfig,
    private readonly metrics: StatementBatchMetrics,
  ) {
    this.conversations = new BatchedCalls({
      ...this.batching(),
      run: async (reads) => {
        const rows = await repository.readConversations(reads);
        const found = new Map(rows.map((row) => [readKey(row.account_id, row.id), row]));
        return reads.map((read) => found.get(readKey(read.accountId, read.conversationId)));
      },
      ...metrics.for('read_conversations'),
    });
  }

  /**
   * The account's conversation with its messages, or undefined if it has no such conversation.
   * `trace`: the command's trace context, for the statement's span.
   */
  read(accountId: string, conversationId: string, trace?: Context): Promise<ConversationJsonRow | undefined> {
    return this.conversations.call({ accountId, conversationId }, trace);
  }

  /** One page of the account's conversations (`query.snapshot`: a pg_snapshot to read it as of). */
  page(accountId: string, query: ListConversationsQuery, trace?: Context): Promise<ConversationPageRows> {
    const used = usedFilters(query);
    const order = query.order ?? 'desc';
    return this.pagesOf(used, order).call({ accountId, query }, trace);
  }

  /** The batches of one list variant, made on its first use (at most 2 orders x 32 filter sets). */
  private pagesOf(used: ListFilter[], order: 'asc' | 'desc'): BatchedCalls<PageRead, ConversationPageRows> {
    const variant = `${order}:${used.join(',')}`;
    let batches = this.pages.get(variant);
    if (!batches) {
      batches = new BatchedCalls({
        ...this.batching(),
        run: (pages) => this.repository.listPages(pages, used, order),
        ...this.metrics.for('list_pages'),
      });
      this.pages.set(variant, batches);
    }
    return batches;
  }

  private batching() {
    return { concurrency: this.config.DATABASE_BATCH_CONCURRENCY, maxBatch: this.config.DATABASE_BATCH_MAX };
  }
}

const readKey = (accountId: string, conversationId: string) => `${accountId}/${conversationId}`;
