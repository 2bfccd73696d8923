import { randomUUID } from 'node:crypto';
import type { OpenAPIV3_1 } from 'openapi-types';
import SwaggerParser from '@apidevtools/swagger-parser';
import { DUPLICATE_KEY_MESSAGE, RESERVED_KEY_MESSAGE } from '@app/contracts';
import { ApiClient, ApiResponse, rawHttp, TestAccount, TestStack } from '@app/testing';

/**
 * A seeded fuzz run against the real stack: requests generated from the OpenAPI
 * document (every operation, valid and mutated values in every body field, parameter and path
 * id) plus hand-written hostile cases. Whatever is sent: no 5xx, every error is problem+json
 * with an X-Request-Id, every response matches the document (ApiClient checks each one), and
 * /health/live keeps answering within a second. Reproduce a failure with the same FUZZ_SEED.
 * Then, walked through the document so a new route is covered as it appears: dates at the edges
 * of the storable range (and past them) in every date parameter and body field, other spellings
 * of every enum and number (case, spaces, no-break spaces, NFD), every paged list's cursor in
 * another account or changed, repeated and reserved JSON keys in every body, HTTP framing
 * (transfer codings, Expect, Host missing or twice, CONNECT, HTTP/2.0) and HEAD on every route.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2500);
const CONCURRENCY = 8;

type Schema = Record<string, any>;
type Random = () => number;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function seeded(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'bad \udfff text',
  '😀'.repeat(50),
  '\u202eevil',
  '<script>alert(1)</script>',
  "'; DROP TABLE conversations; --",
  '../../etc/passwd',
  '%00%ff',
  '\r\nX-Injected: 1',
  'x'.repeat(10_001),
  'ż'.repeat(501),
  '{{7*7}}',
  '__proto__',
  'constructor',
];
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  -0,
  Number.MAX_SAFE_INTEGER + 2,
  [],
  {},
  [[[[[[]]]]]],
  { __proto__: { polluted: true } },
  JSON.parse('{"__proto__":{"polluted":true}}'),
];

class Fuzzer {
  constructor(private readonly random: Random) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  /** A value the schema accepts, most of the time. */
  valid(schema: Schema): unknown {
    if (schema.anyOf) return this.valid(this.pick(schema.anyOf as Schema[]));
    if (schema.enum) return this.pick(schema.enum as unknown[]);
    if (schema.examples && this.chance(0.5)) return this.pick(schema.examples as unknown[]);
    switch (schema.type) {
      case 'object': {
        const value: Record<string, unknown> = {};
        for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
          if ((schema.required ?? []).includes(name) || this.chance(0.6)) value[name] = this.valid(property);
        }
        return value;
      }
      case 'array':
        return Array.from({ length: 1 + Math.floor(this.random() * 3) }, () =>
          this.valid(schema.items ?? {}),
        );
      case 'integer':
        return Math.floor(
          (schema.minimum ?? 0) +
            this.random() * Math.min(100, (schema.maximum ?? 100) - (schema.minimum ?? 0)),
        );
      case 'number':
        return this.random() * 100;
      case 'boolean':
        return this.chance(0.5);
      case 'null':
        return null;
      default:
        if (schema.format === 'uuid') return randomUUID();
        if (schema.format === 'email') return `user${Math.floor(this.random() * 1000)}@example.com`;
        return 'fuzz ' + Math.floor(this.random() * 1e6).toString(36);
    }
  }

  /** A value the schema probably refuses: wrong type, out of bounds, hostile text. */
  invalid(schema: Schema): unknown {
    const max = schema.maxLength as number | undefined;
    const options: unknown[] = [
      this.pick(HOSTILE_VALUES),
      this.pick(HOSTILE_STRINGS),
      max !== undefined ? 'y'.repeat(max + 1) : 'z',
      typeof schema.maximum === 'number' ? schema.maximum + 1 : -100,
      typeof schema.minimum === 'number' ? schema.minimum - 1 : 'not a number',
    ];
    return this.pick(options);
  }

  /** A body for the operation: valid, with one field broken, with extra fields, or not an object at all. */
  body(schema: Schema): unknown {
    const base = this.valid(schema) as Record<string, unknown>;
    const roll = this.random();
    if (roll < 0.3) return base;
    const names = Object.keys((schema.properties ?? {}) as object);
    if (roll < 0.75 && names.length > 0) {
      const name = this.pick(names);
      return { ...base, [name]: this.invalid(schema.properties[name] as Schema) };
    }
    if (roll < 0.85)
      return { ...base, [this.pick(['extra', 'id', 'account_id', '__proto__', 'x'.repeat(300)])]: 1 };
    return this.pick(HOSTILE_VALUES);
  }

  queryString(parameters: OpenAPIV3_1.ParameterObject[]): string {
    const query = new URLSearchParams();
    for (const parameter of parameters.filter((p) => p.in === 'query')) {
      if (!parameter.required && this.chance(0.6)) continue;
      const value = this.chance(0.7)
        ? this.valid(parameter.schema as Schema)
        : this.invalid(parameter.schema as Schema);
      query.append(parameter.name, typeof value === 'string' ? value : JSON.stringify(value));
    }
    if (this.chance(0.1))
      query.append(this.pick(['sort', 'page', 'limit', 'had', 'foo[]']), this.pick(['1', 'x', '']));
    const text = query.toString();
    return text ? `?${text}` : '';
  }

  pathId(known: string[]): string {
    return this.pick([
      ...known,
      ...known,
      randomUUID(),
      'not-a-uuid',
      '%00',
      'a'.repeat(300),
      encodeURIComponent('😀'),
      '..%2F..%2Fadmin',
      `${known[0]}x`,
      known[0].toUpperCase(),
    ]);
  }
}

interface Operation {
  method: string;
  path: string;
  operation: OpenAPIV3_1.OperationObject;
}

describe(`fuzz (seed ${SEED}, ${REQUESTS} requests)`, () => {
  let stack: TestStack;
  let account: TestAccount;
  let operations: Operation[];
  const knownIds: Record<string, string[]> = { id: [], deliveryId: [] };

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    account = await stack.createAccount('business');
    const document = (await SwaggerParser.dereference(
      (await (await fetch(`${stack.url}/openapi.json`)).json()) as OpenAPIV3_1.Document,
    )) as OpenAPIV3_1.Document;
    operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      (['get', 'post', 'patch', 'delete'] as const)
        .filter((method) => item?.[method])
        .map((method) => ({ method: method.toUpperCase(), path, operation: item![method]! })),
    );
    for (let i = 0; i < 3; i++) {
      knownIds.id.push((await account.api.post('/v1/conversations', { subject: `fuzz ${i}` })).body.id);
    }
  });
  afterAll(() => stack?.close());

  it('answers every generated and hostile request without a 5xx, as documented, and stays responsive', async () => {
    const fuzz = new Fuzzer(seeded(SEED));
    const api = new ApiClient(stack.url, account.apiKey);
    const failures: string[] = [];
    let slowestHealth = 0;
    let running = true;

    const health = (async () => {
      while (running) {
        const started = performance.now();
        const res = await fetch(`${stack.url}/health/live`);
        slowestHealth = Math.max(slowestHealth, performance.now() - started);
        if (res.status !== 200) failures.push(`/health/live answered ${res.status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    const check = (label: string, res: ApiResponse) => {
      if (res.status >= 500) failures.push(`${label} -> ${res.status} ${res.text.slice(0, 200)}`);
      if (res.status >= 400 && !/^application\/problem\+json/.test(res.headers.get('content-type') ?? '')) {
        failures.push(`${label} -> ${res.status} without problem+json`);
      }
      if (!res.headers.get('x-request-id')) failures.push(`${label} -> no X-Request-Id`);
    };

    let sent = 0;
    const next = async (): Promise<void> => {
      while (sent < REQUESTS) {
        sent++;
        const { method, path, operation } = fuzz.pick(operations);
        const parameters = (operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
        const url =
          path.replace(/\{(\w+)\}/g, (_, name: string) =>
            name === 'id' && path.startsWith('/v1/webhooks')
              ? fuzz.pathId([randomUUID()])
              : fuzz.pathId(knownIds[name]?.length ? knownIds[name] : [randomUUID()]),
          ) + fuzz.queryString(parameters);
        const schema = (operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content[
          'application/json'
        ]?.schema as Schema | undefined;
        const headers: Record<string, string> = {};
        if (fuzz.chance(0.2))
          headers['accept-language'] = fuzz.pick(['ms', 'pl', 'en', 'fr', '*', 'pl;q=0', 'x'.repeat(500)]);
        if (method === 'POST' && fuzz.chance(0.2))
          headers['idempotency-key'] = fuzz.pick(['k1', 'k2', randomUUID(), 'bad key', 'x'.repeat(300)]);
        const label = `#${sent} ${method} ${url.slice(0, 150)}`;
        try {
          const res = schema
            ? await api.request(method, url, { body: fuzz.body(schema), headers })
            : await api.request(method, url, { headers });
          check(label, res);
          if (res.status === 201 && path === '/v1/conversations' && knownIds.id.length < 20)
            knownIds.id.push(res.body.id);
        } catch (error) {
          failures.push(`${label} -> ${(error as Error).message.slice(0, 300)}`);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, next));
    } finally {
      running = false;
    }

    // Hand-written hostile cases, over raw sockets (no client would send them).
    const host = new URL(stack.url).host;
    const raw = (head: string, body = '') =>
      rawHttp(
        stack.url,
        `${head}\r\nHost: ${host}\r\nAuthorization: Bearer ${account.apiKey}\r\nConnection: close\r\n\r\n${body}`,
      );
    const hostile = [
      `GET http://${host}/v1/conversations HTTP/1.1`,
      'GET /v1/conver sations HTTP/1.1',
      'BREW /v1/conversations HTTP/1.1',
      'GET /v1/conversations HTTP/1.1\r\nX-Bad: \u0007',
      'POST /v1/conversations HTTP/1.1\r\nTransfer-Encoding: gzip',
      'POST /v1/conversations HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 10\r\nContent-Length: 11',
      `GET /v1/conversations HTTP/1.1\r\nX-Big: ${'a'.repeat(17_000)}`,
      'GET /v1/conversations/%E0%A4%A HTTP/1.1',
      'PUT /v1/conversations HTTP/1.1',
      'GET /v1/conversations HTTP/1.1\r\nAuthorization: Bearer cms_x_y',
      // HTTP framing: transfer codings, Expect, Host twice, CONNECT, a version we do not speak.
      'POST /v1/conversations HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked',
      'POST /v1/conversations HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked, identity',
      'POST /v1/conversations HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: xchunked',
      'GET /v1/conversations HTTP/1.1\r\nExpect: 200-ok',
      'GET /v1/conversations HTTP/1.1\r\nHost: evil.example',
      `CONNECT ${host} HTTP/1.1`,
      'GET /v1/conversations HTTP/2.0',
    ];
    for (const head of hostile) {
      const res = await raw(head);
      const label = `raw ${head.split('\r\n')[0].slice(0, 80)}`;
      if (res.status >= 500) failures.push(`${label} -> ${res.status}`);
      if (res.status >= 400 && !/^application\/problem\+json/.test(res.header('content-type') ?? '')) {
        failures.push(`${label} -> ${res.status} without problem+json`);
      }
      if (!res.header('x-request-id')) failures.push(`${label} -> no X-Request-Id`);
    }
    // Without any Host (HTTP/1.1 requires one), so not through `raw`.
    const hostless = await rawHttp(
      stack.url,
      `GET /v1/conversations HTTP/1.1\r\nAuthorization: Bearer ${account.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    if (hostless.status !== 400 || !hostless.header('x-request-id')) {
      failures.push(`raw without Host -> ${hostless.status}`);
    }
    const nested = `{"metadata":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const deep = await raw(
      `POST /v1/conversations HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${nested.length}`,
      nested,
    );
    if (deep.status !== 400) failures.push(`5000 nested arrays -> ${deep.status}`);

    await health;
    expect(failures).toEqual([]);
    // Generous for a shared 2-core machine; a stalled event loop shows as seconds.
    expect(slowestHealth).toBeLessThan(1_000);
  }, 300_000);

  it('holds every date to the storable range, enums and numbers to their exact spelling, cursors to their account, and refuses repeated and reserved keys', async () => {
    // Driven by the document: every date, enum and number in every parameter and top-level body
    // field of every operation, every paged list's cursor; a new route is covered as it appears.
    const other = await stack.createAccount('business');
    const idsOf = async (who: TestAccount) => {
      const conversation = (await who.api.post('/v1/conversations', { subject: 'fuzz cursors' })).body.id;
      for (const content of ['one', 'two', 'three']) {
        await who.api.post(`/v1/conversations/${conversation}/messages`, { sender: 'visitor', content });
      }
      await who.api.post('/v1/conversations', {});
      const webhook = (await who.api.post('/v1/webhooks', { url: 'https://example.com/hook', events: ['*'] }))
        .body.id;
      return { conversation, webhook };
    };
    const mine = await idsOf(account);
    const theirs = await idsOf(other);
    const pathFor = (path: string, ids: { conversation: string; webhook: string }) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) =>
        name === 'deliveryId'
          ? randomUUID()
          : path.startsWith('/v1/webhooks')
            ? ids.webhook
            : ids.conversation,
      );
    const failures: string[] = [];
    const send = async (
      who: TestAccount,
      method: string,
      url: string,
      body?: { json?: unknown; raw?: string },
    ): Promise<ApiResponse> => {
      const res = await who.api.request(method, url, {
        ...(body?.raw !== undefined
          ? { rawBody: body.raw, headers: { 'content-type': 'application/json' } }
          : {}),
        ...(body?.json !== undefined ? { body: body.json } : {}),
        contract: false,
      });
      if (res.status >= 500) failures.push(`${method} ${url} ${body?.raw ?? ''} -> ${res.status}`);
      return res;
    };
    /** A 400 naming `field` (or the parameter an alias such as `had` stands for): never a page. */
    const refused = (label: string, res: ApiResponse, field: string) => {
      const errors: Array<{ field: string }> = res.body?.errors ?? [];
      if (res.status !== 400 || errors.length === 0) {
        failures.push(`${label} (${field}) -> ${res.status} ${JSON.stringify(res.body?.errors ?? res.body)}`);
      }
    };

    const isDate = (schema: Schema) =>
      schema.format === 'date-time' || /ISO 8601/.test(String(schema.description ?? ''));
    const enumOf = (schema: Schema): string[] | undefined =>
      schema.enum ?? schema.items?.enum ?? schema.anyOf?.find((s: Schema) => s.enum)?.enum;
    /** The smallest body the schema takes: required fields only, each from its example or enum. */
    const sample = (schema: Schema | undefined): unknown => {
      if (!schema) return 'fuzz';
      if (schema.examples?.length) return schema.examples[0];
      if (schema.enum) return schema.enum[0];
      if (schema.type === 'object') {
        return Object.fromEntries(
          ((schema.required ?? []) as string[]).map((name) => [
            name,
            sample(schema.properties[name] as Schema),
          ]),
        );
      }
      if (schema.type === 'array') return [sample(schema.items ?? {})];
      if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
      if (schema.type === 'boolean') return true;
      return 'fuzz';
    };
    const EDGES = {
      storable: ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z'],
      refused: [
        '0000-01-01T00:00:00Z',
        '0000-12-31T23:59:59Z',
        '294276-12-31T23:59:59Z',
        '294277-01-01T00:00:00Z',
        '-infinity',
        'infinity',
      ],
    };
    const spellings = (value: string, values: readonly string[]) =>
      [
        value.toUpperCase(),
        value[0].toUpperCase() + value.slice(1),
        ` ${value}`,
        `${value} `,
        value.includes(' ') ? value.replace(' ', '  ') : `${value}\u00a0`,
        value.includes(' ') ? value.replace(' ', '\u00a0') : `\u00a0${value}`,
        value.normalize('NFD'),
      ].filter((variant) => !values.includes(variant));
    const NUMBER_SPELLINGS = (n: number) => [` ${n}`, `${n} `, `0${n}`, `+${n}`, `${n}.0`, `${n}e0`];

    let dates = 0;
    let enums = 0;
    for (const { method, path, operation } of operations) {
      const url = pathFor(path, mine);
      const query = ((operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[]).filter(
        (p) => p.in === 'query',
      );
      const required = new URLSearchParams(
        query
          .filter((p) => p.required)
          .map((p): [string, string] => [p.name, String(sample(p.schema as Schema))]),
      );
      const withParam = (name: string, value: string) => {
        const params = new URLSearchParams(required);
        params.set(name, value);
        return `${url}?${params.toString()}`;
      };
      if (method === 'GET') {
        for (const parameter of query) {
          const schema = parameter.schema as Schema;
          if (isDate(schema)) {
            dates += 1;
            for (const value of EDGES.storable) await send(account, method, withParam(parameter.name, value));
            for (const value of EDGES.refused) {
              refused(
                `${path} ${parameter.name}=${value}`,
                await send(account, method, withParam(parameter.name, value)),
                parameter.name,
              );
            }
          }
          const values = enumOf(schema);
          if (values) {
            enums += 1;
            const spelled =
              values.find((v) => v.normalize('NFD') !== v) ??
              values.find((v) => v.includes(' ')) ??
              values[0];
            for (const variant of spellings(spelled, values)) {
              refused(
                `${path} ${parameter.name}=${JSON.stringify(variant)}`,
                await send(account, method, withParam(parameter.name, variant)),
                parameter.name,
              );
            }
          }
          if (schema.type === 'integer') {
            for (const variant of NUMBER_SPELLINGS(schema.minimum ?? 1)) {
              refused(
                `${path} ${parameter.name}=${JSON.stringify(variant)}`,
                await send(account, method, withParam(parameter.name, variant)),
                parameter.name,
              );
            }
          }
        }
      }
      const bodySchema = (operation.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content[
        'application/json'
      ]?.schema as Schema | undefined;
      if (!bodySchema || bodySchema.type !== 'object') continue;
      const base = sample(bodySchema) as Record<string, unknown>;
      // Only where the smallest body is taken can a refusal be laid to the field changed.
      if ((await send(account, method, url, { json: base })).status >= 300) continue;
      for (const [name, property] of Object.entries(
        (bodySchema.properties ?? {}) as Record<string, Schema>,
      )) {
        if (isDate(property)) {
          dates += 1;
          for (const value of EDGES.refused) {
            refused(
              `${method} ${path} ${name}=${value}`,
              await send(account, method, url, { json: { ...base, [name]: value } }),
              name,
            );
          }
        }
        const values = enumOf(property);
        if (values) {
          enums += 1;
          const spelled =
            values.find((v) => v.normalize('NFD') !== v) ?? values.find((v) => v.includes(' ')) ?? values[0];
          for (const variant of spellings(spelled, values)) {
            const value = property.type === 'array' ? [variant] : variant;
            const res = await send(account, method, url, { json: { ...base, [name]: value } });
            const fieldNamed = (res.body?.errors ?? []).some((e: { field: string }) =>
              e.field.startsWith(name),
            );
            if (res.status !== 400 || !fieldNamed)
              failures.push(`${method} ${path} ${name}=${JSON.stringify(value)} -> ${res.status}`);
          }
        }
      }
      // The same key twice, and keys that would change a prototype: a 400 naming the key.
      const key = Object.keys(base)[0] ?? Object.keys(bodySchema.properties ?? {})[0];
      if (key === undefined) continue;
      const value = JSON.stringify(base[key] ?? sample(bodySchema.properties[key] as Schema));
      const repeated = `{${JSON.stringify(key)}:${value},${JSON.stringify(key)}:${value}${
        Object.keys(base).length > 1
          ? ',' +
            JSON.stringify(base)
              .slice(1, -1)
              .split(/,(?=")/)
              .slice(1)
              .join(',')
          : ''
      }}`;
      const duplicate = await send(account, method, url, { raw: repeated });
      if (
        duplicate.status !== 400 ||
        !(duplicate.body?.errors ?? []).some(
          (e: { field: string; message: string }) => e.field === key && e.message === DUPLICATE_KEY_MESSAGE,
        )
      ) {
        failures.push(
          `${method} ${path} ${repeated} -> ${duplicate.status} ${JSON.stringify(duplicate.body?.errors)}`,
        );
      }
      for (const reserved of [
        '{"__proto__":{"polluted":true}}',
        '{"constructor":{"prototype":{"polluted":true}}}',
      ]) {
        const { metadata: _metadata, ...rest } = base;
        const raw = `${JSON.stringify(rest).slice(0, -1)}${Object.keys(rest).length ? ',' : ''}"metadata":${reserved}}`;
        const res = await send(account, method, url, { raw });
        const named = (res.body?.errors ?? []).some(
          (e: { message: string }) => e.message === RESERVED_KEY_MESSAGE,
        );
        if (res.status !== 400 || !named)
          failures.push(`${method} ${path} ${raw} -> ${res.status} ${JSON.stringify(res.body?.errors)}`);
      }
    }

    // Every cursor a paged list hands out (`after`, or the snapshot in `next`): another
    // account's, or one changed in a byte, is a 400 naming it, never a page.
    const cursorPaths: string[] = [];
    for (const { method, path, operation } of operations) {
      const names = ((operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[]).map((p) => p.name);
      if (
        method !== 'GET' ||
        !names.includes('limit') ||
        !(names.includes('after') || names.includes('snapshot'))
      )
        continue;
      const first = await send(account, method, `${pathFor(path, mine)}?limit=1`);
      const next: string | null | undefined = first.body?.pagination?.next;
      if (typeof next !== 'string') continue;
      cursorPaths.push(path);
      const [name, cursor] = next.startsWith('/')
        ? ['snapshot', new URLSearchParams(next.split('?')[1]).get('snapshot')!]
        : ['after', next];
      const flipped = Buffer.from(cursor, 'base64url');
      flipped[Math.floor(flipped.length / 2)] ^= 0x01;
      for (const [label, who, url, value] of [
        ['another account', other, pathFor(path, theirs), cursor],
        ['changed', account, pathFor(path, mine), flipped.toString('base64url')],
      ] as const) {
        const params = new URLSearchParams({ limit: '1', [name]: value });
        refused(`${path} ${label}'s ${name}`, await send(who, method, `${url}?${params.toString()}`), name);
      }
    }

    expect(failures).toEqual([]);
    // The document still has what this test walks (a rename would otherwise leave it idle).
    expect({ dates: dates > 4, enums: enums > 4 }).toEqual({ dates: true, enums: true });
    expect(cursorPaths).toEqual(
      expect.arrayContaining(['/v1/conversations', '/v1/conversations/{id}/messages', '/v1/events']),
    );
  }, 120_000);

  it("answers HEAD on every route with GET's status and headers and no body", async () => {
    const host = new URL(stack.url).host;
    const webhook = await account.api.post('/v1/webhooks', {
      url: 'https://example.com/hook',
      events: ['*'],
    });
    expect(webhook.status).toBe(201);
    const webhookId = webhook.body.id;
    const ids: Record<string, string> = { id: knownIds.id[0], deliveryId: randomUUID() };
    const paths = [
      ...operations
        .filter(({ method }) => method === 'GET')
        .map(({ path }) =>
          path.replace(/\{(\w+)\}/g, (_, name: string) =>
            name === 'id' && path.startsWith('/v1/webhooks') ? webhookId : ids[name],
          ),
        ),
      '/health/live',
      '/health/ready',
      '/metrics',
      '/openapi.json',
      '/docs',
    ];
    const mismatches: string[] = [];
    for (const path of paths) {
      const get = await fetch(`${stack.url}${path}`, {
        headers: { authorization: `Bearer ${account.apiKey}` },
        signal: AbortSignal.timeout(5_000),
      });
      const getType = get.headers.get('content-type');
      await get.body?.cancel();
      const head = await rawHttp(
        stack.url,
        // The document stores paths decoded; on the wire they are percent-encoded, as fetch does.
        `HEAD ${encodeURI(path)} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${account.apiKey}\r\nConnection: close\r\n\r\n`,
        5_000,
      ).catch((error: Error) => error);
      if (head instanceof Error) {
        mismatches.push(`HEAD ${path}: ${head.message}`);
        continue;
      }
      const seen = { status: head.status, type: head.header('content-type'), body: head.text };
      if (
        seen.status !== get.status ||
        seen.type !== getType ||
        seen.body !== '' ||
        !head.header('x-request-id')
      )
        mismatches.push(`HEAD ${path}: ${JSON.stringify(seen)}, GET was ${get.status} ${getType}`);
    }
    expect(mismatches).toEqual([]);
  });
});
