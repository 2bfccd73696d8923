import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A stored event keeps the trace context of its fan-out (`traceparent`, docs/operations.md
 * "Tracing"), so each delivery attempt, however much later, is a span of the same trace and sends
 * a `traceparent` header with its trace id. Null when tracing is off or the event came untraced; a
 * replica of the release before writes none.
 */
export class EventTraceContext1765500000000 implements MigrationInterface {
  name = 'EventTraceContext1765500000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks.events ADD COLUMN traceparent text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks.events DROP COLUMN traceparent`);
  }
}
