import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { LIST_QUERY_ALIASES } from '@app/dialects';
import { TestStack } from '@app/testing';

/**
 * The OpenAPI document (issue 6, API docs) is valid OpenAPI 3 and complete: every route the gateway
 * serves, in every dialect path, with parameters in every spelling, request and response schemas
 * with examples, every error with an example per code, and the headers every response carries.
 * That responses match it is checked by every e2e test (libs/testing/src/openapi-contract.ts).
 */

type Operation = OpenAPIV3.OperationObject & { method: string; path: string };

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
      if (method !== 'HEAD' && path.startsWith('/v1/')) routes.push(`${method} ${path}`);
    }
  }
  return routes.sort();
}

/** Property paths of a schema (dereferenced) that have neither an example nor an enum to show. */
function withoutExample(schema: OpenAPIV3.SchemaObject, at = ''): string[] {
  if (schema.example !== undefined || schema.enum) return [];
  if (schema.allOf) return schema.allOf.flatMap((part) => withoutExample(part as OpenAPIV3.SchemaObject, at));
  if (schema.type === 'array') return withoutExample(schema.items as OpenAPIV3.SchemaObject, `${at}[]`);
  if (schema.properties) {
    return Object.entries(schema.properties).flatMap(([name, property]) =>
      withoutExample(property as OpenAPIV3.SchemaObject, `${at}.${name}`),
    );
  }
  return [at || '(root)'];
}

describe('OpenAPI document', () => {
  let stack: TestStack;
  let raw: OpenAPIV3.Document;
  let operations: Operation[];

  beforeAll(async () => {
    stack = await TestStack.start();
    const response = await fetch(`${stack.url}/openapi.json`);
    expect(response.status).toBe(200);
    raw = (await response.json()) as OpenAPIV3.Document;
    const document = (await SwaggerParser.dereference(structuredClone(raw))) as OpenAPIV3.Document;
    operations = Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'put', 'delete'] as const)
        .filter((method) => item?.[method])
        .map((method) => ({ ...item![method]!, method, path })),
    );
  });
  afterAll(() => stack?.close());

  const api = () => operations.filter((op) => op.path.startsWith('/v1/'));
  const responseOf = (op: Operation, status: string) =>
    op.responses[status] as OpenAPIV3.ResponseObject | undefined;
  const parameters = (op: Operation) => (op.parameters ?? []) as OpenAPIV3.ParameterObject[];

  it('is valid OpenAPI 3 (swagger-parser: structure, $refs, parameters)', async () => {
    const validated = await SwaggerParser.validate(structuredClone(raw));
    expect(validated.info.title).toBe('Conversation Messaging API');
    expect(raw.openapi).toMatch(/^3\./);
  });

  it('is also served as YAML and rendered at /docs', async () => {
    const yaml = await fetch(`${stack.url}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(await yaml.text()).toContain('/v1/rozmowy/{id}/wiadomości:');
    const docs = await fetch(`${stack.url}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('documents exactly the routes the gateway serves, every dialect path included', () => {
    const tree = stack.gateway.app.getHttpAdapter().getInstance().printRoutes({ commonPrefix: false });
    const served = servedRoutes(tree);
    expect(served).toContain('POST /v1/rozmowy/{id}/wiadomości');
    expect(served).toContain('POST /v1/rozmowy/{id}/lead');
    expect(
      api()
        .map((op) => `${op.method.toUpperCase()} ${op.path}`)
        .sort(),
    ).toEqual(served);
  });

  it('has the Polish twin of every conversations path and the English twin of every Polish one', () => {
    const paths = new Set(api().map((op) => `${op.method} ${op.path}`));
    const twins = (key: string) => [
      key.replace('/v1/conversations', '/v1/rozmowy'),
      key.replace('/v1/rozmowy', '/v1/conversations'),
      key.replace(/\/messages$/, '/wiadomości'),
      key.replace(/\/wiadomości$/, '/messages'),
    ];
    for (const key of paths)
      for (const twin of twins(key))
        expect({ key, twin, documented: paths.has(twin) }).toEqual({ key, twin, documented: true });
  });

  it('requires the bearer API key on every operation', () => {
    expect(raw.components?.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const op of api())
      expect({ op: op.operationId, security: op.security }).toEqual({
        op: op.operationId,
        security: [{ bearer: [] }],
      });
  });

  it('documents every parameter spelling: Malay and Polish list parameters, Accept-Language', () => {
    for (const op of api()) {
      const names = parameters(op).map((p) => p.name);
      expect({ op: op.operationId, acceptLanguage: names.includes('Accept-Language') }).toEqual({
        op: op.operationId,
        acceptLanguage: true,
      });
      for (const [canonical, spellings] of Object.entries(LIST_QUERY_ALIASES)) {
        if (!names.includes(canonical)) continue;
        expect({ op: op.operationId, names }).toEqual({
          op: op.operationId,
          names: expect.arrayContaining([...spellings]),
        });
      }
    }
    const list = api().find((op) => op.method === 'get' && op.path === '/v1/rozmowy')!;
    expect(parameters(list).map((p) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'had', 'offset', 'mengimbangi', 'przesunięcie', 'status', 'stan']),
    );
  });

  it('gives every body a schema with examples, and every success response a schema with examples', () => {
    for (const op of api()) {
      const body = (op.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content['application/json']
        ?.schema;
      if (
        op.method === 'patch' ||
        (op.method === 'post' &&
          op.path.match(/conversations$|rozmowy$|messages$|wiadomości$|lead$|webhooks$/))
      ) {
        expect({ op: op.operationId, body: !!body }).toEqual({ op: op.operationId, body: true });
      }
      if (body)
        expect({ op: op.operationId, missing: withoutExample(body as OpenAPIV3.SchemaObject) }).toEqual({
          op: op.operationId,
          missing: [],
        });
      const success = Object.entries(op.responses).filter(([status]) => status.startsWith('2'));
      expect(success).toHaveLength(1);
      const [[status, response]] = success;
      const schema = (response as OpenAPIV3.ResponseObject).content?.['application/json']?.schema;
      if (status === '204') continue;
      expect({ op: op.operationId, schema: !!schema }).toEqual({ op: op.operationId, schema: true });
      expect({ op: op.operationId, missing: withoutExample(schema as OpenAPIV3.SchemaObject) }).toEqual({
        op: op.operationId,
        missing: [],
      });
    }
  });

  it('documents every error as problem details, with one example per code', () => {
    const expected = (op: Operation): string[] => {
      const statuses = ['401', '429', '500', '503', '504'];
      if (op.requestBody) statuses.push('400', '413', '415');
      if (parameters(op).some((p) => p.in === 'query' && p.name === 'limit')) statuses.push('400');
      if (parameters(op).some((p) => p.in === 'path')) statuses.push('404');
      if (parameters(op).some((p) => p.name === 'Idempotency-Key')) statuses.push('409', '422');
      return [...new Set(statuses)].sort();
    };
    for (const op of api()) {
      const errors = Object.keys(op.responses).filter((status) => Number(status) >= 400);
      expect({ op: op.operationId, errors }).toEqual({
        op: op.operationId,
        errors: expect.arrayContaining(expected(op)),
      });
      for (const status of errors) {
        const media = responseOf(op, status)!.content?.['application/problem+json'];
        const schema = media?.schema as OpenAPIV3.SchemaObject;
        expect(schema?.required).toEqual(
          expect.arrayContaining(['type', 'title', 'status', 'detail', 'code', 'request_id']),
        );
        const examples = Object.values(media?.examples ?? {}) as OpenAPIV3.ExampleObject[];
        expect(examples.length).toBeGreaterThan(0);
        for (const example of examples)
          expect({ op: op.operationId, status: String(example.value.status) }).toEqual({
            op: op.operationId,
            status,
          });
      }
    }
    const create = api().find((op) => op.method === 'post' && op.path === '/v1/conversations')!;
    expect(Object.keys(responseOf(create, '409')!.content!['application/problem+json'].examples!)).toEqual([
      'idempotency_key_in_use',
    ]);
    const send = api().find((op) => op.method === 'post' && op.path === '/v1/rozmowy/{id}/wiadomości')!;
    expect(
      Object.keys(responseOf(send, '409')!.content!['application/problem+json'].examples!).sort(),
    ).toEqual(['conversation_closed', 'idempotency_key_in_use']);
  });

  it('documents the headers: X-Request-Id everywhere, rate limits, Retry-After on 429, WWW-Authenticate on 401', () => {
    for (const op of api()) {
      for (const [status, response] of Object.entries(op.responses) as [string, OpenAPIV3.ResponseObject][]) {
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
