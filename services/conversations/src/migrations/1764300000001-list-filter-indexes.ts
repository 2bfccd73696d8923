import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes for the conversation list's filters (issue 14, item 2). Created and updated ranges with
 * either order use the existing (account_id, created_at, id) and (account_id, status, created_at,
 * id) indexes; `updated_after` (a sync: what changed since) and `visitor_email` pick few rows of
 * an account through these, then sort them. Built inside the migration's transaction, so writes
 * to `conversations` wait for them: seconds per million rows (BENCHMARKS.md, "List filters").
 */
export class ListFilterIndexes1764300000001 implements MigrationInterface {
  name = 'ListFilterIndexes1764300000001';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `CREATE INDEX conversations_account_updated ON conversations.conversations (account_id, updated_at)`,
    );
    await db.query(
      `CREATE INDEX conversations_account_visitor_email ON conversations.conversations (account_id, lower(visitor_email))
        WHERE visitor_email IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX conversations.conversations_account_visitor_email`);
    await db.query(`DROP INDEX conversations.conversations_account_updated`);
  }
}
