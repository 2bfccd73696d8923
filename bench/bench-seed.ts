import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { MESSAGE_SENDERS } from '@app/contracts';
import { messageEventType } from '../services/conversations/src/conversations/message-event-type';
import { eventEnvelope } from '../services/conversations/src/outbox/outbox.writer';

/**
 * Seeds one account the way bench/baseline does (80% active, 20% closed, N messages each, one
 * per minute of history), straight into the conversations schema, keeping its counters right.
 * Conversation ids are deterministic so the load generator needs no database access; the
 * account's index (0, 1, ...) is in them, so several seeded accounts share a database.
 */
const accountGroup = (account: number) => (0x8000 + account).toString(16);
export const conversationIdFor = (i: number, account = 0) =>
  `00000000-0000-4000-${accountGroup(account)}-${i.toString(16).padStart(12, '0')}`;

/** SQL of what seeded rows hold, in place of the defaults: `tags` over the conversation's number `i`, `content` over its id `c.id` and the message's `k`. */
export interface SeedExpressions {
  tags?: string;
  content?: string;
  /** Without triggers and foreign-key checks (session_replication_role replica): a bulk load that needs no analytics. */
  bulk?: boolean;
  /**
   * The `message.sent` events of the newest `events` conversations' messages, published, in the
   * outbox: the events store of a deployment that has run a while is never empty, and statements
   * planned against an empty one (generic plans, made once per connection) scan it whole.
   */
  events?: number;
}

export async function seedAccount(
  databaseUrl: string,
  accountId: string,
  conversations: number,
  messagesPerConversation: number,
  accountIndex = 0,
  sql: SeedExpressions = {},
): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    if (sql.bulk) await db.query('SET session_replication_role = replica');
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO conversations.conversations
         (id, account_id, status, subject, metadata, tags, message_count, last_message_at, created_at, updated_at)
       SELECT ('00000000-0000-4000-' || $4::text || '-' || lpad(to_hex(i), 12, '0'))::uuid, $1::uuid,
              CASE WHEN i % 5 = 0 THEN 'closed' ELSE 'active' END, 'Seeded conversation ' || i, '{}'::jsonb,
              ${sql.tags ?? `'{}'::text[]`},
              $3::int, now() - make_interval(mins => $2::int - i), now() - make_interval(mins => $2::int - i + 60),
              now() - make_interval(mins => $2::int - i)
         FROM generate_series(0, $2::int - 1) AS i`,
      [accountId, conversations, messagesPerConversation, accountGroup(accountIndex)],
    );
    await db.query(
      `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
       SELECT gen_random_uuid(), c.id, c.account_id, k, CASE WHEN k % 2 = 0 THEN 'visitor' ELSE 'agent' END,
              ${sql.content ?? `'Message ' || k || ' in conversation ' || c.id || ': lorem ipsum dolor sit amet, consectetur adipiscing elit.'`},
              c.created_at + make_interval(secs => k)
         FROM conversations.conversations c CROSS JOIN generate_series(1, $2::int) AS k
        WHERE c.account_id = $1`,
      [accountId, messagesPerConversation],
    );
    if (sql.events) await seedEvents(db, accountId, sql.events);
    await db.query(
      `INSERT INTO conversations.status_counts (account_id, status, count)
       SELECT account_id, status, count(*) FROM conversations.conversations WHERE account_id = $1 GROUP BY 1, 2
       ON CONFLICT (account_id, status) DO UPDATE SET count = EXCLUDED.count`,
      [accountId],
    );
    await db.query('COMMIT');
    await db.query('VACUUM ANALYZE conversations.conversations');
    await db.query('VACUUM ANALYZE conversations.messages');
    if (sql.events) await db.query('VACUUM ANALYZE conversations.outbox');
  } catch (error) {
    await db.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await db.end();
  }
}

/**
 * Each message of the account's newest `conversations` conversations gets its event, published in
 * creation order: the service's envelope of its sender's event type (eventEnvelope,
 * messageEventType) with each event's id, subject, time and sequence, and the payload the send
 * statement writes (conversations.sql.ts, appendMessages); the conversations' event counters follow.
 */
async function seedEvents(db: Client, accountId: string, conversations: number): Promise<void> {
  const cause = { accountId, requestId: randomUUID() };
  const envelopes = Object.fromEntries(
    MESSAGE_SENDERS.map((sender) => [sender, eventEnvelope(cause, '', messageEventType(sender))]),
  );
  await db.query(
    `WITH newest AS (
         SELECT id FROM conversations.conversations WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2),
       events AS (
         SELECT gen_random_uuid() AS event_id, m.*,
                to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
           FROM conversations.messages m JOIN newest ON newest.id = m.conversation_id)
     INSERT INTO conversations.outbox
            (event_id, account_id, conversation_id, type, envelope, sequence, created_at, published_at, published_seq)
     SELECT event_id, account_id, conversation_id, $3::jsonb -> sender ->> 'type',
            ($3::jsonb -> sender) || jsonb_build_object('id', event_id, 'subject', conversation_id, 'time', at, 'sequence', position,
              'data', jsonb_build_object('conversation_id', conversation_id, 'message', jsonb_build_object(
                'id', id, 'conversation_id', conversation_id, 'sender', sender, 'content', content, 'created_at', at))),
            position, created_at, created_at, nextval('conversations.outbox_published_seq')
       FROM (SELECT * FROM events ORDER BY created_at, position) ordered`,
    [accountId, conversations, JSON.stringify(envelopes)],
  );
  await db.query(
    `UPDATE conversations.conversations c SET event_sequence = e.last
       FROM (SELECT conversation_id, max(sequence) AS last FROM conversations.outbox WHERE account_id = $1
              GROUP BY conversation_id) e
      WHERE c.id = e.conversation_id`,
    [accountId],
  );
}

/**
 * What an operator's long-running server has and a fresh bulk load has not: the load written out
 * (CHECKPOINT) and the conversations schema in shared buffers (pg_prewarm, from Postgres's contrib).
 */
export async function settleAfterLoad(databaseUrl: string): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('CHECKPOINT');
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
    await db.query(
      `SELECT pg_prewarm(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'conversations' AND c.relkind IN ('r', 'i')`,
    );
  } finally {
    await db.end();
  }
}

/** The Postgres server the benches create their databases on (its `postgres` database). */
export const BENCH_ADMIN_URL =
  process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The URL of a bench's own database on that server. */
export const benchDatabaseUrl = (name: string): string => BENCH_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`);

/** Drops and creates a bench database (`name`) through the admin connection, so every run starts empty. */
export async function recreateDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
}
