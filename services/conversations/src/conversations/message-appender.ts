import { Inject, Injectable } from '@nestjs/common';
import type { ConversationsConfig } from '@app/config';
import type { Context } from '@app/observability';
import { BatchedCalls } from '@app/runtime';
import { CONVERSATIONS_CONFIG } from '../core/tokens';
import type { MessageRow } from './conversation-row';
import { ConversationsRepository, type MessageAppend } from './conversations.repository';
import { StatementBatchMetrics } from './statement-batch-metrics';

/**
 * Writes the messages of concurrent send-message commands in shared statements (group commit).
 * Most of a lone send's database work is fixed per statement (starting the executor over the
 * tables and indexes it writes, the analytics trigger, the commit and its flush), so a batch costs
 * Postgres a fraction of that per message (BENCHMARKS.md, "Send's statement").
 *
 * A conversation has at most one append in flight: the next waits for the previous one's commit,
 * so a conversation's messages take positions in the order their commands arrived, and no two
 * running statements update the same row (which one statement cannot do twice, and two could
 * deadlock over). A failed statement is run again one command each (BatchedCalls): one repeated
 * command id fails the whole statement, and each command must get its own outcome.
 */
@Injectable()
export class MessageAppender {
  private readonly batches: BatchedCalls<MessageAppend, MessageRow | undefined>;

  constructor(
    conversations: ConversationsRepository,
    @Inject(CONVERSATIONS_CONFIG) config: ConversationsConfig,
    metrics: StatementBatchMetrics,
  ) {
    this.batches = new BatchedCalls({
      concurrency: config.DATABASE_BATCH_CONCURRENCY,
      maxBatch: config.DATABASE_BATCH_MAX,
      key: (append) => append.conversationId,
      run: async (appends) => {
        const appended = await conversations.appendMessages(appends);
        const byId = new Map(appended.map((message) => [message.id, message]));
        return appends.map((append) => byId.get(append.message.id));
      },
      ...metrics.for('append_messages'),
    });
  }

  /**
   * The message appended, or undefined if its conversation is closed or not the account's.
   * `trace`: the command's trace context, for the statement's span.
   */
  append(append: MessageAppend, trace?: Context): Promise<MessageRow | undefined> {
    return this.batches.call(append, trace);
  }
}
