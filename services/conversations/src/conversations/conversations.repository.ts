import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ConversationStatus } from '@app/dialects';
import type { ListConversationsQuery, MessageSender } from '@app/contracts';
import { CommandRecord, execute } from '@app/database';
import { ConversationRow, MessageRow } from './conversation-row';
import { SQL } from './conversations.sql';

export interface ConversationPageRows {
  rows: ConversationRow[];
  total: number;
  snapshot: string;
}

export interface NewConversationRow {
  id: string;
  status: ConversationStatus;
  visitor: { name: string | null; email: string | null; phone: string | null } | null;
  subject: string | null;
  metadata: Record<string, unknown>;
}

/**
 * All SQL of conversations, messages and leads. Every method takes the account id, so a query
 * that forgets the tenant cannot be written. Writes take the caller's transaction.
 */
@Injectable()
export class ConversationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * One page, newest first, as of `snapshot` (a pg_snapshot; the statement's own for a first
   * page). Rows whose creating transaction the snapshot does not see are hidden, so offsets stay
   * stable while others create conversations. The total is the per-status counters minus the few
   * rows the snapshot does not see, so it costs the same for 10 or 10 million conversations.
   */
  async listPage(accountId: string, query: ListConversationsQuery): Promise<ConversationPageRows> {
    const params: unknown[] = [accountId, query.limit, query.offset, query.snapshot ?? null];
    if (query.status) params.push(query.status);
    const rows: Array<ConversationRow & { total: string; snapshot: string; id: string | null }> =
      await execute(this.db, query.status ? SQL.listPageWithStatus : SQL.listPage, params);
    return {
      total: Number(rows[0].total),
      snapshot: rows[0].snapshot,
      rows: rows.filter((row) => row.id !== null),
    };
  }

  async findWithMessages(
    accountId: string,
    conversationId: string,
  ): Promise<(ConversationRow & { messages: MessageRow[] }) | undefined> {
    const rows = await execute(this.db, SQL.findWithMessages, [conversationId, accountId]);
    return rows[0];
  }

  async find(accountId: string, conversationId: string): Promise<ConversationRow | undefined> {
    const [row] = await execute(this.db, SQL.find, [conversationId, accountId]);
    return row;
  }

  /** Locks the conversation for the rest of the transaction: changes to one conversation serialise. */
  async lock(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
  ): Promise<ConversationRow | undefined> {
    const rows = await execute(tx, SQL.lock, [conversationId, accountId]);
    return rows[0];
  }

  async insertConversation(
    tx: EntityManager,
    accountId: string,
    row: NewConversationRow,
  ): Promise<ConversationRow> {
    const [inserted] = await execute(tx, SQL.insertConversation, [
      row.id,
      accountId,
      row.status,
      row.visitor?.name ?? null,
      row.visitor?.email ?? null,
      row.visitor?.phone ?? null,
      row.subject,
      JSON.stringify(row.metadata),
    ]);
    await this.adjustStatusCount(tx, accountId, row.status, 1);
    return inserted;
  }

  /**
   * Appends a message at the end of an open conversation and updates its counters (the UPDATE
   * locks the conversation row); undefined if it is closed or not this account's.
   */
  async appendMessage(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
    message: { id: string; sender: MessageSender; content: string },
  ): Promise<{ message: MessageRow; conversation: ConversationRow } | undefined> {
    const [row] = await execute(tx, SQL.appendMessage, [
      conversationId,
      accountId,
      message.id,
      message.sender,
      message.content,
    ]);
    return row;
  }

  /** See SQL.sendMessage: the message, its event and the command record, atomically. */
  async sendMessage(
    accountId: string,
    conversationId: string,
    message: { id: string; sender: MessageSender; content: string },
    event: { envelope: object; type: string; id: string },
    command: CommandRecord,
  ): Promise<{ message: MessageRow; conversation: ConversationRow } | undefined> {
    const [row] = await execute(this.db, SQL.sendMessage, [
      conversationId,
      accountId,
      message.id,
      message.sender,
      message.content,
      event.id,
      event.type,
      JSON.stringify(event.envelope),
      command.id,
      command.pattern,
      command.payloadHash,
    ]);
    return row;
  }

  async updateStatus(
    tx: EntityManager,
    accountId: string,
    current: ConversationRow,
    status: ConversationStatus,
  ): Promise<ConversationRow> {
    // For UPDATE, TypeORM's query() answers [rows, affected count].
    const [[row]] = await execute(tx, SQL.updateStatus, [current.id, accountId, status]);
    // Counter rows are always locked in name order, so two opposite moves cannot deadlock.
    const deltas: Array<[string, number]> = [
      [current.status, -1],
      [status, 1],
    ];
    for (const [name, delta] of deltas.sort(([a], [b]) => a.localeCompare(b))) {
      await this.adjustStatusCount(tx, accountId, name, delta);
    }
    return row;
  }

  async saveLead(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
    lead: { id: string; name: string | null; email: string | null; phone: string | null },
  ): Promise<{ lead: { id: string; created_at: string }; conversation: ConversationRow }> {
    const [row] = await execute(tx, SQL.saveLead, [
      conversationId,
      accountId,
      lead.id,
      lead.name,
      lead.email,
      lead.phone,
    ]);
    return row;
  }

  private async adjustStatusCount(
    tx: EntityManager,
    accountId: string,
    status: string,
    delta: number,
  ): Promise<void> {
    // A decrement always finds its row (the conversation being moved was counted); an upsert
    // cannot be used for it, since the CHECK applies to the candidate row before the conflict.
    if (delta < 0) {
      await execute(tx, SQL.decrementStatusCount, [accountId, status, delta]);
      return;
    }
    await execute(tx, SQL.incrementStatusCount, [accountId, status, delta]);
  }
}
