import { MigrationInterface, QueryRunner } from 'typeorm';

export class AccountsAndKeys1763856000001 implements MigrationInterface {
  name = 'AccountsAndKeys1763856000001';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE gateway.accounts (
        id         uuid PRIMARY KEY,
        name       text NOT NULL,
        plan       text NOT NULL CHECK (plan IN ('trial', 'pro', 'business')),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    // Keys are stored as SHA-256 of their secret part: the secret has 256 bits of entropy, so a
    // slow password hash adds nothing but latency. The key id is the public lookup handle.
    await db.query(`
      CREATE TABLE gateway.api_keys (
        id          text PRIMARY KEY,
        account_id  uuid NOT NULL REFERENCES gateway.accounts (id) ON DELETE CASCADE,
        secret_hash bytea NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        revoked_at  timestamptz(3)
      )`);
    await db.query(`CREATE INDEX api_keys_account ON gateway.api_keys (account_id)`);

    await db.query(`
      CREATE TABLE gateway.idempotency_keys (
        account_id    uuid NOT NULL,
        key           text NOT NULL,
        method        text NOT NULL,
        path          text NOT NULL,
        body_hash     text NOT NULL,
        status_code   integer,
        response_body text,
        created_at    timestamptz(3) NOT NULL DEFAULT now(),
        completed_at  timestamptz(3),
        PRIMARY KEY (account_id, key)
      )`);
    await db.query(`CREATE INDEX idempotency_keys_created ON gateway.idempotency_keys (created_at)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE gateway.idempotency_keys`);
    await db.query(`DROP TABLE gateway.api_keys`);
    await db.query(`DROP TABLE gateway.accounts`);
  }
}
