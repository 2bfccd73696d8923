import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `cms_<key id: 16 hex>_<secret: 43 base64url chars = 256 bits>`. The prefix
 * makes a leaked key recognisable to secret scanners; the key id finds the row; only a SHA-256
 * of the secret is stored, and it is compared in constant time.
 */
const KEY_PATTERN = /^cms_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

export function generateApiKey(): { keyId: string; apiKey: string; secretHash: Buffer } {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { keyId, apiKey: `cms_${keyId}_${secret}`, secretHash: hashSecret(secret) };
}

export function parseApiKey(apiKey: string): ParsedApiKey | undefined {
  const match = KEY_PATTERN.exec(apiKey);
  return match ? { keyId: match[1], secret: match[2] } : undefined;
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function secretMatches(secret: string, storedHash: Buffer): boolean {
  const presented = hashSecret(secret);
  return presented.length === storedHash.length && timingSafeEqual(presented, storedHash);
}
