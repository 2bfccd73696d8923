import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conversation tags (docs/conversations.md, "Search and tags"): a text array, and a GIN index of
 * the account with its tags for the `tag` filter and its total, so another account's tags are
 * never read. GIN indexes a uuid only through `btree_gin`, a contrib extension Postgres marks
 * trusted: a role with CREATE on the database may create it (docs/operations.md, "Database privileges").
 *
 * Expand only: a column with a constant default costs no rewrite, and the release before this one
 * never names it. The index is built CONCURRENTLY, so writes go on while it is built, which needs
 * the migration outside a transaction; every step can run again if the deploy was cut halfway (an
 * interrupted concurrent build leaves an invalid index, dropped and built again).
 */
export class ConversationTags1765400000000 implements MigrationInterface {
  name = 'ConversationTags1765400000000';
  transaction = false as const;

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    await db.query(
      `ALTER TABLE conversations.conversations ADD COLUMN IF NOT EXISTS tags text[] NOT NULL DEFAULT '{}'`,
    );
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.conversations_account_tags`);
    await db.query(
      `CREATE INDEX CONCURRENTLY conversations_account_tags ON conversations.conversations USING gin (account_id, tags)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX CONCURRENTLY IF EXISTS conversations.conversations_account_tags`);
    await db.query(`ALTER TABLE conversations.conversations DROP COLUMN IF EXISTS tags`);
  }
}
