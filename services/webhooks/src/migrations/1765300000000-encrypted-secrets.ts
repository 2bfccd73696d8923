import { MigrationInterface, QueryRunner } from 'typeorm';

/** What this migration needs of the live cipher (services/webhooks/src/secrets/secret-cipher.ts). */
export interface SecretEncrypter {
  encrypt(secret: string, subscriptionId: string): string;
}

const BATCH = 500;

/**
 * Signing secrets move from clear text to ciphertexts (docs/operations.md, "Secrets at rest"):
 * `secret_encrypted` and `previous_secret_encrypted` are filled and the clear columns emptied,
 * rows and the stored replies of create and rotate-secret commands alike. The clear columns stay
 * (nullable, empty) until a later release drops them: docs/scaling.md, "Upgrading", says why the
 * webhooks replicas of the release before are stopped first.
 */
export function encryptedSecretsMigration(cipher: SecretEncrypter) {
  return class EncryptedSecrets1765300000000 implements MigrationInterface {
    name = 'EncryptedSecrets1765300000000';

    async up(db: QueryRunner): Promise<void> {
      await db.query(`
        ALTER TABLE webhooks.subscriptions
          ADD COLUMN secret_encrypted text,
          ADD COLUMN previous_secret_encrypted text,
          ALTER COLUMN secret DROP NOT NULL`);
      for (;;) {
        const rows = (await db.query(
          `SELECT id, secret, previous_secret FROM webhooks.subscriptions
            WHERE secret IS NOT NULL OR previous_secret IS NOT NULL LIMIT ${BATCH}`,
        )) as Array<{ id: string; secret: string | null; previous_secret: string | null }>;
        if (rows.length === 0) break;
        for (const row of rows) {
          await db.query(
            `UPDATE webhooks.subscriptions
                SET secret_encrypted = COALESCE($2, secret_encrypted), previous_secret_encrypted = $3,
                    secret = NULL, previous_secret = NULL
              WHERE id = $1`,
            [
              row.id,
              row.secret === null ? null : cipher.encrypt(row.secret, row.id),
              row.previous_secret === null ? null : cipher.encrypt(row.previous_secret, row.id),
            ],
          );
        }
      }
      const replies = (await db.query(
        `SELECT command_id, response->>'id' AS id, response->>'secret' AS secret
           FROM webhooks.processed_commands
          WHERE pattern IN ('webhooks.create', 'webhooks.rotate-secret') AND response ? 'secret'`,
      )) as Array<{ command_id: string; id: string; secret: string }>;
      for (const reply of replies) {
        await db.query(
          `UPDATE webhooks.processed_commands SET response = jsonb_set(response, '{secret}', to_jsonb($2::text))
            WHERE command_id = $1`,
          [reply.command_id, cipher.encrypt(reply.secret, reply.id)],
        );
      }
    }

    down(): Promise<void> {
      return Promise.reject(new Error('Secrets once encrypted are not written back in clear.'));
    }
  };
}
