import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { EncryptionKey } from '@app/config';

/**
 * Stands in outside production when SECRETS_ENCRYPTION_KEYS is empty: derived from a public
 * phrase, so it protects nothing, and the service says so at start-up.
 */
export const DEVELOPMENT_KEY: EncryptionKey = {
  id: 'development',
  key: createHash('sha256').update('cms development key: not a secret').digest(),
};

/**
 * Signing secrets at rest (docs/operations.md, "Secrets at rest"): AES-256-GCM with a random
 * 96-bit IV, the subscription id as associated data (a ciphertext copied onto another row does not
 * decrypt), stored as `<key id>:<iv>:<tag>:<ciphertext>` (base64), so each ciphertext names the key
 * that opens it. The first key of SECRETS_ENCRYPTION_KEYS encrypts; every one of them decrypts.
 */
export class SecretCipher {
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: EncryptionKey[]) {
    if (keys.length === 0) throw new Error('SecretCipher needs at least one key');
    // The public development key always decrypts (what it encrypted was never protected), so
    // `cms secrets:reencrypt` can move a database started without keys onto real ones.
    this.byId = new Map([DEVELOPMENT_KEY, ...keys].map(({ id, key }) => [id, key]));
  }

  /** The id of the key that encrypts. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  encrypt(secret: string, subscriptionId: string): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(subscriptionId));
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [id, iv, cipher.getAuthTag(), ciphertext].map(encodePart).join(':');
  }

  decrypt(stored: string, subscriptionId: string): string {
    const [id, iv, tag, ciphertext] = stored.split(':');
    const key = this.byId.get(id);
    if (!key || ciphertext === undefined)
      throw new Error(`a secret is encrypted with key "${id}", which SECRETS_ENCRYPTION_KEYS does not hold`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
      .setAAD(Buffer.from(subscriptionId))
      .setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString(
      'utf8',
    );
  }
}

const encodePart = (part: string | Buffer) => (typeof part === 'string' ? part : part.toString('base64'));

/** The configured keys, or the development key when none are (production refuses that earlier). */
export function secretsKeyring(configured: EncryptionKey[]): { keys: EncryptionKey[]; development: boolean } {
  return configured.length > 0
    ? { keys: configured, development: false }
    : { keys: [DEVELOPMENT_KEY], development: true };
}
