import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each API key holds the scopes it may use (docs/api-conventions.md, "Keys and scopes"). Keys
 * that exist get every scope, so they keep working; so does a key a release before scopes
 * inserts (the column's default), while this release's CLI always names them.
 */
export class KeyScopes1765300000001 implements MigrationInterface {
  name = 'KeyScopes1765300000001';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE gateway.api_keys ADD COLUMN scopes text[] NOT NULL DEFAULT ARRAY[
        'conversations:read', 'conversations:write', 'analytics:read',
        'events:read', 'webhooks:read', 'webhooks:write']`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE gateway.api_keys DROP COLUMN scopes`);
  }
}
