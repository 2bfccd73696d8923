/**
 * What a release may change in its messages without breaking the release before it, checked on
 * their JSON Schemas (docs/scaling.md, "Upgrading"). A schema is read in one of two positions:
 *
 * - `request`: written by the other release, read by this one (HTTP requests, RPC commands). The
 *   new schema must accept everything the old one accepted: no field removed, no new required
 *   field, no type, enum, constant, format, pattern or bound narrowed.
 * - `response`: written by this release, read by the other one (HTTP responses, RPC replies,
 *   events). Every field the old schema promised stays, with the types it had: no field removed or
 *   made optional, no type narrowed or widened to one old readers do not know (such as null), no
 *   enum value removed. New optional fields and new enum values are allowed: readers ignore
 *   fields they do not know.
 */

/** A JSON Schema: the keywords the comparison reads, typed. */
export interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema;
  items?: Schema | Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  [keyword: string]: unknown;
}
export type Schema = SchemaObject | boolean;
export type Position = 'request' | 'response';

export interface Incompatibility {
  /** Where: `POST /v1/conversations request body .visitor.email`, `rpc conversations.get reply .id`. */
  where: string;
  problem: string;
}

/** The schemas of one release: its OpenAPI document, RPC operations and events. */
export interface ContractSnapshot {
  http: Record<string, unknown>;
  rpc: Record<string, { command: Schema; reply: Schema }>;
  /** Per event type: its `data` and, where the release describes it, the whole CloudEvent. */
  events: Record<string, { data: Schema; envelope?: Schema }>;
}

/** Everything HEAD (`after`) breaks for the release before it (`before`). */
export function compareSnapshots(before: ContractSnapshot, after: ContractSnapshot): Incompatibility[] {
  const found: Incompatibility[] = [];
  const http = new SchemaComparison(found, before.http, after.http);
  compareOpenApi(http, before.http, after.http);

  const rpc = new SchemaComparison(found);
  for (const [pattern, old] of Object.entries(before.rpc)) {
    const current = after.rpc[pattern];
    if (!current) {
      found.push({ where: `rpc ${pattern}`, problem: 'operation removed' });
      continue;
    }
    rpc.compare(old.command, current.command, 'request', `rpc ${pattern} command`);
    rpc.compare(old.reply, current.reply, 'response', `rpc ${pattern} reply`);
  }

  for (const [type, old] of Object.entries(before.events)) {
    const current = after.events[type];
    if (!current) {
      found.push({ where: `event ${type}`, problem: 'event type removed' });
      continue;
    }
    rpc.compare(old.data, current.data, 'response', `event ${type} data`);
    if (old.envelope && current.envelope)
      rpc.compare(old.envelope, current.envelope, 'response', `event ${type}`);
  }
  return found;
}

type Json = SchemaObject;

/** The parts of an OpenAPI document the comparison reads. */
interface Media {
  schema?: Schema;
}
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: Schema;
}
interface Operation {
  parameters?: Json[];
  requestBody?: Json;
  responses?: Record<string, Json>;
}
interface OpenApi {
  paths?: Record<string, Record<string, Operation>>;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Paths by their decoded spelling: `/v1/rozmowy/{id}/wiadomości` whether stored percent-encoded or not. */
const pathsOf = (document: OpenApi) =>
  new Map(Object.entries(document.paths ?? {}).map(([path, item]) => [decodeURI(path), item]));

function compareOpenApi(comparison: SchemaComparison, before: OpenApi, after: OpenApi): void {
  const newPaths = pathsOf(after);
  for (const [path, oldItem] of pathsOf(before)) {
    for (const method of HTTP_METHODS.filter((name) => oldItem[name])) {
      const where = `${method.toUpperCase()} ${path}`;
      const oldOperation = oldItem[method];
      const newOperation = newPaths.get(path)?.[method];
      if (!newOperation) {
        comparison.report(where, 'operation removed');
        continue;
      }
      compareParameters(comparison, where, oldOperation, newOperation);
      compareRequestBody(comparison, where, oldOperation, newOperation);
      compareResponses(comparison, where, oldOperation, newOperation);
    }
  }
}

function compareParameters(comparison: SchemaComparison, where: string, before: Operation, after: Operation) {
  const byKey = (operation: Operation, resolve: (value: Json) => Schema) =>
    new Map(
      (operation.parameters ?? [])
        .map((value) => resolve(value) as unknown as Parameter)
        .map((parameter) => [`${parameter.in} parameter ${parameter.name}`, parameter]),
    );
  const old = byKey(before, (value) => comparison.resolveBefore(value));
  const current = byKey(after, (value) => comparison.resolveAfter(value));
  for (const [key, parameter] of current)
    if (parameter.required && !old.get(key)?.required)
      comparison.report(`${where} ${key}`, 'new required request field');
  for (const [key, parameter] of old) {
    const now = current.get(key);
    if (!now) comparison.report(`${where} ${key}`, 'field removed');
    else comparison.compare(parameter.schema ?? {}, now.schema ?? {}, 'request', `${where} ${key}`);
  }
}

/** A request body's or response's `content`, by media type. */
const contentOf = (value: Schema) => ((value as Json).content ?? {}) as Record<string, Media>;

function compareRequestBody(
  comparison: SchemaComparison,
  where: string,
  before: Operation,
  after: Operation,
) {
  const old = comparison.resolveBefore(before.requestBody ?? {});
  const current = comparison.resolveAfter(after.requestBody ?? {});
  const required = (body: Schema) => (body as { required?: unknown }).required === true;
  if (required(current) && !required(old))
    comparison.report(`${where} request body`, 'new required request field');
  for (const [mediaType, content] of Object.entries(contentOf(old))) {
    const now = contentOf(current)[mediaType];
    if (!now) comparison.report(`${where} request body`, `${mediaType} no longer accepted`);
    else comparison.compare(content.schema ?? {}, now.schema ?? {}, 'request', `${where} request body`);
  }
}

function compareResponses(comparison: SchemaComparison, where: string, before: Operation, after: Operation) {
  for (const [status, oldResponse] of Object.entries(before.responses ?? {})) {
    const newResponse = after.responses?.[status];
    const label = `${where} response ${status}`;
    if (!newResponse) {
      if (status.startsWith('2')) comparison.report(label, 'response removed');
      continue;
    }
    const old = comparison.resolveBefore(oldResponse);
    const current = comparison.resolveAfter(newResponse);
    for (const [mediaType, content] of Object.entries(contentOf(old))) {
      const now = contentOf(current)[mediaType];
      if (!now) comparison.report(label, `${mediaType} no longer answered`);
      else comparison.compare(content.schema ?? {}, now.schema ?? {}, 'response', label);
    }
  }
}

/** Upper bounds (a lower value narrows) and lower bounds (a higher value narrows). */
const UPPER_BOUNDS = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum'];
const LOWER_BOUNDS = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum'];

/** Compares schemas pairwise, resolving local `$ref`s against the documents they are part of. */
class SchemaComparison {
  private readonly visiting = new Set<string>();

  constructor(
    private readonly found: Incompatibility[],
    private readonly beforeRoot: unknown = {},
    private readonly afterRoot: unknown = {},
  ) {}

  report(where: string, problem: string): void {
    this.found.push({ where, problem });
  }

  resolveBefore(schema: Schema): Schema {
    return resolve(schema, this.beforeRoot);
  }

  resolveAfter(schema: Schema): Schema {
    return resolve(schema, this.afterRoot);
  }

  compare(before: Schema, after: Schema, position: Position, where: string): void {
    // A recursive schema is compared once per pair of references.
    const refs = refOf(before) && refOf(after) ? `${refOf(before)}|${refOf(after)}|${position}` : undefined;
    if (refs && this.visiting.has(refs)) return;
    if (refs) this.visiting.add(refs);
    try {
      this.compareResolved(this.resolveBefore(before), this.resolveAfter(after), position, where);
    } finally {
      if (refs) this.visiting.delete(refs);
    }
  }

  private compareResolved(old: Schema, current: Schema, position: Position, where: string): void {
    if (current === true || old === true || old === false) return;
    if (current === false) {
      this.report(where, 'no longer accepts any value');
      return;
    }
    const oldBranches = branches(old);
    const newBranches = branches(current);
    if (oldBranches.length > 1 || newBranches.length > 1) {
      this.compareUnions(oldBranches, newBranches, position, where);
      return;
    }
    this.compareTypes(old, current, position, where);
    this.compareValues(old, current, position, where);
    if (position === 'request') this.compareBounds(old, current, where);
    this.compareProperties(old, current, position, where);
    if (old.items && current.items && !Array.isArray(old.items))
      this.compare(old.items, current.items as Schema, position, `${where}[]`);
  }

  /**
   * `anyOf`/`oneOf` (a nullable value included): each old branch must still be matched by a new
   * branch without a problem; if none is, the problems reported are those of the closest new
   * branch of the same type. In a response, each new branch must also be of a type old readers
   * know.
   */
  private compareUnions(old: Schema[], current: Schema[], position: Position, where: string): void {
    const problemsOf = (before: Schema, after: Schema) => {
      const found: Incompatibility[] = [];
      new SchemaComparison(found, this.beforeRoot, this.afterRoot).compare(before, after, position, where);
      return found;
    };
    for (const branch of old) {
      const candidates = current.map((candidate) => ({ candidate, problems: problemsOf(branch, candidate) }));
      if (candidates.some(({ problems }) => problems.length === 0)) continue;
      // One old object split into several by a discriminator (one branch per event type, say)
      // still takes every old value when the new branches do together.
      const split = current
        .map((candidate) => this.resolveAfter(candidate))
        .filter((candidate) => sameKind(this.resolveBefore(branch), candidate));
      if (split.length > 1 && problemsOf(branch, this.mergeObjects(split)).length === 0) continue;
      const closest = candidates
        .filter(({ candidate }) => sameKind(this.resolveBefore(branch), this.resolveAfter(candidate)))
        .sort((a, b) => a.problems.length - b.problems.length)[0];
      if (closest) this.found.push(...closest.problems);
      else this.report(where, `type narrowed: ${describe(branch)} no longer accepted`);
    }
    if (position === 'response')
      for (const branch of current)
        if (!old.some((candidate) => sameKind(this.resolveBefore(candidate), this.resolveAfter(branch))))
          this.report(
            where,
            `type widened: may now be ${describe(branch)}, which readers of the old schema do not expect`,
          );
  }

  /**
   * The object schemas as one: every field any of them names, required where all require it, a
   * field's enumerated values joined (other field schemas become alternatives).
   */
  private mergeObjects(schemas: Schema[]): Schema {
    const objects = schemas.filter((schema): schema is Json => typeof schema === 'object');
    const names = [...new Set(objects.flatMap((schema) => Object.keys(schema.properties ?? {})))];
    const properties: Record<string, Schema> = Object.fromEntries(
      names.map((name): [string, Schema] => {
        const fields = objects
          .map((schema) => schema.properties?.[name])
          .filter((field): field is Schema => field !== undefined)
          .map((field) => this.resolveAfter(field));
        const values = fields.map((field) =>
          typeof field === 'object' ? (field.const !== undefined ? [field.const] : field.enum) : undefined,
        );
        if (values.every((list) => list !== undefined)) {
          const joined: Json = { ...(fields[0] as Json), enum: values.flat() };
          delete joined.const;
          return [name, joined];
        }
        return [name, { anyOf: fields }];
      }),
    );
    const required: string[] = objects
      .map((schema) => schema.required ?? [])
      .reduce((all, next) => all.filter((name) => next.includes(name)));
    return { type: 'object', properties, required };
  }

  private compareTypes(old: Json, current: Json, position: Position, where: string): void {
    const oldTypes = typesOf(old);
    const newTypes = typesOf(current);
    if (!oldTypes || !newTypes) return;
    const covers = (types: string[], type: string) =>
      types.includes(type) || (type === 'integer' && types.includes('number'));
    const lost = oldTypes.filter((type) => !covers(newTypes, type));
    if (lost.length > 0) this.report(where, `type narrowed: ${lost.join(', ')} no longer accepted`);
    if (position === 'response') {
      const added = newTypes.filter((type) => !covers(oldTypes, type));
      if (added.length > 0)
        this.report(
          where,
          `type widened: may now be ${added.join(', ')}, which readers of the old schema do not expect`,
        );
    }
  }

  private compareValues(old: Json, current: Json, position: Position, where: string): void {
    const valuesOf = (schema: Json): unknown[] | undefined =>
      schema.const !== undefined ? [schema.const] : schema.enum;
    const oldValues = valuesOf(old);
    const newValues = valuesOf(current);
    if (!newValues) return;
    if (!oldValues) {
      if (position === 'request')
        this.report(where, `enum narrowed: now only ${newValues.map(show).join(', ')}`);
      return;
    }
    const removed = oldValues.filter((value) => !newValues.some((candidate) => same(candidate, value)));
    if (removed.length > 0) this.report(where, `enum narrowed: ${removed.map(show).join(', ')} removed`);
  }

  private compareBounds(old: Json, current: Json, where: string): void {
    const bound = (schema: Json, keyword: string) =>
      typeof schema[keyword] === 'number' ? schema[keyword] : undefined;
    for (const keyword of UPPER_BOUNDS) {
      const [was, now] = [bound(old, keyword), bound(current, keyword)];
      if (now !== undefined && !(now >= (was ?? Infinity)))
        this.report(where, `narrowed: ${keyword} ${was ?? 'none'} -> ${now}`);
    }
    for (const keyword of LOWER_BOUNDS) {
      const [was, now] = [bound(old, keyword), bound(current, keyword)];
      if (now !== undefined && !(now <= (was ?? -Infinity)))
        this.report(where, `narrowed: ${keyword} ${was ?? 'none'} -> ${now}`);
    }
    for (const keyword of ['format', 'pattern'])
      if (current[keyword] !== undefined && current[keyword] !== old[keyword])
        this.report(
          where,
          `narrowed: ${keyword} ${show(old[keyword] ?? 'none')} -> ${show(current[keyword])}`,
        );
    if (current.additionalProperties === false && old.additionalProperties !== false && old.properties)
      this.report(where, 'narrowed: fields it did not name are now refused');
  }

  private compareProperties(old: Json, current: Json, position: Position, where: string): void {
    const oldProperties = old.properties ?? {};
    const newProperties = current.properties ?? {};
    const oldRequired = new Set(old.required ?? []);
    const newRequired = new Set(current.required ?? []);
    for (const [name, schema] of Object.entries(oldProperties)) {
      const field = `${where} .${name}`;
      if (!(name in newProperties)) {
        // A field still allowed by an open object is not removed for those who send it.
        if (position === 'response' || current.additionalProperties === false || !old.properties)
          this.report(field, 'field removed');
        continue;
      }
      if (position === 'response' && oldRequired.has(name) && !newRequired.has(name))
        this.report(field, 'field no longer always present');
      this.compare(schema, newProperties[name], position, field);
    }
    if (position === 'request')
      for (const name of newRequired)
        if (!oldRequired.has(name)) this.report(`${where} .${name}`, 'new required request field');
    const oldExtra = old.additionalProperties;
    const newExtra = current.additionalProperties;
    if (oldExtra && typeof oldExtra === 'object' && newExtra && typeof newExtra === 'object')
      this.compare(oldExtra, newExtra, position, `${where}{}`);
  }
}

function resolve(schema: Schema, root: unknown): Schema {
  let current = schema;
  for (let depth = 0; typeof current === 'object' && typeof current.$ref === 'string'; depth++) {
    const ref = current.$ref;
    if (!ref.startsWith('#/') || depth > 32) return current;
    const target = ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], root);
    if (target === undefined) throw new Error(`unresolved reference ${ref}`);
    current = target as Schema;
  }
  return current;
}

const refOf = (schema: Schema) => (typeof schema === 'object' ? schema.$ref : undefined);

function branches(schema: Json): Schema[] {
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return union.flatMap((branch) => (typeof branch === 'object' ? branches(branch) : [branch]));
  return [schema];
}

function typesOf(schema: Json): string[] | undefined {
  if (Array.isArray(schema.type)) return schema.type;
  return typeof schema.type === 'string' ? [schema.type] : undefined;
}

/** The JSON types a schema's values have, declared or implied by its constant, enum or properties. */
function kindsOf(schema: Schema): string[] | undefined {
  if (typeof schema !== 'object') return undefined;
  const declared = typesOf(schema);
  if (declared) return declared.map((type) => (type === 'integer' ? 'number' : type));
  const values = schema.const !== undefined ? [schema.const] : schema.enum;
  if (values) return [...new Set(values.map((value) => (value === null ? 'null' : typeof value)))];
  return schema.properties ? ['object'] : undefined;
}

/** Whether two union branches describe values of the same JSON types (unknown kinds match anything). */
function sameKind(a: Schema, b: Schema): boolean {
  const [x, y] = [kindsOf(a), kindsOf(b)];
  return !x || !y || (x.length === y.length && x.every((type) => y.includes(type)));
}

function describe(schema: Schema): string {
  if (typeof schema !== 'object') return String(schema);
  if (schema.const !== undefined) return show(schema.const);
  return typesOf(schema)?.join(' or ') ?? 'a value of another shape';
}

const show = (value: unknown) => JSON.stringify(value);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
