import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Analytics (README, "Analytics"): rollups kept by triggers in the same transaction as every
 * insert or close, so no write path (the API, a bulk import, a seed) can leave them behind.
 *
 * - analytics_slots: per account and 15-minute UTC slot, the counts of conversations started and
 *   closed, messages by sender and leads captured. Every UTC offset in use since 1979 is a whole
 *   number of quarter hours, so a slot never straddles a local hour, day or week boundary.
 *   Writers add to the row of their own stripe (backend pid % 16): concurrent messages of one
 *   account do not queue on one row lock. The compaction job later folds the stripes of past
 *   slots into stripe -1, so a year is at most 35,040 rows to read.
 * - analytics_closures: every close, with its resolution time (start to that close).
 * - analytics_first_responses: per conversation, its first visitor message and the first agent or
 *   bot message after it.
 */
export class AnalyticsRollups1764000000000 implements MigrationInterface {
  name = 'AnalyticsRollups1764000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE conversations.analytics_slots (
        account_id            uuid NOT NULL,
        slot                  timestamptz NOT NULL,
        stripe                smallint NOT NULL,
        conversations_started integer NOT NULL DEFAULT 0,
        conversations_closed  integer NOT NULL DEFAULT 0,
        messages_visitor      integer NOT NULL DEFAULT 0,
        messages_agent        integer NOT NULL DEFAULT 0,
        messages_bot          integer NOT NULL DEFAULT 0,
        messages_system       integer NOT NULL DEFAULT 0,
        leads_captured        integer NOT NULL DEFAULT 0,
        PRIMARY KEY (account_id, slot, stripe)
      ) WITH (fillfactor = 70)`);
    // What the compaction job has left to fold (live slots, a few rows per account).
    await db.query(
      `CREATE INDEX analytics_slots_striped ON conversations.analytics_slots (slot) WHERE stripe >= 0`,
    );

    await db.query(`
      CREATE TABLE conversations.analytics_closures (
        account_id      uuid NOT NULL,
        conversation_id uuid NOT NULL,
        closed_at       timestamptz(3) NOT NULL,
        resolution_ms   bigint NOT NULL
      )`);
    await db.query(
      `CREATE INDEX analytics_closures_account_closed ON conversations.analytics_closures
         (account_id, closed_at) INCLUDE (resolution_ms)`,
    );

    await db.query(`
      CREATE TABLE conversations.analytics_first_responses (
        conversation_id           uuid PRIMARY KEY,
        account_id                uuid NOT NULL,
        visitor_message_at        timestamptz(3) NOT NULL,
        visitor_message_position  integer NOT NULL,
        responded_at              timestamptz(3),
        response_ms               bigint
      )`);
    await db.query(
      `CREATE INDEX analytics_first_responses_account_responded ON conversations.analytics_first_responses
         (account_id, responded_at) INCLUDE (response_ms) WHERE responded_at IS NOT NULL`,
    );

    // The 15-minute UTC slot of an instant.
    await db.query(`
      CREATE FUNCTION conversations.analytics_slot(at timestamptz) RETURNS timestamptz
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN date_bin('15 minutes', at, timestamptz '2000-01-01 00:00:00+00')`);

    await db.query(`
      CREATE FUNCTION conversations.analytics_conversations_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversations.analytics_slots AS s (account_id, slot, stripe, conversations_started)
        SELECT account_id, conversations.analytics_slot(created_at), pg_backend_pid() % 16, count(*)
          FROM new_rows GROUP BY 1, 2
        ON CONFLICT (account_id, slot, stripe)
          DO UPDATE SET conversations_started = s.conversations_started + EXCLUDED.conversations_started;
        -- Imported already closed (seeds, migrations): the close is history too.
        INSERT INTO conversations.analytics_closures (account_id, conversation_id, closed_at, resolution_ms)
        SELECT account_id, id, closed_at, (extract(epoch FROM closed_at - created_at) * 1000)::bigint
          FROM new_rows WHERE status = 'closed' AND closed_at IS NOT NULL;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE FUNCTION conversations.analytics_conversation_closed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        at timestamptz(3) := COALESCE(NEW.closed_at, now());
      BEGIN
        INSERT INTO conversations.analytics_closures (account_id, conversation_id, closed_at, resolution_ms)
        VALUES (NEW.account_id, NEW.id, at, (extract(epoch FROM at - NEW.created_at) * 1000)::bigint);
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE FUNCTION conversations.analytics_closures_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversations.analytics_slots AS s (account_id, slot, stripe, conversations_closed)
        SELECT account_id, conversations.analytics_slot(closed_at), pg_backend_pid() % 16, count(*)
          FROM new_rows GROUP BY 1, 2
        ON CONFLICT (account_id, slot, stripe)
          DO UPDATE SET conversations_closed = s.conversations_closed + EXCLUDED.conversations_closed;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE FUNCTION conversations.analytics_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversations.analytics_slots AS s
               (account_id, slot, stripe, messages_visitor, messages_agent, messages_bot, messages_system)
        SELECT account_id, conversations.analytics_slot(created_at), pg_backend_pid() % 16,
               count(*) FILTER (WHERE sender = 'visitor'), count(*) FILTER (WHERE sender = 'agent'),
               count(*) FILTER (WHERE sender = 'bot'), count(*) FILTER (WHERE sender = 'system')
          FROM new_rows GROUP BY 1, 2
        ON CONFLICT (account_id, slot, stripe) DO UPDATE SET
          messages_visitor = s.messages_visitor + EXCLUDED.messages_visitor,
          messages_agent = s.messages_agent + EXCLUDED.messages_agent,
          messages_bot = s.messages_bot + EXCLUDED.messages_bot,
          messages_system = s.messages_system + EXCLUDED.messages_system;
        -- A conversation's first visitor message starts the wait for a first response ...
        INSERT INTO conversations.analytics_first_responses
               (conversation_id, account_id, visitor_message_at, visitor_message_position)
        SELECT DISTINCT ON (conversation_id) conversation_id, account_id, created_at, position
          FROM new_rows WHERE sender = 'visitor' ORDER BY conversation_id, position
        ON CONFLICT (conversation_id) DO NOTHING;
        -- ... and the first agent or bot message after it ends the wait.
        UPDATE conversations.analytics_first_responses f
           SET responded_at = r.created_at,
               response_ms = (extract(epoch FROM r.created_at - f.visitor_message_at) * 1000)::bigint
          FROM (SELECT DISTINCT ON (m.conversation_id) m.conversation_id, m.created_at
                  FROM new_rows m
                  JOIN conversations.analytics_first_responses w
                    ON w.conversation_id = m.conversation_id AND w.responded_at IS NULL
                   AND m.position > w.visitor_message_position
                 WHERE m.sender IN ('agent', 'bot')
                 ORDER BY m.conversation_id, m.position) r
         WHERE f.conversation_id = r.conversation_id;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE FUNCTION conversations.analytics_leads_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversations.analytics_slots AS s (account_id, slot, stripe, leads_captured)
        SELECT account_id, conversations.analytics_slot(created_at), pg_backend_pid() % 16, count(*)
          FROM new_rows GROUP BY 1, 2
        ON CONFLICT (account_id, slot, stripe)
          DO UPDATE SET leads_captured = s.leads_captured + EXCLUDED.leads_captured;
        RETURN NULL;
      END $$`);

    // Creating the triggers locks the tables against writes until this migration commits, so the
    // backfill below and the triggers together see every row exactly once.
    await db.query(`
      CREATE TRIGGER analytics_conversations_inserted AFTER INSERT ON conversations.conversations
      REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION conversations.analytics_conversations_inserted()`);
    // Row-level with a WHEN: the per-message UPDATE of a conversation never calls into plpgsql.
    await db.query(`
      CREATE TRIGGER analytics_conversation_closed AFTER UPDATE OF status ON conversations.conversations
      FOR EACH ROW WHEN (NEW.status = 'closed' AND OLD.status IS DISTINCT FROM 'closed')
      EXECUTE FUNCTION conversations.analytics_conversation_closed()`);
    await db.query(`
      CREATE TRIGGER analytics_closures_inserted AFTER INSERT ON conversations.analytics_closures
      REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION conversations.analytics_closures_inserted()`);
    await db.query(`
      CREATE TRIGGER analytics_messages_inserted AFTER INSERT ON conversations.messages
      REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION conversations.analytics_messages_inserted()`);
    await db.query(`
      CREATE TRIGGER analytics_leads_inserted AFTER INSERT ON conversations.leads
      REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION conversations.analytics_leads_inserted()`);

    await this.backfill(db);
  }

  /**
   * Rollups of the data that exists already. Close history before this migration is what the
   * outbox still holds (7 days of conversation.closed events) plus each closed conversation's
   * current close; earlier closes of a conversation reopened since are not recoverable.
   */
  private async backfill(db: QueryRunner): Promise<void> {
    await db.query(`
      INSERT INTO conversations.analytics_closures (account_id, conversation_id, closed_at, resolution_ms)
      SELECT closes.account_id, closes.conversation_id, closes.closed_at,
             (extract(epoch FROM closes.closed_at - c.created_at) * 1000)::bigint
        FROM (SELECT o.account_id, o.conversation_id,
                     (o.envelope #>> '{data,conversation,closed_at}')::timestamptz AS closed_at
                FROM conversations.outbox o
               WHERE o.type = 'conversation.closed' AND o.envelope #>> '{data,conversation,closed_at}' IS NOT NULL
              UNION
              SELECT account_id, id, closed_at FROM conversations.conversations
               WHERE status = 'closed' AND closed_at IS NOT NULL) closes
        JOIN conversations.conversations c ON c.id = closes.conversation_id`);
    // The closures trigger has counted the closes; the other counts are added to its rows.
    await db.query(`
      INSERT INTO conversations.analytics_slots AS s
             (account_id, slot, stripe, conversations_started, messages_visitor, messages_agent, messages_bot,
              messages_system, leads_captured)
      SELECT account_id, slot, pg_backend_pid() % 16, sum(started), sum(visitor), sum(agent), sum(bot),
             sum(system), sum(leads)
        FROM (SELECT account_id, conversations.analytics_slot(created_at) AS slot, 1 AS started, 0 AS visitor,
                     0 AS agent, 0 AS bot, 0 AS system, 0 AS leads
                FROM conversations.conversations
              UNION ALL
              SELECT account_id, conversations.analytics_slot(created_at), 0, (sender = 'visitor')::int,
                     (sender = 'agent')::int, (sender = 'bot')::int, (sender = 'system')::int, 0
                FROM conversations.messages
              UNION ALL
              SELECT account_id, conversations.analytics_slot(created_at), 0, 0, 0, 0, 0, 1
                FROM conversations.leads) events
       GROUP BY account_id, slot
      ON CONFLICT (account_id, slot, stripe) DO UPDATE SET
        conversations_started = s.conversations_started + EXCLUDED.conversations_started,
        messages_visitor = s.messages_visitor + EXCLUDED.messages_visitor,
        messages_agent = s.messages_agent + EXCLUDED.messages_agent,
        messages_bot = s.messages_bot + EXCLUDED.messages_bot,
        messages_system = s.messages_system + EXCLUDED.messages_system,
        leads_captured = s.leads_captured + EXCLUDED.leads_captured`);
    await db.query(`
      INSERT INTO conversations.analytics_first_responses
             (conversation_id, account_id, visitor_message_at, visitor_message_position, responded_at, response_ms)
      SELECT v.conversation_id, v.account_id, v.created_at, v.position, r.created_at,
             (extract(epoch FROM r.created_at - v.created_at) * 1000)::bigint
        FROM (SELECT DISTINCT ON (conversation_id) conversation_id, account_id, created_at, position
                FROM conversations.messages WHERE sender = 'visitor'
               ORDER BY conversation_id, position) v
        LEFT JOIN LATERAL (
          SELECT m.created_at FROM conversations.messages m
           WHERE m.conversation_id = v.conversation_id AND m.position > v.position AND m.sender IN ('agent', 'bot')
           ORDER BY m.position LIMIT 1) r ON true`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER analytics_leads_inserted ON conversations.leads`);
    await db.query(`DROP TRIGGER analytics_messages_inserted ON conversations.messages`);
    await db.query(`DROP TRIGGER analytics_conversation_closed ON conversations.conversations`);
    await db.query(`DROP TRIGGER analytics_conversations_inserted ON conversations.conversations`);
    for (const table of ['analytics_first_responses', 'analytics_closures', 'analytics_slots']) {
      await db.query(`DROP TABLE conversations.${table}`);
    }
    for (const fn of [
      'analytics_leads_inserted',
      'analytics_messages_inserted',
      'analytics_closures_inserted',
      'analytics_conversation_closed',
      'analytics_conversations_inserted',
    ]) {
      await db.query(`DROP FUNCTION conversations.${fn}()`);
    }
    await db.query(`DROP FUNCTION conversations.analytics_slot(timestamptz)`);
  }
}
