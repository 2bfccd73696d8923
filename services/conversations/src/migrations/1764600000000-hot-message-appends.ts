import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sending a message updates its conversation's counters and `updated_at`. While `updated_at` was
 * indexed (for the `updated_after` filter) no such update could be HOT: every message wrote a new
 * entry into all seven indexes of conversations (and WAL for each, and dead entries for vacuum).
 *
 * The filter's index is now on `updated_window`, `updated_at` rounded down to its 10-minute
 * window, a stored generated column: an update within the same window leaves every indexed
 * value as it was, so Postgres updates the row in place (heap-only), with no index write. The
 * filter reads the windows from the one holding its instant on and keeps the exact comparison
 * on `updated_at`. A fill factor of 90 leaves room on each page for the new row versions.
 *
 * The column's addition rewrites the table under an exclusive lock (about a second per million
 * conversations on this machine's disk; a deploy step, like any migration here).
 */
export class HotMessageAppends1764600000000 implements MigrationInterface {
  name = 'HotMessageAppends1764600000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION conversations.update_window(at timestamptz) RETURNS timestamptz
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN date_bin('10 minutes', at, timestamptz '2000-01-01 00:00:00+00')`);
    await db.query(`ALTER TABLE conversations.conversations SET (fillfactor = 90)`);
    await db.query(`
      ALTER TABLE conversations.conversations
        ADD COLUMN updated_window timestamptz GENERATED ALWAYS AS (conversations.update_window(updated_at)) STORED`);
    await db.query(
      `CREATE INDEX conversations_account_updated_window ON conversations.conversations (account_id, updated_window)`,
    );
    await db.query(`DROP INDEX conversations.conversations_account_updated`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE INDEX conversations_account_updated ON conversations.conversations (account_id, updated_at)`,
    );
    await db.query(`ALTER TABLE conversations.conversations DROP COLUMN updated_window`);
    await db.query(`ALTER TABLE conversations.conversations RESET (fillfactor)`);
    await db.query(`DROP FUNCTION conversations.update_window(timestamptz)`);
  }
}
