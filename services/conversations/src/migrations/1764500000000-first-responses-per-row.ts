import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The first-response bookkeeping moves from the statement-level messages trigger to a row-level
 * one. Its statement-level UPDATE joined the statement's new rows with
 * analytics_first_responses; once that table had statistics, Postgres chose a nested loop that
 * rescans the new rows for every waiting conversation, so a bulk insert of messages grew with the
 * square of its size (40,000 messages: 17 s, against 0.2 s for the rest of the insert; 10,000,000
 * never finished). Per row, each message is one primary-key insert or update: linear, and cheaper
 * for the API's one-message statements too (BENCHMARKS.md, "Send path, statement by statement").
 * The slot counts stay per statement (one grouped upsert per statement): per row, a bulk insert
 * would update the same slot row thousands of times in one transaction, which is quadratic too.
 *
 * A conversation's messages are taken in the order they are inserted, which for the API is their
 * position order: its first visitor message opens the wait, the first agent or bot message after
 * it closes it.
 */
/** The statement's messages counted into their slots (as in 1764000000000-analytics-rollups). */
const SLOT_COUNTS = `INSERT INTO conversations.analytics_slots AS s
               (account_id, slot, stripe, messages_visitor, messages_agent, messages_bot, messages_system)
        SELECT account_id, conversations.analytics_slot(created_at), pg_backend_pid() % 16,
               count(*) FILTER (WHERE sender = 'visitor'), count(*) FILTER (WHERE sender = 'agent'),
               count(*) FILTER (WHERE sender = 'bot'), count(*) FILTER (WHERE sender = 'system')
          FROM new_rows GROUP BY 1, 2
        ON CONFLICT (account_id, slot, stripe) DO UPDATE SET
          messages_visitor = s.messages_visitor + EXCLUDED.messages_visitor,
          messages_agent = s.messages_agent + EXCLUDED.messages_agent,
          messages_bot = s.messages_bot + EXCLUDED.messages_bot,
          messages_system = s.messages_system + EXCLUDED.messages_system;`;

export class FirstResponsesPerRow1764500000000 implements MigrationInterface {
  name = 'FirstResponsesPerRow1764500000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION conversations.analytics_first_response() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.sender = 'visitor' THEN
          INSERT INTO conversations.analytics_first_responses
                 (conversation_id, account_id, visitor_message_at, visitor_message_position)
          VALUES (NEW.conversation_id, NEW.account_id, NEW.created_at, NEW.position)
          ON CONFLICT (conversation_id) DO NOTHING;
        ELSE
          UPDATE conversations.analytics_first_responses f
             SET responded_at = NEW.created_at,
                 response_ms = (extract(epoch FROM NEW.created_at - f.visitor_message_at) * 1000)::bigint
           WHERE f.conversation_id = NEW.conversation_id AND f.responded_at IS NULL
             AND NEW.position > f.visitor_message_position;
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.analytics_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${SLOT_COUNTS}
        RETURN NULL;
      END $$`);
    // In this migration's transaction: no insert runs between the old function and the new pair.
    await db.query(`
      CREATE TRIGGER analytics_first_response AFTER INSERT ON conversations.messages
      FOR EACH ROW WHEN (NEW.sender <> 'system')
      EXECUTE FUNCTION conversations.analytics_first_response()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER analytics_first_response ON conversations.messages`);
    await db.query(`DROP FUNCTION conversations.analytics_first_response()`);
    await db.query(`
      CREATE OR REPLACE FUNCTION conversations.analytics_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${SLOT_COUNTS}
        INSERT INTO conversations.analytics_first_responses
               (conversation_id, account_id, visitor_message_at, visitor_message_position)
        SELECT DISTINCT ON (conversation_id) conversation_id, account_id, created_at, position
          FROM new_rows WHERE sender = 'visitor' ORDER BY conversation_id, position
        ON CONFLICT (conversation_id) DO NOTHING;
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
  }
}
