import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 14, item 6: a stored event keeps its conversation and its per-conversation `sequence`
 * (the CloudEvent's `subject` and `sequence`), so webhook bodies carry the sequence and the
 * dispatcher sends a conversation's deliveries to an endpoint one at a time, in that order.
 * Events stored before have neither (null): they are sent as before.
 */
export class EventOrder1764400000000 implements MigrationInterface {
  name = 'EventOrder1764400000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE webhooks.events ADD COLUMN conversation_id uuid, ADD COLUMN sequence integer`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks.events DROP COLUMN sequence, DROP COLUMN conversation_id`);
  }
}
