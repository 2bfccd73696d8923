import { createHash } from 'node:crypto';
import { canonicalJsonHash } from '@app/contracts';

/** A request body's fingerprint: bodies that parse equal (key order, whitespace) hash equal; none is `{}`. */
export function hashBody(body: unknown): string {
  return canonicalJsonHash(body ?? {});
}

/** The command id of a keyed request: the same key of the same account always maps to it. */
export function commandIdFor(accountId: string, key: string): string {
  return createHash('sha256').update(`${accountId}\u0000${key}`).digest('hex').slice(0, 32);
}
