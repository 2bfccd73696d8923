import { randomBytes } from 'node:crypto';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The keys that seal list snapshot tokens (libs/contracts list-snapshot.ts; issue 10, item 15).
 * Generated here, once, under the migrations' advisory lock, so every replica reads the same key
 * and no setting has to be shared between them. To rotate, insert a key with the next id: new
 * tokens use it, outstanding ones (of earlier keys still present) keep working.
 */
export class ListSnapshotKeys1764200000002 implements MigrationInterface {
  name = 'ListSnapshotKeys1764200000002';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE conversations.list_snapshot_keys (
        id         smallint PRIMARY KEY CHECK (id BETWEEN 1 AND 255),
        key        bytea NOT NULL CHECK (length(key) = 32),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await db.query(`INSERT INTO conversations.list_snapshot_keys (id, key) VALUES (1, $1)`, [
      randomBytes(32),
    ]);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE conversations.list_snapshot_keys`);
  }
}
