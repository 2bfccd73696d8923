import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The command log records which payload a command id was applied with, beside its operation
 * (`pattern`), so the same id with another operation or payload (an Idempotency-Key reused after
 * a 5xx) is refused rather than answered with another request's reply (issue 10, item 9).
 * Commands recorded before have none and are checked by operation alone.
 */
export class CommandPayloads1764200000001 implements MigrationInterface {
  name = 'CommandPayloads1764200000001';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks.processed_commands ADD COLUMN payload_hash text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhooks.processed_commands DROP COLUMN payload_hash`);
  }
}
