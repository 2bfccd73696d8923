import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delivery keeps its event's conversation and `sequence`, so a claim (by the fan-out or by a
 * dispatcher) can see whether an earlier delivery of the same conversation to the same
 * subscription still waits for its first attempt, and leave the later one until it has had it.
 * The index holds only the deliveries that can hold others back. Pending deliveries get theirs
 * from the stored events; a replica of the release before writes none (its deliveries are sent
 * as before, in the order each replica holds them).
 */
export class DeliveryOrder1765000000000 implements MigrationInterface {
  name = 'DeliveryOrder1765000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE webhooks.deliveries ADD COLUMN conversation_id uuid, ADD COLUMN sequence integer`,
    );
    await db.query(`
      UPDATE webhooks.deliveries d SET conversation_id = e.conversation_id, sequence = e.sequence
        FROM webhooks.events e
       WHERE e.id = d.event_id AND d.status = 'pending' AND e.sequence IS NOT NULL`);
    await db.query(`
      CREATE INDEX deliveries_awaiting_first_attempt
          ON webhooks.deliveries (subscription_id, conversation_id, sequence)
       WHERE status = 'pending' AND attempt_count = 0 AND sequence IS NOT NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX webhooks.deliveries_awaiting_first_attempt`);
    await db.query(`ALTER TABLE webhooks.deliveries DROP COLUMN sequence, DROP COLUMN conversation_id`);
  }
}
