import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An in-flight Idempotency-Key claim lasts about the RPC timeout, not the key's 24 hours (issue
 * 10, item 8): `locked_until` is when another request with the same key, path and body may take
 * it over (the gateway that held it died, or could not release it), and `claim_token` names the
 * holder, so a late completion or release by a former holder changes nothing. Claims left by the
 * previous version may be taken over a minute after they were made.
 */
export class IdempotencyClaimLeases1764200000000 implements MigrationInterface {
  name = 'IdempotencyClaimLeases1764200000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE gateway.idempotency_keys
        ADD COLUMN claim_token  uuid,
        ADD COLUMN locked_until timestamptz(3)`);
    await db.query(`
      UPDATE gateway.idempotency_keys SET locked_until = created_at + interval '1 minute'
       WHERE completed_at IS NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE gateway.idempotency_keys DROP COLUMN claim_token, DROP COLUMN locked_until`);
  }
}
