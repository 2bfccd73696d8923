/**
 * Postgres cannot store U+0000 in text or jsonb, and rejects unpaired UTF-16 surrogates in jsonb.
 * Both ends of every boundary refuse such strings with a 400 instead of failing deep inside.
 */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly the character Postgres cannot store.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** True when every string (keys included) anywhere inside a JSON value is storable. */
export function isStorableJson(value: unknown): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value && typeof value === 'object') {
    return Object.entries(value).every(([key, nested]) => isStorableText(key) && isStorableJson(nested));
  }
  return true;
}
