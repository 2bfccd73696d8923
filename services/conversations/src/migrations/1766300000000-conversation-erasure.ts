import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleting a conversation (docs/conversations.md, "Deleting a conversation"): the command log
 * keeps the record of each command applied, but a reply that showed the deleted conversation is
 * erased (`erased`, its `response` cleared), so a retry of that command is told the conversation
 * is gone instead of being shown it again. Closes are found by conversation to take them out of
 * the analytics rollups. Expand only: a constant default, an index on a table of one row per close.
 */
export class ConversationErasure1766300000000 implements MigrationInterface {
  name = 'ConversationErasure1766300000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE conversations.processed_commands ADD COLUMN IF NOT EXISTS erased boolean NOT NULL DEFAULT false`,
    );
    await db.query(
      `CREATE INDEX IF NOT EXISTS analytics_closures_conversation ON conversations.analytics_closures (conversation_id)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX conversations.analytics_closures_conversation`);
    await db.query(`ALTER TABLE conversations.processed_commands DROP COLUMN erased`);
  }
}
