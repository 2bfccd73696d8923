import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks asks for 24 to 64). */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * Standard Webhooks: `v1,` + base64 HMAC-SHA256, keyed with the secret's base64-decoded bytes, of
 * `{webhook-id}.{webhook-timestamp}.{body}`. Several secrets (during a rotation) give several
 * signatures separated by spaces; a receiver accepts the message if any of them verifies.
 */
export function signatureHeader(
  secrets: string[],
  webhookId: string,
  timestamp: number,
  body: string,
): string {
  const content = `${webhookId}.${timestamp}.${body}`;
  return secrets
    .map((secret) => {
      const key = Buffer.from(
        secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
        'base64',
      );
      return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
    })
    .join(' ');
}
