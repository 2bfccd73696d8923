import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleting a conversation (docs/webhooks.md, "Deleted conversations"): `conversation.deleted`
 * removes the conversation's stored events and cancels their pending deliveries, found through
 * these indexes rather than by reading every event of the log. The command log's `erased` column
 * exists here as in the conversations schema (the same code reads both); nothing sets it here.
 */
export class ConversationErasure1766300000001 implements MigrationInterface {
  name = 'ConversationErasure1766300000001';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE webhooks.processed_commands ADD COLUMN IF NOT EXISTS erased boolean NOT NULL DEFAULT false`,
    );
    await db.query(
      `CREATE INDEX IF NOT EXISTS events_conversation ON webhooks.events (conversation_id)
         WHERE conversation_id IS NOT NULL`,
    );
    await db.query(
      `CREATE INDEX IF NOT EXISTS deliveries_conversation ON webhooks.deliveries (conversation_id)
         WHERE conversation_id IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX webhooks.deliveries_conversation`);
    await db.query(`DROP INDEX webhooks.events_conversation`);
    await db.query(`ALTER TABLE webhooks.processed_commands DROP COLUMN erased`);
  }
}
