import fastJson from 'fast-json-stringify';
import type { Static, TSchema } from '@sinclair/typebox';

/**
 * A serializer compiled once from a contract schema (fast-json-stringify): it writes the schema's
 * fields in the schema's order and nothing else. The gateway serializes response bodies with it,
 * and services their RPC replies, so a reply's bytes are already the response body (see
 * rpc-envelope.ts).
 *
 * A nullable field is written `anyOf: [S, {type: null}]` (what strict OpenAPI 3.1 validators
 * need), which fast-json-stringify would serialize by validating every value against each branch
 * with Ajv, formats included: for a page of conversations, dozens of date-time checks per
 * response. Given to the serializer as S with `nullable: true` instead, it costs one `=== null`
 * test.
 */
export function compileSerializer<T extends TSchema>(schema: T): (value: Static<T>) => string {
  return fastJson(serializationSchema(schema) as object);
}

/** The schema with every `anyOf: [S, null]` (either order) rewritten as S plus `nullable: true`. */
export function serializationSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(serializationSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const { anyOf, ...rest } = schema as { anyOf?: unknown[] } & Record<string, unknown>;
  if (Array.isArray(anyOf) && anyOf.length === 2) {
    const nonNull = anyOf.filter((branch) => !isNullSchema(branch));
    if (nonNull.length === 1) {
      return { ...rest, ...(serializationSchema(nonNull[0]) as object), nullable: true };
    }
  }
  return Object.fromEntries(
    Object.entries(schema as Record<string, unknown>).map(([key, value]) => [
      key,
      serializationSchema(value),
    ]),
  );
}

const isNullSchema = (schema: unknown) => (schema as { type?: unknown } | null)?.type === 'null';
