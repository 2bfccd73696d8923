import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenAPIV3_1 } from 'openapi-types';
import {
  COLLECTION_SEGMENTS,
  EVENT_NAMES,
  EVENT_TYPES,
  LIST_QUERY_ALIASES,
  MESSAGES_SEGMENTS,
} from '@app/dialects';
import { ERROR_CATALOGUE } from '@app/errors';
import { TestStack } from '@app/testing';

/**
 * The OpenAPI document is built from the same endpoint definitions and schemas the gateway
 * validates and serialises with (services/gateway/src/openapi). These checks are what a user of
 * the document relies on: it is valid OpenAPI 3.1, it lists exactly what is served, every
 * operation has a stable id, every parameter its type and bounds, every body and response an
 * example that its own schema accepts, every error its problem details with an example per code.
 * That live responses match it is checked by every e2e test (libs/testing/src/openapi-contract.ts).
 */

type Operation = OpenAPIV3_1.OperationObject & { method: string; path: string };
type Schema = Record<string, unknown>;

/** `METHOD /path/{param}` for every API route Fastify serves (HEAD aside: Fastify adds it to GETs). */
function servedRoutes(tree: string): string[] {
  const segments: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│├└─\s]*)(\S.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    segments.length = match[1].length / 4;
    segments.push(match[2]);
    const path = segments.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of match[3]?.split(', ') ?? []) {
      if (method !== 'HEAD' && path.startsWith('/v1/') && !path.endsWith('*'))
        routes.push(`${method} ${path}`);
    }
  }
  return [...new Set(routes)].sort();
}

/** Each segment in its canonical (English) spelling. */
const canonical = (path: string) =>
  path
    .split('/')
    .map((segment) =>
      [COLLECTION_SEGMENTS, MESSAGES_SEGMENTS].reduce<string>(
        (name, spellings) => ((spellings as readonly string[]).includes(name) ? spellings[0] : name),
        segment,
      ),
    )
    .join('/');

describe('OpenAPI document', () => {
  let stack: TestStack;
  let raw: OpenAPIV3_1.Document;
  let operations: Operation[];
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));

  beforeAll(async () => {
    stack = await TestStack.start();
    const response = await fetch(`${stack.url}/openapi.json`);
    expect(response.status).toBe(200);
    raw = (await response.json()) as OpenAPIV3_1.Document;
    const document = (await SwaggerParser.dereference(structuredClone(raw))) as OpenAPIV3_1.Document;
    operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'put', 'delete'] as const)
        .filter((method) => item?.[method])
        .map((method) => ({ ...item![method]!, method, path: decodeURI(path) })),
    );
  });
  afterAll(() => stack?.close());

  const parameters = (op: Operation) => (op.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
  const responses = (op: Operation) =>
    Object.entries(op.responses ?? {}) as [string, OpenAPIV3_1.ResponseObject][];
  const validates = (schema: Schema, value: unknown) => {
    const validate = ajv.compile(schema);
    return validate(value) ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message}`);
  };

  it('is valid OpenAPI 3.1 (swagger-parser: structure, $refs, parameters)', async () => {
    const validated = await SwaggerParser.validate(structuredClone(raw));
    expect(validated.info.title).toBe('Conversation Messaging API');
    expect(raw.openapi).toBe('3.1.0');
  });

  it('is also served as YAML, both declared UTF-8, and rendered at /docs with Swagger UI gzipped', async () => {
    const json = await fetch(`${stack.url}/openapi.json`);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const yaml = await fetch(`${stack.url}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    const text = await yaml.text();
    expect(text).toContain('/v1/rozmowy/{id}/wiadomości:');
    expect(text).toContain('zamknięte');
    const docs = await fetch(`${stack.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await docs.text();
    let weight = page.length;
    for (const [, asset] of page.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)) {
      const res = await fetch(`${stack.url}${asset}`, { headers: { 'accept-encoding': 'gzip' } });
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
      expect(res.headers.get('content-encoding')).toBe('gzip');
      weight += Number(res.headers.get('content-length'));
    }
    expect(weight).toBeLessThan(700_000);
  });

  it('keeps paths as written, describes every operation, and names its server, contact and licence', () => {
    expect(Object.keys(raw.paths!).filter((path) => path.includes('%'))).toEqual([]);
    expect(raw.paths).toHaveProperty(['/v1/rozmowy/{id}/wiadomości']);
    for (const op of operations)
      expect({ op: op.operationId, described: (op.description ?? '').length > 20 }).toEqual({
        op: op.operationId,
        described: true,
      });
    expect(raw.servers).toEqual([
      expect.objectContaining({
        url: '{gateway}',
        variables: { gateway: expect.objectContaining({ default: expect.stringMatching(/^http/) }) },
      }),
    ]);
    expect(raw.info.contact).toEqual(expect.objectContaining({ name: expect.any(String) }));
    expect(raw.info.license).toEqual(expect.objectContaining({ name: expect.any(String) }));
  });

  it('puts no default in a PATCH body, so a typed client sends only what it changes', () => {
    const defaults = (value: unknown): boolean =>
      typeof value === 'object' &&
      value !== null &&
      Object.entries(value).some(([key, part]) => key === 'default' || defaults(part));
    const patches = operations.filter((op) => op.method === 'patch');
    expect(patches.map((op) => op.operationId).sort()).toEqual(
      ['updateConversation', 'updateConversationPl', 'updateWebhook'].sort(),
    );
    for (const op of patches)
      expect({ op: op.operationId, defaults: defaults(op.requestBody) }).toEqual({
        op: op.operationId,
        defaults: false,
      });
  });

  it("types each event's data by its type: a oneOf discriminated by every spelling of the type", () => {
    const schemas = raw.components!.schemas!;
    const event = schemas.Event as unknown as { oneOf: Array<{ $ref: string }>; discriminator: Schema };
    expect(event.oneOf).toHaveLength(EVENT_TYPES.length);
    const mapping = (event.discriminator as { propertyName: string; mapping: Record<string, string> })
      .mapping;
    expect(event.discriminator.propertyName).toBe('type');
    for (const type of EVENT_TYPES) {
      for (const name of Object.values(EVENT_NAMES[type])) {
        const branch = schemas[mapping[name].split('/').pop()!] as Schema & {
          properties: { type: { enum: string[] }; data: Schema };
        };
        expect({ name, enum: branch.properties.type.enum }).toEqual({
          name,
          enum: expect.arrayContaining([name]),
        });
        expect(branch.properties.data.additionalProperties).toBe(false);
      }
    }
    const updated = schemas.ConversationUpdatedEvent as { properties: { data: { required: string[] } } };
    expect(updated.properties.data.required).toEqual(expect.arrayContaining(['conversation', 'changed']));
    const json = (path: string) => JSON.stringify(raw.paths![path]!.get!.responses['200']);
    expect(json('/v1/events/{id}')).toContain('"#/components/schemas/Event"');
    expect(json('/v1/events')).toContain('"#/components/schemas/EventList"');
    expect(JSON.stringify(schemas.EventList)).toContain('"#/components/schemas/Event"');
    expect(json('/v1/events/stream')).toContain('"x-sse-data":{"$ref":"#/components/schemas/Event"}');
  });

  it('gives every problem type a page the gateway serves, and lists them all', async () => {
    for (const code of Object.keys(ERROR_CATALOGUE)) {
      const res = await fetch(`${stack.url}/problems/${code.replace(/_/g, '-')}`);
      expect({ code, status: res.status }).toEqual({ code, status: 200 });
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await res.text()).toContain(`<code>${code}</code>`);
    }
    const index = await (await fetch(`${stack.url}/problems/`)).text();
    for (const code of Object.keys(ERROR_CATALOGUE))
      expect(index).toContain(`/problems/${code.replace(/_/g, '-')}`);
  });

  it('documents every served route: canonically, and the conversations ones also under their Polish path', () => {
    const tree = stack.gateway.app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false });
    const served = servedRoutes(tree);
    const documented = new Set(operations.map((op) => `${op.method.toUpperCase()} ${op.path}`));
    // Mixed spellings (/v1/conversations/{id}/wiadomości) are served and documented canonically.
    for (const route of served) {
      const [method, path] = route.split(' ');
      expect({
        route,
        documented: documented.has(route) || documented.has(`${method} ${canonical(path)}`),
      }).toEqual({
        route,
        documented: true,
      });
    }
    for (const route of documented)
      expect({ route, served: served.includes(route) }).toEqual({ route, served: true });
    expect(documented).toContain('POST /v1/rozmowy/{id}/wiadomości');
    expect(documented).not.toContain('POST /v1/conversations/{id}/wiadomości');
  });

  it('gives every operation a unique, meaningful id, the Polish twins tagged apart', () => {
    const ids = operations.map((op) => op.operationId!);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
    expect(ids).toEqual(
      expect.arrayContaining(['listConversations', 'sendMessage', 'createWebhook', 'getAnalyticsSummary']),
    );
    const polish = operations.filter((op) => op.path.startsWith('/v1/rozmowy'));
    expect(polish.length).toBe(9);
    for (const op of polish) {
      expect(op.operationId).toMatch(/Pl$/);
      expect(op.tags).toEqual(['conversations (Polish paths)']);
    }
  });

  it('requires the bearer API key (an opaque token, not a JWT) on every operation', () => {
    expect(raw.components?.securitySchemes?.bearer).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    expect(raw.components?.securitySchemes?.bearer).not.toHaveProperty('bearerFormat');
    // The stream also takes a stream token in `?token=` (browsers' EventSource sends no header).
    for (const op of operations)
      expect({ op: op.operationId, security: op.security }).toEqual({
        op: op.operationId,
        security:
          op.operationId === 'streamEvents' ? [{ bearer: [] }, { streamToken: [] }] : [{ bearer: [] }],
      });
  });

  it('types every parameter, bounds the numbers, and documents other spellings without defaults', () => {
    for (const op of operations) {
      const byName = new Map(parameters(op).map((p) => [p.name, p]));
      expect(byName.get('Accept-Language')?.schema).toEqual({ type: 'string' });
      for (const [name, spellings] of Object.entries(LIST_QUERY_ALIASES)) {
        const parameter = byName.get(name);
        if (!parameter) continue;
        if (name === 'limit' || name === 'offset') {
          expect(parameter.schema).toEqual(
            expect.objectContaining({ type: 'integer', minimum: expect.any(Number) }),
          );
        }
        for (const alias of spellings.slice(1)) {
          const other = byName.get(alias);
          expect({ op: op.operationId, alias, documented: !!other }).toEqual({
            op: op.operationId,
            alias,
            documented: true,
          });
          expect(other!.schema).not.toHaveProperty('default');
        }
      }
    }
    const list = operations.find((op) => op.operationId === 'listConversations')!;
    expect(parameters(list).find((p) => p.name === 'limit')!.schema).toEqual(
      expect.objectContaining({ type: 'integer', minimum: 1, maximum: 100, default: 20 }),
    );
  });

  it('gives every body and success response a strict schema and an example that schema accepts', () => {
    for (const op of operations) {
      const body = (op.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content['application/json'];
      if (body) {
        expect({ op: op.operationId, strict: (body.schema as Schema).additionalProperties }).toEqual({
          op: op.operationId,
          strict: false,
        });
        expect({ op: op.operationId, errors: validates(body.schema as Schema, body.example) }).toEqual({
          op: op.operationId,
          errors: [],
        });
      }
      const success = responses(op).filter(([status]) => status.startsWith('2'));
      expect(success).toHaveLength(1);
      const [[status, response]] = success;
      if (status === '204') continue;
      const media = response.content!['application/json'] ?? response.content!['text/event-stream'];
      expect({ op: op.operationId, errors: validates(media.schema as Schema, media.example) }).toEqual({
        op: op.operationId,
        errors: [],
      });
    }
    const create = operations.find((op) => op.operationId === 'createConversation')!;
    const createBody = create.requestBody as OpenAPIV3_1.RequestBodyObject;
    // An empty body starts a conversation: the body is optional and no field is required.
    expect(createBody.required).toBe(false);
    expect((createBody.content['application/json'].schema as Schema).required).toBeUndefined();
  });

  it('accepts null where a field may be null, as strict validators read it', () => {
    const get = operations.find((op) => op.operationId === 'getConversation')!;
    const schema = (get.responses!['200'] as OpenAPIV3_1.ResponseObject).content!['application/json']
      .schema as Schema;
    const example = (get.responses!['200'] as OpenAPIV3_1.ResponseObject).content!['application/json']
      .example as Schema;
    const withNulls = { ...example, visitor: null, subject: null, last_message_at: null, closed_at: null };
    expect(validates(schema, withNulls)).toEqual([]);
    expect(validates(schema, { ...example, visitor: 'nobody' })).not.toEqual([]);
  });

  it("documents every error as problem details, with one example per code, this operation's own", () => {
    for (const op of operations) {
      const errors = responses(op).filter(([status]) => Number(status) >= 400);
      const statuses = errors.map(([status]) => status);
      expect({ op: op.operationId, statuses }).toEqual({
        op: op.operationId,
        statuses: expect.arrayContaining(['400', '401', '429', '500', '503', '504']),
      });
      if (parameters(op).some((p) => p.in === 'path')) expect(statuses).toContain('404');
      for (const [, response] of errors) {
        const media = response.content![PROBLEM_JSON];
        expect((media.schema as Schema).required).toEqual(
          expect.arrayContaining(['type', 'title', 'status', 'detail', 'code', 'request_id']),
        );
        for (const [code, example] of Object.entries(media.examples ?? {}) as [
          string,
          OpenAPIV3_1.ExampleObject,
        ][]) {
          expect({ op: op.operationId, code, status: example.value.status }).toEqual({
            op: op.operationId,
            code,
            status: ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status,
          });
          expect(validates(media.schema as Schema, example.value)).toEqual([]);
        }
      }
      // The validation example names what this operation takes, not another operation's field.
      const invalid = (op.responses!['400'] as OpenAPIV3_1.ResponseObject).content![PROBLEM_JSON].examples!
        .validation_failed as OpenAPIV3_1.ExampleObject | undefined;
      if (invalid) {
        const body = (op.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content[
          'application/json'
        ];
        const own = [
          'colour',
          'sort',
          ...Object.keys(((body?.schema as Schema | undefined)?.properties as Schema | undefined) ?? {}),
          ...parameters(op).map((p) => p.name),
        ];
        for (const { field } of invalid.value.errors)
          expect({ op: op.operationId, field, own: own.includes(field) }).toEqual({
            op: op.operationId,
            field,
            own: true,
          });
      }
    }
  });

  it('documents the headers: X-Request-Id everywhere, rate limits, Retry-After on 429, WWW-Authenticate on 401', () => {
    for (const op of operations) {
      for (const [status, response] of responses(op)) {
        const headers = Object.keys(response.headers ?? {});
        const where = `${op.operationId} ${status}`;
        expect({ where, headers }).toEqual({ where, headers: expect.arrayContaining(['X-Request-Id']) });
        if (status === '401')
          expect({ where, headers }).toEqual({
            where,
            headers: expect.arrayContaining(['WWW-Authenticate']),
          });
        else
          expect({ where, headers }).toEqual({
            where,
            headers: expect.arrayContaining([
              'RateLimit-Policy',
              'RateLimit',
              'X-RateLimit-Limit',
              'X-RateLimit-Remaining',
              'X-RateLimit-Reset',
            ]),
          });
        if (status === '429')
          expect({ where, headers }).toEqual({ where, headers: expect.arrayContaining(['Retry-After']) });
      }
    }
  });
});

const PROBLEM_JSON = 'application/problem+json';
