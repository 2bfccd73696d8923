import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The relay is woken by the replica that committed the event, in process, instead of by NOTIFY
 * from an insert trigger: NOTIFY takes a database-wide lock at every commit that writes an event
 * and wakes a listener backend each time, which under load cost more than the relay itself
 * (BENCHMARKS.md, "Send path"). Replicas that did not commit an event are still covered by the
 * relay's poll, and a replica that cannot take the relay lock retries until it does.
 */
export class OutboxWakeInProcess1764300000000 implements MigrationInterface {
  name = 'OutboxWakeInProcess1764300000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER outbox_notify ON conversations.outbox`);
    await db.query(`DROP FUNCTION conversations.notify_outbox()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION conversations.notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('conversations_outbox', ''); RETURN NULL; END $$`);
    await db.query(`
      CREATE TRIGGER outbox_notify AFTER INSERT ON conversations.outbox
      FOR EACH STATEMENT EXECUTE FUNCTION conversations.notify_outbox()`);
  }
}
