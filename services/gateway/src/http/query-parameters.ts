import type { TObject } from '@sinclair/typebox';
import type { preValidationHookHandler } from 'fastify';
import { parseStatus } from '@app/dialects';
import { DomainError, FieldError } from '@app/errors';
import type { Endpoint } from './endpoint';

type RawQuery = Record<string, string | string[] | undefined>;

/** A whole number as docs/dialects.md writes it: digits only, no sign, spaces or leading zeros. */
const WHOLE_NUMBER = /^(0|[1-9]\d*)$/;
/** Echoed values are the client's own: only their start. */
const shown = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * Reads a query string for its endpoint's schema: each parameter under its canonical name, however
 * it was spelled (`had` is `limit`, `stan` is `status`); whole numbers (written exactly, docs/dialects.md) as
 * numbers, since the schema types them. Two spellings with different values (`limit=5&had=10`) or one parameter repeated
 * with different values is a 400; the same value twice, in any spelling, is not. A parameter the
 * schema types as an array is repeatable: every value given, in any spelling, is one of its items.
 * Unknown names are kept, for the schema to refuse by name.
 */
export function resolveQueryParameters(
  raw: RawQuery,
  schema: TObject,
  aliases: Endpoint['queryAliases'] = {},
): Record<string, string | number | string[]> {
  const canonicalOf = new Map(
    Object.entries(aliases).flatMap(([canonical, names]) => names.map((name) => [name, canonical])),
  );
  const typeOf = (name: string) => (schema.properties[name] as { type?: string } | undefined)?.type;
  const sameness = (name: string, value: string) =>
    name === 'status' ? (parseStatus(value) ?? value) : value;

  const errors: FieldError[] = [];
  const given = new Map<string, Array<{ name: string; value: string }>>();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const canonical = canonicalOf.get(name) ?? name;
    const values = Array.isArray(value) ? value : [value];
    if (typeOf(canonical) === 'array') {
      given.set(canonical, [
        ...(given.get(canonical) ?? []),
        ...values.map((item) => ({ name, value: item })),
      ]);
      continue;
    }
    if (new Set(values).size > 1) {
      errors.push({ field: canonical, message: 'must be given once' });
      continue;
    }
    given.set(canonical, [...(given.get(canonical) ?? []), { name, value: values[0] }]);
  }

  const resolved: Record<string, string | number | string[]> = {};
  for (const [name, spellings] of given) {
    if (typeOf(name) === 'array') {
      resolved[name] = spellings.map(({ value }) => value);
      continue;
    }
    if (new Set(spellings.map(({ value }) => sameness(name, value))).size > 1) {
      const pairs = spellings.map(({ name: spelled, value }) => `${spelled}=${shown(value)}`);
      errors.push({ field: name, message: `conflicting values for ${pairs.join(' and ')}` });
      continue;
    }
    const { value } = spellings[0];
    resolved[name] = typeOf(name) === 'integer' && WHOLE_NUMBER.test(value) ? Number(value) : value;
  }
  if (errors.length > 0) throw DomainError.validation(errors);
  return resolved;
}

/** The preValidation hook of a route with query parameters: resolves them before the schema checks them. */
export function queryParametersHook(endpoint: Endpoint & { query: TObject }): preValidationHookHandler {
  return (request, _reply, done) => {
    try {
      request.query = resolveQueryParameters(
        request.query as RawQuery,
        endpoint.query,
        endpoint.queryAliases,
      );
    } catch (error) {
      return done(error as Error);
    }
    done();
  };
}
