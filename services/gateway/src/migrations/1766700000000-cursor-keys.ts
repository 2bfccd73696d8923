import { randomBytes } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The keys that seal the messages pages' `after` cursors in the gateway (docs/api-conventions.md,
 * "Cursors"). Generated here, once, under the migrations' advisory lock, so every gateway replica
 * reads the same key and no setting has to be shared between them. To rotate, insert a key with
 * the next id: new cursors use it, outstanding ones (of earlier keys still present) keep working.
 */
export class CursorKeys1766700000000 implements MigrationInterface {
  name = 'CursorKeys1766700000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE gateway.cursor_keys (
        id         smallint PRIMARY KEY CHECK (id BETWEEN 1 AND 255),
        key        bytea NOT NULL CHECK (length(key) = 32),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await db.query(`INSERT INTO gateway.cursor_keys (id, key) VALUES (1, $1)`, [randomBytes(32)]);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE gateway.cursor_keys`);
  }
}
