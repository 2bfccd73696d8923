import { Inject, Injectable } from '@nestjs/common';
import type { ConversationsConfig } from '@app/config';
import { CONVERSATIONS_CONFIG } from '../tokens';
import type { MessageRow } from './conversation-row';
import { ConversationsRepository, type MessageAppend } from './conversations.repository';
import { MessageAppenderMetrics } from './message-appender-metrics';

interface Waiting {
  append: MessageAppend;
  resolve: (message: MessageRow | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes the messages of concurrent send-message commands in shared statements (group commit).
 * Most of a lone send's database work is fixed per statement (planning the executor, opening the
 * tables' indexes, the analytics trigger, the commit and its flush), so under load one statement
 * per batch costs Postgres about a third as much per message (BENCHMARKS.md, issue 11). Nothing
 * waits for a batch to fill: an append starts at once while fewer than
 * MESSAGE_APPEND_CONCURRENCY statements run, and appends that arrive meanwhile go together in the
 * next one, so a lone send is as quick as before and a busy service batches by itself.
 *
 * A conversation has at most one append in flight: the next waits for the previous one's commit,
 * so a conversation's messages take positions in the order their commands arrived, and no two
 * running statements update the same row (which one statement cannot do twice, and two could
 * deadlock over). A statement that fails fails all its appends, whatever the cause (one repeated
 * command id fails the whole statement): each is then tried in a statement of its own, so every
 * command gets the outcome it would have had alone.
 */
@Injectable()
export class MessageAppender {
  private readonly waiting: Waiting[] = [];
  /** Conversations with an append in a running statement. */
  private readonly busy = new Set<string>();
  private running = 0;

  constructor(
    private readonly conversations: ConversationsRepository,
    @Inject(CONVERSATIONS_CONFIG) private readonly config: ConversationsConfig,
    private readonly metrics: MessageAppenderMetrics,
  ) {}

  /** The message appended, or undefined if its conversation is closed or not the account's. */
  append(append: MessageAppend): Promise<MessageRow | undefined> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ append, resolve, reject });
      this.startStatements();
    });
  }

  private startStatements(): void {
    while (this.running < this.config.MESSAGE_APPEND_CONCURRENCY) {
      const batch = this.nextBatch();
      if (batch.length === 0) return;
      this.running++;
      void this.write(batch).finally(() => {
        this.running--;
        for (const { append } of batch) this.busy.delete(append.conversationId);
        this.startStatements();
      });
    }
  }

  /** Waiting appends in arrival order, up to the batch size, one per conversation not already busy. */
  private nextBatch(): Waiting[] {
    const batch: Waiting[] = [];
    for (let i = 0; i < this.waiting.length && batch.length < this.config.MESSAGE_APPEND_BATCH_MAX;) {
      const { conversationId } = this.waiting[i].append;
      if (this.busy.has(conversationId)) {
        i++;
        continue;
      }
      this.busy.add(conversationId);
      batch.push(...this.waiting.splice(i, 1));
    }
    return batch;
  }

  private async write(batch: Waiting[]): Promise<void> {
    this.metrics.statement(batch.length);
    try {
      const appended = await this.conversations.appendMessages(batch.map((waiting) => waiting.append));
      const byId = new Map(appended.map((message) => [message.id, message]));
      for (const waiting of batch) waiting.resolve(byId.get(waiting.append.message.id));
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      this.metrics.split();
      await Promise.all(batch.map((waiting) => this.write([waiting])));
    }
  }
}
