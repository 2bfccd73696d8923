import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import { DomainError, type FieldError } from '@app/errors';
import {
  ALL_STATUS_SPELLINGS,
  type ConversationStatus,
  parseEventType,
  parseStatus,
  EVENT_SPELLINGS,
  STATUS_NAMES,
} from '@app/dialects';
import { STORABLE_TEXT_MESSAGE, STORABLE_TEXT_PATTERN } from './schema-types';
import { isStorableJson } from './storable-text';
import { DATE_TIME_MESSAGE, isStorableDateTime } from './instants';
import { isTag, TAG_RULE } from './tags';

/**
 * Validation of every message against its schema (schema-types.ts), compiled once by Ajv, with
 * errors as the API reports them: `{field, message}` with the field's dotted path.
 */

function createAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true, // errors carry their schema, for messages naming both bounds
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    strict: true,
    strictTypes: false, // nullable fields are `anyOf [T, null]`
  });
  addFormats(ajv, ['email']);
  ajv.addFormat('date-time', isStorableDateTime);
  // ajv-formats' uuid also takes a `urn:uuid:` prefix, which Postgres does not.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  for (const annotation of ['x-error', 'x-not-found']) ajv.addKeyword({ keyword: annotation });
  ajv.addKeyword({
    keyword: 'x-max-depth',
    type: 'object',
    schemaType: 'number',
    validate: (max: number, data: unknown) => depthOf(data, max + 1) <= max,
    error: { message: (cxt) => `must be nested at most ${String(cxt.schema)} levels deep` },
  });
  ajv.addKeyword({
    keyword: 'x-max-bytes',
    type: 'object',
    schemaType: 'number',
    validate: (max: number, data: unknown) => Buffer.byteLength(JSON.stringify(data)) <= max,
    error: { message: (cxt) => `must be at most ${String(cxt.schema)} bytes as JSON` },
  });
  ajv.addKeyword({
    keyword: 'x-storable',
    schemaType: 'boolean',
    validate: (storable: boolean, data: unknown) => !storable || isStorableJson(data),
    error: { message: STORABLE_TEXT_MESSAGE },
  });
  ajv.addKeyword({
    keyword: 'x-tag',
    type: 'string',
    schemaType: 'boolean',
    validate: (_: boolean, data: string) => isTag(data),
    error: { message: TAG_RULE },
  });
  ajv.addKeyword({
    keyword: 'x-status-of',
    type: 'string',
    schemaType: 'array',
    validate: (allowed: string[], data: string) => allowed.includes(parseStatus(data) ?? ''),
    error: {
      message: (cxt) => `must be one of: ${spellingsOf(cxt.schema as ConversationStatus[]).join(', ')}`,
    },
  });
  ajv.addKeyword({
    keyword: 'x-event-name',
    type: 'string',
    schemaType: 'boolean',
    /** `true`: `*` is accepted too (a subscription's list); `false`: an event name only (a filter). */
    validate: (wildcard: boolean, data: string) =>
      (wildcard && data === '*') || parseEventType(data) !== undefined,
    error: {
      message: (cxt) =>
        `must be ${cxt.schema ? '* or ' : ''}an event name in any dialect: ${EVENT_SPELLINGS.join(', ')}`,
    },
  });
  return ajv;
}

const ajv = createAjv();
const compiled = new WeakMap<TSchema, ValidateFunction>();

/** The schema's validator, compiled on first use and kept (schemas are module-level constants). */
export function compileSchema(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * The value if it matches the schema; otherwise the 400 listing what is wrong (at most 20
 * entries), or a 404 when an id (`x-not-found`) cannot name anything: an id that is not even a
 * UUID names no resource, like an unknown one.
 */
export function parseWith<T extends TSchema>(schema: T, value: unknown, root = 'body'): Static<T> {
  const validate = compileSchema(schema);
  if (validate(value)) return value;
  throw invalidInput(validate.errors ?? [], root);
}

export function invalidInput(errors: ErrorObject[], root: string): DomainError {
  const malformedId = errors.find((e) => (e.parentSchema as { 'x-not-found'?: string })?.['x-not-found']);
  if (malformedId) {
    const what = (malformedId.parentSchema as { 'x-not-found': string })['x-not-found'];
    return new DomainError('not_found', `${what} ${String(malformedId.data).slice(0, 64)} was not found.`);
  }
  return DomainError.validation(toFieldErrors(errors, root));
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};
const FORMATS: Record<string, string> = {
  email: 'must be a valid email address',
  uuid: 'must be a UUID',
  'date-time': DATE_TIME_MESSAGE,
};

type SchemaWithError = { 'x-error'?: { field: string; message: string } };

/**
 * Ajv's errors as the API reports them. `root` names the whole value (`body`, `query`) where an
 * error has no narrower place. A nullable field (`anyOf [T, null]`) that is neither reports only
 * its type's problem; an `anyOf` with an `x-error` ({field, message}) reports that message alone.
 */
export function toFieldErrors(errors: ErrorObject[], root: string): FieldError[] {
  const explained = errors.filter((e) => e.keyword === 'anyOf' && ownError(e));
  const insideExplained = (e: ErrorObject) =>
    explained.some((anyOf) => e !== anyOf && e.schemaPath.startsWith(`${anyOf.schemaPath}/`));
  const isNullBranch = (e: ErrorObject) =>
    e.keyword === 'type' && (e.params as { type: string }).type === 'null';
  const within = (path: string, outer: string) => path === outer || path.startsWith(`${outer}/`);
  const hasOtherErrorAt = (e: ErrorObject) =>
    errors.some(
      (o) => o !== e && within(o.instancePath, e.instancePath) && o.keyword !== 'anyOf' && !isNullBranch(o),
    );
  const kept = errors.filter(
    (e) =>
      !insideExplained(e) &&
      !isNullBranch(e) &&
      !(e.keyword === 'anyOf' && !ownError(e) && hasOtherErrorAt(e)),
  );
  const unique = new Map<string, FieldError>();
  for (const entry of kept.map((e) => describe(e, root)))
    unique.set(`${entry.field}\u0000${entry.message}`, entry);
  return [...unique.values()];
}

function ownError(error: ErrorObject): { field: string; message: string } | undefined {
  return (error.parentSchema as SchemaWithError | undefined)?.['x-error'];
}

function describe(error: ErrorObject, root: string): FieldError {
  const at = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => shortened(part.replace(/~1/g, '/').replace(/~0/g, '~')));
  const field = (...more: string[]) => [...at, ...more].join('.') || root;
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'anyOf': {
      const own = ownError(error);
      return own
        ? { field: field(own.field), message: own.message }
        : { field: field(), message: 'is not valid' };
    }
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      const values = (schema.properties as Record<string, { enum?: unknown[] }> | undefined)?.[missing]?.enum;
      return {
        field: field(missing),
        message: values ? `is required: one of ${values.join(', ')}` : 'is required',
      };
    }
    case 'additionalProperties':
      return {
        field: field(shortened((error.params as { additionalProperty: string }).additionalProperty)),
        message: root === 'query' ? 'is not a parameter of this endpoint' : 'is not a known field',
      };
    case 'type':
      // The whole body: say what it must be in the terms of the wire.
      if (at.length === 0 && schema.type === 'object')
        return { field: root, message: 'must be a JSON object' };
      return { field: field(), message: `must be ${typeNames(schema)}` };
    case 'minLength':
    case 'maxLength':
      return { field: field(), message: lengthMessage(schema) };
    case 'minimum':
    case 'maximum':
      return { field: field(), message: rangeMessage(schema) };
    case 'enum':
      return { field: field(), message: `must be one of: ${(schema.enum as unknown[]).join(', ')}` };
    case 'format':
      return {
        field: field(),
        message: FORMATS[(error.params as { format: string }).format] ?? error.message!,
      };
    case 'pattern':
      return {
        field: field(),
        message:
          schema.pattern === STORABLE_TEXT_PATTERN
            ? STORABLE_TEXT_MESSAGE
            : `must match ${String(schema.pattern)}`,
      };
    case 'minItems':
    case 'maxItems':
      return {
        field: field(),
        message: `must list ${(schema.minItems as number | undefined) ?? 0} to ${String(schema.maxItems)} items`,
      };
    case 'maxProperties':
      return { field: field(), message: `must have at most ${String(schema.maxProperties)} keys` };
    default:
      return { field: field(), message: error.message ?? 'is not valid' };
  }
}

/** Every spelling of the given statuses, in the dialects' order. */
const spellingsOf = (statuses: ConversationStatus[]) =>
  ALL_STATUS_SPELLINGS.filter((spelling) =>
    statuses.some((status) => Object.values(STATUS_NAMES[status]).includes(spelling)),
  );

/** A client's own key names are echoed in errors only in part. */
export const shortened = (name: string) => (name.length > 64 ? `${name.slice(0, 64)}…` : name);

function typeNames(schema: Record<string, unknown>): string {
  const types = ([] as string[]).concat((schema.type as string | string[]) ?? []);
  return types.map((type) => ARTICLE[type] ?? type).join(' or ');
}

function lengthMessage(schema: Record<string, unknown>): string {
  const min = schema.minLength as number | undefined;
  const max = schema.maxLength as number | undefined;
  if (min && max !== undefined) return `must be ${min} to ${max} characters long`;
  if (max !== undefined) return `must be at most ${max} characters long`;
  return min === 1 ? 'must not be empty' : `must be at least ${String(min)} characters long`;
}

function rangeMessage(schema: Record<string, unknown>): string {
  const noun = schema.type === 'integer' ? 'an integer' : 'a number';
  const min = schema.minimum as number | undefined;
  const max = schema.maximum as number | undefined;
  if (min !== undefined && max !== undefined) return `must be ${noun} from ${min} to ${max}`;
  return min !== undefined
    ? `must be ${noun} of at least ${min}`
    : `must be ${noun} of at most ${String(max)}`;
}

/**
 * How deeply `value` nests (a scalar is 0, `{}` and `[]` are 1), counting no further than `stop`:
 * iterative, so no input can exhaust the stack.
 */
export function depthOf(value: unknown, stop: number): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest >= stop) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push([child, level]);
    }
  }
  return deepest;
}
