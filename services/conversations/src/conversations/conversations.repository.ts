import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ConversationStatus } from '@app/dialects';
import type { LeadView, ListConversationsQuery, NewMessage } from '@app/contracts';
import { CommandRecord, execute } from '@app/database';
import { ConversationRow, MessageRow } from './conversation-row';
import {
  ConversationJsonRow,
  filterParameter,
  type ListFilter,
  listPagesStatement,
  SQL,
} from './conversations.sql';

export interface ConversationPageRows {
  /** Each conversation of the page as its view's JSON. */
  json: string[];
  total: number;
  /** Whether `total` is a lower bound (a list filtered by `q` or `tag` with many matches). */
  bounded: boolean;
  snapshot: string;
}

/** A read of one page of an account's conversations: its query, `snapshot` being a pg_snapshot. */
export interface PageRead {
  accountId: string;
  query: ListConversationsQuery;
}

/** A read of one conversation with its messages. */
export interface ConversationRead {
  accountId: string;
  conversationId: string;
}

/** What a send-message command writes: its message, the message's event and the command's record. */
export interface MessageAppend {
  accountId: string;
  conversationId: string;
  message: NewMessageRow;
  /** The event's envelope without its time, sequence and data, which the statement adds. */
  event: { envelope: object; type: string; id: string };
  /** The command to record with the message; null when its caller records it. */
  command: CommandRecord | null;
}

/** A message to insert: what the command gives, and the id it gets. */
export type NewMessageRow = NewMessage & { id: string };

export interface NewConversationRow {
  id: string;
  status: ConversationStatus;
  visitor: { name: string | null; email: string | null; phone: string | null } | null;
  subject: string | null;
  metadata: Record<string, unknown>;
  tags: string[];
}

/**
 * All SQL of conversations, messages and leads. Every method takes the account id, so a query
 * that forgets the tenant cannot be written. Writes take the caller's transaction.
 */
/**
 * The most messages one read of a conversation returns (about 13 MB of JSON, served in under a
 * second here; BENCHMARKS.md): a longer one is read in pages, never sent half or lost in transit.
 */
export const MAX_MESSAGES_PER_READ = 50_000;

@Injectable()
export class ConversationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Pages of lists that use the same filters (`used`) and order, in one statement; each newest
   * first unless `order` is asc, as of its `snapshot` (a pg_snapshot; the statement's own for a
   * first page). Rows whose creating transaction the snapshot does not see are hidden, so offsets
   * stay stable while others create conversations (changes to `updated_at` still move rows in or
   * out of an `updated_after` filter).
   */
  async listPages(
    pages: readonly PageRead[],
    used: readonly ListFilter[],
    order: 'asc' | 'desc',
  ): Promise<ConversationPageRows[]> {
    const column = <T>(value: (page: PageRead) => T) => pages.map(value);
    const { rows } = await execute(this.db, listPagesStatement(used, order), [
      column((page) => page.accountId),
      column((page) => page.query.limit),
      column((page) => page.query.offset),
      column((page) => page.query.snapshot ?? null),
      ...used.map((name) => column((page) => filterParameter(page.query[name]!))),
    ]);
    const read = pages.map((): ConversationPageRows => ({
      json: [],
      total: 0,
      bounded: false,
      snapshot: '',
    }));
    // A page's rows come in its order (each page is its own LATERAL subquery, joined in turn).
    for (const row of rows) {
      const page = read[Number(row.page) - 1];
      page.total = Number(row.total);
      page.bounded = row.bounded;
      page.snapshot = row.snapshot;
      if (row.json !== null) page.json.push(row.json);
    }
    return read;
  }

  /**
   * Conversations with all their messages, as JSON (null for one with over MAX_MESSAGES_PER_READ),
   * for several reads in one statement; one row per read that found its conversation.
   */
  async readConversations(reads: readonly ConversationRead[]): Promise<ConversationJsonRow[]> {
    const { rows } = await execute(this.db, SQL.readConversations, [
      reads.map((read) => read.conversationId),
      reads.map((read) => read.accountId),
      MAX_MESSAGES_PER_READ,
    ]);
    return rows;
  }

  async find(accountId: string, conversationId: string): Promise<ConversationRow | undefined> {
    const { rows } = await execute(this.db, SQL.find, [conversationId, accountId]);
    return rows[0];
  }

  /** Locks the conversation for the rest of the transaction: changes to one conversation serialise. */
  async lock(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
  ): Promise<ConversationRow | undefined> {
    const { rows } = await execute(tx, SQL.lock, [conversationId, accountId]);
    return rows[0];
  }

  async insertConversation(
    tx: EntityManager,
    accountId: string,
    row: NewConversationRow,
  ): Promise<ConversationRow> {
    const {
      rows: [inserted],
    } = await execute(tx, SQL.insertConversation, [
      row.id,
      accountId,
      row.status,
      row.visitor?.name ?? null,
      row.visitor?.email ?? null,
      row.visitor?.phone ?? null,
      row.subject,
      JSON.stringify(row.metadata),
      row.tags,
    ]);
    await this.adjustStatusCount(tx, accountId, row.status, 1);
    return inserted;
  }

  /**
   * See SQL.appendMessages: each append's message, event and command record, all in one
   * statement (in `tx` when given); the messages appended (none for an append whose conversation
   * is closed or not its account's). At most one append per conversation.
   */
  async appendMessages(appends: readonly MessageAppend[], tx?: EntityManager): Promise<MessageRow[]> {
    const sorted = [...appends].sort((a, b) => (a.conversationId < b.conversationId ? -1 : 1));
    const column = <T>(value: (append: MessageAppend) => T) => sorted.map(value);
    const { rows } = await execute(tx ?? this.db, SQL.appendMessages, [
      column((a) => a.accountId),
      column((a) => a.conversationId),
      column((a) => a.message.id),
      column((a) => a.message.sender),
      column((a) => a.message.content),
      column((a) => a.event.id),
      column((a) => a.event.type),
      column((a) => JSON.stringify(a.event.envelope)),
      column((a) => a.command?.id ?? null),
      column((a) => a.command?.pattern ?? null),
      column((a) => a.command?.payloadHash ?? null),
    ]);
    return rows.map((row) => row.message);
  }

  async updateStatus(
    tx: EntityManager,
    accountId: string,
    current: ConversationRow,
    status: ConversationStatus,
  ): Promise<ConversationRow> {
    const {
      rows: [row],
    } = await execute(tx, SQL.updateStatus, [current.id, accountId, status]);
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

  /** Sets subject, visitor, metadata and tags (the caller holds the row's lock and passes their new values). */
  async updateDetails(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
    details: Pick<
      ConversationRow,
      'subject' | 'visitor_name' | 'visitor_email' | 'visitor_phone' | 'metadata' | 'tags'
    >,
  ): Promise<ConversationRow> {
    const {
      rows: [row],
    } = await execute(tx, SQL.updateDetails, [
      conversationId,
      accountId,
      details.subject,
      details.visitor_name,
      details.visitor_email,
      details.visitor_phone,
      JSON.stringify(details.metadata),
      details.tags,
    ]);
    return row;
  }

  /** A page of messages in position order from `after` on (exclusive), and whether more follow. */
  async messagePage(
    accountId: string,
    conversationId: string,
    query: { limit: number; order: 'asc' | 'desc'; after: number },
  ): Promise<{ rows: Array<MessageRow & { position: number }>; more: boolean }> {
    const statement = query.order === 'asc' ? SQL.messagesAfter : SQL.messagesBefore;
    const { rows } = await execute(this.db, statement, [conversationId, accountId, query.after, query.limit]);
    return { rows: rows.slice(0, query.limit), more: rows.length > query.limit };
  }

  /** The conversation's most recently captured lead, if any. */
  async latestLead(accountId: string, conversationId: string): Promise<LeadView | undefined> {
    const { rows } = await execute(this.db, SQL.latestLead, [conversationId, accountId]);
    return rows[0];
  }

  async saveLead(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
    lead: { id: string; name: string | null; email: string | null; phone: string | null },
  ): Promise<{ lead: { id: string; created_at: string }; conversation: ConversationRow }> {
    const {
      rows: [row],
    } = await execute(tx, SQL.saveLead, [
      conversationId,
      accountId,
      lead.id,
      lead.name,
      lead.email,
      lead.phone,
    ]);
    return row;
  }

  /**
   * Deletes a conversation the caller has locked (`current`), with its messages, leads and events,
   * and takes it out of the analytics rollups and the per-status counts.
   */
  async erase(tx: EntityManager, accountId: string, current: ConversationRow): Promise<void> {
    await execute(tx, SQL.uncountConversation, [current.id, accountId]);
    await execute(tx, SQL.eraseConversation, [current.id, accountId]);
    await this.adjustStatusCount(tx, accountId, current.status, -1);
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
