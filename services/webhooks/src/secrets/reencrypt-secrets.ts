import type { DataSource, EntityManager } from 'typeorm';
import { WebhookRpc } from '@app/contracts';
import type { SecretCipher } from './secret-cipher';

/** Rows locked, re-encrypted and committed together: a stop loses at most one batch's work. */
const BATCH = 100;

interface SubscriptionSecrets {
  id: string;
  secret: string | null;
  previous_secret: string | null;
  secret_encrypted: string | null;
  previous_secret_encrypted: string | null;
}

export interface ReencryptionProgress {
  subscriptions: number;
  replies: number;
}

/**
 * Moves every signing secret onto the first key of SECRETS_ENCRYPTION_KEYS (`cms
 * secrets:reencrypt`; docs/operations.md, "Rotating the encryption key"): subscriptions and the
 * stored replies of create and rotate-secret commands, and encrypts any left in clear by a
 * release before encryption. Batches of rows are locked (a rotation waits for its row, never
 * loses its new secret) and committed one by one, so it runs beside serving replicas and a second
 * run carries on where a stopped one ended. Replicas keep decrypting old ciphertexts meanwhile as
 * long as their SECRETS_ENCRYPTION_KEYS still holds the old key.
 */
export async function reencryptSecrets(
  db: DataSource,
  cipher: SecretCipher,
  onBatch: (progress: ReencryptionProgress) => void = () => undefined,
): Promise<ReencryptionProgress> {
  const progress = { subscriptions: 0, replies: 0 };
  const key = cipher.currentKeyId;
  for (;;) {
    const moved = await db.transaction((tx) => reencryptSubscriptions(tx, cipher, key));
    if (moved === 0) break;
    progress.subscriptions += moved;
    onBatch(progress);
  }
  for (;;) {
    const moved = await db.transaction((tx) => reencryptReplies(tx, cipher, key));
    if (moved === 0) break;
    progress.replies += moved;
    onBatch(progress);
  }
  return progress;
}

/** Not under `key`: the key id is what a ciphertext starts with, up to its first colon. */
const NOT_UNDER_KEY = (column: string) => `split_part(${column}, ':', 1) <> $1`;

async function reencryptSubscriptions(tx: EntityManager, cipher: SecretCipher, key: string): Promise<number> {
  const rows = await tx.query<SubscriptionSecrets[]>(
    `SELECT id, secret, previous_secret, secret_encrypted, previous_secret_encrypted
       FROM webhooks.subscriptions
      WHERE secret IS NOT NULL OR previous_secret IS NOT NULL
         OR ${NOT_UNDER_KEY('secret_encrypted')} OR ${NOT_UNDER_KEY('previous_secret_encrypted')}
      ORDER BY id LIMIT ${BATCH} FOR UPDATE`,
    [key],
  );
  for (const row of rows) {
    const again = (clear: string | null, encrypted: string | null) => {
      const secret = clear ?? (encrypted === null ? null : decrypt(cipher, encrypted, row.id));
      return secret === null ? null : cipher.encrypt(secret, row.id);
    };
    await tx.query(
      `UPDATE webhooks.subscriptions
          SET secret_encrypted = $2, previous_secret_encrypted = $3, secret = NULL, previous_secret = NULL
        WHERE id = $1`,
      [
        row.id,
        again(row.secret, row.secret_encrypted),
        again(row.previous_secret, row.previous_secret_encrypted),
      ],
    );
  }
  return rows.length;
}

async function reencryptReplies(tx: EntityManager, cipher: SecretCipher, key: string): Promise<number> {
  const replies = await tx.query<Array<{ command_id: string; id: string; secret: string }>>(
    `SELECT command_id, response->>'id' AS id, response->>'secret' AS secret
       FROM webhooks.processed_commands
      WHERE pattern = ANY($2) AND ${NOT_UNDER_KEY("response->>'secret'")}
      ORDER BY command_id LIMIT ${BATCH} FOR UPDATE`,
    [key, [WebhookRpc.create.pattern, WebhookRpc.rotateSecret.pattern]],
  );
  for (const reply of replies) {
    // A secret in clear (`whsec_` + base64) has no colon; a ciphertext always has.
    const secret = reply.secret.includes(':') ? decrypt(cipher, reply.secret, reply.id) : reply.secret;
    await tx.query(
      `UPDATE webhooks.processed_commands SET response = jsonb_set(response, '{secret}', to_jsonb($2::text))
        WHERE command_id = $1`,
      [reply.command_id, cipher.encrypt(secret, reply.id)],
    );
  }
  return replies.length;
}

/** Decrypts, or fails naming the subscription (a key missing from the list, a damaged ciphertext). */
function decrypt(cipher: SecretCipher, stored: string, subscriptionId: string): string {
  try {
    return cipher.decrypt(stored, subscriptionId);
  } catch (error) {
    throw new Error(
      `subscription ${subscriptionId}: its secret does not decrypt (${(error as Error).message}); its batch was rolled back, those before it stay moved`,
    );
  }
}
