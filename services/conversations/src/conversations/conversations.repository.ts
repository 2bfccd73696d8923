import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { ConversationStatus } from '@app/dialects';
import type { ListConversationsQuery, MessageSender } from '@app/contracts';
import { ConversationRow, MessageRow } from './conversation-row';

/** Timestamps leave Postgres as ISO 8601 UTC with milliseconds, exactly as the API renders them. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const CONVERSATION_COLUMNS = `c.id, c.status, c.visitor_name, c.visitor_email, c.visitor_phone, c.subject, c.metadata,
  c.message_count, ${iso('c.last_message_at')} AS last_message_at, ${iso('c.created_at')} AS created_at,
  ${iso('c.updated_at')} AS updated_at, ${iso('c.closed_at')} AS closed_at`;

const MESSAGE_COLUMNS = `m.id, m.conversation_id, m.sender, m.content, ${iso('m.created_at')} AS created_at`;

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
    const statusFilter = query.status ? 'AND c.status = $5' : '';
    const params: unknown[] = [accountId, query.limit, query.offset, query.snapshot ?? null];
    if (query.status) params.push(query.status);
    const rows: Array<ConversationRow & { total: string; snapshot: string; id: string | null }> = await this.db.query(
      `WITH meta AS (SELECT COALESCE($4::pg_snapshot, pg_current_snapshot()) AS snapshot),
            counted AS (
              SELECT (SELECT COALESCE(SUM(count), 0) FROM conversations.status_counts c
                       WHERE c.account_id = $1 ${statusFilter})
                   - (SELECT count(*) FROM conversations.conversations c, meta
                       WHERE c.account_id = $1 ${statusFilter}
                         AND c.created_xid >= pg_snapshot_xmin(meta.snapshot)
                         AND NOT pg_visible_in_snapshot(c.created_xid, meta.snapshot)) AS total)
       SELECT counted.total, meta.snapshot::text AS snapshot, page.*
         FROM meta CROSS JOIN counted
         LEFT JOIN LATERAL (
           SELECT ${CONVERSATION_COLUMNS} FROM conversations.conversations c
            WHERE c.account_id = $1 ${statusFilter} AND pg_visible_in_snapshot(c.created_xid, meta.snapshot)
            ORDER BY c.created_at DESC, c.id DESC
            LIMIT $2 OFFSET $3) page ON true`,
      params,
    );
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
    const rows = await this.db.query(
      `SELECT ${CONVERSATION_COLUMNS},
              COALESCE((SELECT json_agg(json_build_object('id', m.id, 'conversation_id', m.conversation_id,
                          'sender', m.sender, 'content', m.content, 'created_at', ${iso('m.created_at')})
                          ORDER BY m.position)
                          FROM conversations.messages m WHERE m.conversation_id = c.id), '[]'::json) AS messages
         FROM conversations.conversations c
        WHERE c.id = $1 AND c.account_id = $2`,
      [conversationId, accountId],
    );
    return rows[0];
  }

  /** Locks the conversation for the rest of the transaction: changes to one conversation serialise. */
  async lock(tx: EntityManager, accountId: string, conversationId: string): Promise<ConversationRow | undefined> {
    const rows = await tx.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations.conversations c
        WHERE c.id = $1 AND c.account_id = $2 FOR UPDATE`,
      [conversationId, accountId],
    );
    return rows[0];
  }

  async insertConversation(tx: EntityManager, accountId: string, row: NewConversationRow): Promise<ConversationRow> {
    const [inserted] = await tx.query(
      `INSERT INTO conversations.conversations AS c
         (id, account_id, status, visitor_name, visitor_email, visitor_phone, subject, metadata, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now(), now())
       RETURNING ${CONVERSATION_COLUMNS}`,
      [
        row.id,
        accountId,
        row.status,
        row.visitor?.name ?? null,
        row.visitor?.email ?? null,
        row.visitor?.phone ?? null,
        row.subject,
        JSON.stringify(row.metadata),
      ],
    );
    await this.adjustStatusCount(tx, accountId, row.status, 1);
    return inserted;
  }

  /** Appends a message at the end of the conversation and updates its counters. */
  async appendMessage(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
    message: { id: string; sender: MessageSender; content: string },
  ): Promise<{ message: MessageRow; conversation: ConversationRow }> {
    const [row] = await tx.query(
      `WITH c AS (
         UPDATE conversations.conversations c
            SET message_count = message_count + 1, last_message_at = now(), updated_at = now()
          WHERE id = $1 AND account_id = $2
          RETURNING ${CONVERSATION_COLUMNS}),
       m AS (
         INSERT INTO conversations.messages AS m (id, conversation_id, account_id, position, sender, content, created_at)
         SELECT $3, c.id, $2, c.message_count, $4, $5, now() FROM c
         RETURNING ${MESSAGE_COLUMNS})
       SELECT row_to_json(c) AS conversation, row_to_json(m) AS message FROM c, m`,
      [conversationId, accountId, message.id, message.sender, message.content],
    );
    return row;
  }

  async updateStatus(
    tx: EntityManager,
    accountId: string,
    current: ConversationRow,
    status: ConversationStatus,
  ): Promise<ConversationRow> {
    // For UPDATE, TypeORM's query() answers [rows, affected count].
    const [[row]] = await tx.query(
      `UPDATE conversations.conversations c
          SET status = $3, updated_at = now(),
              closed_at = CASE WHEN $3 = 'closed' THEN now() ELSE NULL END
        WHERE id = $1 AND account_id = $2
        RETURNING ${CONVERSATION_COLUMNS}`,
      [current.id, accountId, status],
    );
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
    const [row] = await tx.query(
      `WITH c AS (
         UPDATE conversations.conversations c
            SET visitor_name = COALESCE($4, visitor_name), visitor_email = COALESCE($5, visitor_email),
                visitor_phone = COALESCE($6, visitor_phone), updated_at = now()
          WHERE id = $1 AND account_id = $2
          RETURNING ${CONVERSATION_COLUMNS}),
       l AS (
         INSERT INTO conversations.leads (id, conversation_id, account_id, name, email, phone, created_at)
         SELECT $3, c.id, $2, $4, $5, $6, now() FROM c
         RETURNING id, ${iso('created_at')} AS created_at)
       SELECT row_to_json(c) AS conversation, row_to_json(l) AS lead FROM c, l`,
      [conversationId, accountId, lead.id, lead.name, lead.email, lead.phone],
    );
    return row;
  }

  private async adjustStatusCount(tx: EntityManager, accountId: string, status: string, delta: number): Promise<void> {
    // A decrement always finds its row (the conversation being moved was counted); an upsert
    // cannot be used for it, since the CHECK applies to the candidate row before the conflict.
    if (delta < 0) {
      await tx.query(
        `UPDATE conversations.status_counts SET count = count + $3 WHERE account_id = $1 AND status = $2`,
        [accountId, status, delta],
      );
      return;
    }
    await tx.query(
      `INSERT INTO conversations.status_counts (account_id, status, count) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, status) DO UPDATE SET count = status_counts.count + EXCLUDED.count`,
      [accountId, status, delta],
    );
  }
}
