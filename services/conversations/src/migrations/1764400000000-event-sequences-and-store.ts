import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 14, items 4-6: the outbox becomes the store of the events API and of stream resumes.
 *
 * - `conversations.event_sequence` counts a conversation's events; each event takes the next
 *   number in the transaction that writes it (the statement that changes the conversation row
 *   bumps it, so it costs no extra round trip) and keeps it in `outbox.sequence` and the
 *   CloudEvent. Events written before this migration are numbered per conversation in id order
 *   (the order they were written in), and the counter continues from there: a conversation whose
 *   early events were already purged by the retention starts at its oldest retained event.
 * - `outbox.published_seq` records the order the relay (one at a time, under its advisory lock)
 *   published the events in, so "the events after event X" is well defined for a stream resume.
 *   Rows already published are numbered in publication time order.
 * - Indexes for the events API (account, newest first; by type; by conversation), the lookup by
 *   event id, resumes by publication order, and the retention's time-ordered deletes (BRIN).
 */
export class EventSequencesAndStore1764400000000 implements MigrationInterface {
  name = 'EventSequencesAndStore1764400000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE conversations.conversations ADD COLUMN event_sequence integer NOT NULL DEFAULT 0`,
    );
    await db.query(
      `ALTER TABLE conversations.outbox ADD COLUMN sequence integer, ADD COLUMN published_seq bigint`,
    );
    await db.query(`CREATE SEQUENCE conversations.outbox_published_seq AS bigint`);
    await db.query(`
      UPDATE conversations.outbox o SET sequence = n.sequence
        FROM (SELECT id, row_number() OVER (PARTITION BY conversation_id ORDER BY id) AS sequence
                FROM conversations.outbox) n
       WHERE n.id = o.id`);
    await db.query(`
      UPDATE conversations.conversations c SET event_sequence = n.last
        FROM (SELECT conversation_id, max(sequence) AS last FROM conversations.outbox GROUP BY conversation_id) n
       WHERE n.conversation_id = c.id`);
    await db.query(`
      UPDATE conversations.outbox o SET published_seq = n.position
        FROM (SELECT id, row_number() OVER (ORDER BY published_at, id) AS position
                FROM conversations.outbox WHERE published_at IS NOT NULL) n
       WHERE n.id = o.id`);
    await db.query(`
      SELECT setval('conversations.outbox_published_seq', GREATEST(max(published_seq), 1), max(published_seq) IS NOT NULL)
        FROM conversations.outbox`);
    await db.query(`ALTER TABLE conversations.outbox ALTER COLUMN sequence SET NOT NULL`);

    await db.query(
      `CREATE INDEX outbox_account_created ON conversations.outbox (account_id, created_at DESC, id DESC)`,
    );
    await db.query(
      `CREATE INDEX outbox_account_type_created ON conversations.outbox (account_id, type, created_at DESC, id DESC)`,
    );
    await db.query(
      `CREATE INDEX outbox_account_conversation_created
         ON conversations.outbox (account_id, conversation_id, created_at DESC, id DESC)`,
    );
    await db.query(`CREATE INDEX outbox_event_id ON conversations.outbox (event_id)`);
    await db.query(
      `CREATE INDEX outbox_account_published_seq ON conversations.outbox (account_id, published_seq)
        WHERE published_seq IS NOT NULL`,
    );
    await db.query(`CREATE INDEX outbox_created_brin ON conversations.outbox USING brin (created_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const index of [
      'outbox_created_brin',
      'outbox_account_published_seq',
      'outbox_event_id',
      'outbox_account_conversation_created',
      'outbox_account_type_created',
      'outbox_account_created',
    ]) {
      await db.query(`DROP INDEX conversations.${index}`);
    }
    await db.query(`DROP SEQUENCE conversations.outbox_published_seq`);
    await db.query(`ALTER TABLE conversations.outbox DROP COLUMN published_seq, DROP COLUMN sequence`);
    await db.query(`ALTER TABLE conversations.conversations DROP COLUMN event_sequence`);
  }
}
