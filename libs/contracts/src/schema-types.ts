import {
  Static,
  TObject,
  TSchema,
  TUnion,
  TNull,
  Type,
  type SchemaOptions,
  type TUnsafe,
} from '@sinclair/typebox';

/**
 * The building blocks every message schema of the product is made of (TypeBox: JSON Schema with
 * TypeScript types). Each field's limits are written here or beside its message, once: the same
 * definition gives the TypeScript type, the gateway's validation, the services' validation of RPC
 * commands and the OpenAPI document.
 */

/**
 * Postgres cannot store U+0000 in text or jsonb and rejects unpaired UTF-16 surrogates in jsonb.
 * Ajv compiles patterns with the `u` flag, where a surrogate range matches only unpaired ones.
 */
export const STORABLE_TEXT_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';
export const STORABLE_TEXT_MESSAGE = 'must not contain NUL characters or unpaired surrogates';

/** Text Postgres can store, its length counted in characters (code points). */
export const Text = (options: SchemaOptions & { minLength?: number; maxLength: number }) =>
  Type.String({ pattern: STORABLE_TEXT_PATTERN, ...options });

/** `schema` or JSON null. */
export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}): TUnion<[T, TNull]> =>
  Type.Union([schema, Type.Null()], options);

/**
 * A string from a fixed list, written as JSON Schema's `enum` (a union of literals would make every
 * validator report one failed branch per value).
 */
export const StringEnum = <const T extends readonly string[]>(values: T, options: SchemaOptions = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: 'uuid', ...options });

/** ISO 8601 UTC with milliseconds, as the API renders every time. */
export const Timestamp = (options: SchemaOptions = {}) =>
  Type.String({ format: 'date-time', examples: ['2026-03-02T09:15:27.412Z'], ...options });

/** An `X-Request-Id`: the client's own when well formed, else a UUID the gateway made. */
export const REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
export const RequestId = (options: SchemaOptions = {}) =>
  Type.String({ pattern: REQUEST_ID_PATTERN, ...options });

/** A W3C Trace Context `traceparent`: version 00, trace id, parent span id, flags (lower-case hex). */
export const Traceparent = (options: SchemaOptions = {}) =>
  Type.String({ pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$', ...options });

export const Integer = (minimum: number, maximum: number, options: SchemaOptions = {}) =>
  Type.Integer({ minimum, maximum, ...options });

/** The longest e-mail address, in characters: 64 for the local part, `@`, 255 for the domain. */
export const EMAIL_MAX_LENGTH = 320;
export const Email = (options: SchemaOptions = {}) =>
  Type.String({ format: 'email', maxLength: EMAIL_MAX_LENGTH, ...options });

/** `metadata` (docs/api-conventions.md, "Hostile input"). */
export const METADATA_LIMITS = { keys: 50, depth: 8, bytes: 16 * 1024 } as const;

/**
 * A JSON object of the client's own: at most 50 top-level keys, nested at most 8 levels, 16 KiB
 * serialised, every string (keys included) storable. Depth, size and storability are the
 * `x-max-depth`, `x-max-bytes` and `x-storable` keywords of schema-validation.ts.
 */
export const Metadata = (options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> =>
  Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    maxProperties: METADATA_LIMITS.keys,
    additionalProperties: true,
    'x-max-depth': METADATA_LIMITS.depth,
    'x-max-bytes': METADATA_LIMITS.bytes,
    'x-storable': true,
    ...options,
  });

/** An object that refuses fields it does not name (unknown fields are a 400 everywhere). */
export const Strict = <T extends Parameters<typeof Type.Object>[0]>(
  properties: T,
  options: SchemaOptions = {},
) => Type.Object(properties, { additionalProperties: false, ...options });

export type { Static, TObject, TSchema };
