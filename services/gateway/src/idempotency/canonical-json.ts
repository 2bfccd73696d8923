import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level: two bodies that parse equal hash equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function hashBody(body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(body ?? {}))
    .digest('hex');
}

/** The command id of a keyed request: the same key of the same account always maps to it. */
export function commandIdFor(accountId: string, key: string): string {
  return createHash('sha256').update(`${accountId}\u0000${key}`).digest('hex').slice(0, 32);
}
