import { randomUUID } from 'node:crypto';
import {
  ApiResponse,
  expectProblem,
  PROBLEM_BASE,
  PROBLEM_TITLES,
  TestAccount,
  TestStack,
} from '@app/testing';

/**
 * Bad input never yields a 500 and never changes anything (docs/api-conventions.md): malformed
 * or non-object JSON, wrong types, unknown fields, oversized bodies, foreign content types, hostile
 * strings in bodies, query parameters and path ids. Everything is table-driven: each table lists
 * the inputs and the one answer each must get. The last test checks that the account holds exactly
 * what the valid requests created.
 */

const ONE_MIB = 1024 * 1024;
const DETAILS: Record<string, string> = {
  invalid_json: 'The request body is not valid JSON.',
  payload_too_large: 'The request body is larger than the limit (1 MiB by default).',
  unsupported_media_type: 'Request bodies must be JSON with Content-Type: application/json.',
};

function expectProblemShape(res: ApiResponse): void {
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(res.body).toMatchObject({ status: res.status, request_id: requestId });
  expect(res.body.type).toBe(PROBLEM_BASE + String(res.body.code).replace(/_/g, '-'));
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  // Hostile input is never echoed back at length.
  expect(res.body.detail.length).toBeLessThan(1_000);
}

/** An exact problem document: every field, nothing else, with the exact detail where DETAILS has one. */
function expectExactProblem(res: ApiResponse, status: number, code: string, path: string): void {
  expectProblemShape(res);
  expectProblem(res, status, code, path, DETAILS[code]);
}

/** A 400 validation_failed listing `field` among its errors; detail summarises the errors. */
function expectValidation(res: ApiResponse, path: string, field: string | string[]): void {
  expectProblemShape(res);
  expectProblem(res, 400, 'validation_failed', path);
  const errors = res.body.errors as Array<{ field: string; message: string }>;
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) {
    expect(Object.keys(error).sort()).toEqual(['field', 'message']);
    expect(typeof error.field).toBe('string');
    expect(typeof error.message).toBe('string');
    expect(error.message.length).toBeLessThan(1_000);
  }
  const fields = errors.map((error) => error.field);
  const wanted = Array.isArray(field) ? field : [field];
  expect({ fields, matches: fields.some((f) => wanted.includes(f)) }).toEqual({ fields, matches: true });
  expect(res.body.detail).toBe(errors.map((error) => `${error.field}: ${error.message}`).join('; '));
}

type Method = 'POST' | 'PATCH';
interface Route {
  name: string;
  method: Method;
  path: (id: string) => string;
  /** A valid body for the route, to show that only the one defect matters. */
  valid: Record<string, unknown>;
}
const ROUTES: Route[] = [
  { name: 'create', method: 'POST', path: () => '/v1/conversations', valid: { subject: 'ok' } },
  { name: 'create (pl path)', method: 'POST', path: () => '/v1/rozmowy', valid: { subject: 'ok' } },
  {
    name: 'message',
    method: 'POST',
    path: (id) => `/v1/conversations/${id}/messages`,
    valid: { content: 'ok', sender: 'agent' },
  },
  {
    name: 'message (pl path)',
    method: 'POST',
    path: (id) => `/v1/rozmowy/${id}/wiadomości`,
    valid: { content: 'ok', sender: 'agent' },
  },
  { name: 'status', method: 'PATCH', path: (id) => `/v1/conversations/${id}`, valid: { status: 'active' } },
  {
    name: 'lead',
    method: 'POST',
    path: (id) => `/v1/conversations/${id}/lead`,
    valid: { email: 'lead@example.com' },
  },
];
const route = (name: string) => ROUTES.find((r) => r.name === name)!;
const cross = <T>(items: T[]) => ROUTES.flatMap((r) => items.map((item) => [r.name, item] as [string, T]));

describe('bad input', () => {
  let stack: TestStack;
  let account: TestAccount;
  /** Target of every rejected request: must end exactly as it started. */
  let untouched: string;
  let untouchedBefore: string;
  /** Target of the accepted messages and leads. */
  let scratch: string;
  let validCreates = 0;

  beforeAll(async () => {
    stack = await TestStack.start();
    account = await stack.createAccount('business');
    const created = await account.api.post('/v1/conversations', {
      subject: 'Untouched',
      visitor: { name: 'Ada', email: 'ada@example.com', phone: null },
      metadata: { order: 'A-1' },
      message: { content: 'first', sender: 'visitor' },
    });
    expect(created.status).toBe(201);
    untouched = created.body.id;
    const other = await account.api.post('/v1/conversations', { subject: 'Scratch' });
    expect(other.status).toBe(201);
    scratch = other.body.id;
    validCreates = 2;
    untouchedBefore = (await account.api.get(`/v1/conversations/${untouched}`)).text;
  });
  afterAll(() => stack?.close());

  const send = (
    r: Route,
    options: { body?: unknown; rawBody?: string | Buffer; contentType?: string | null },
  ) => {
    const headers: Record<string, string> = {};
    if (options.contentType) headers['content-type'] = options.contentType;
    else if (
      options.contentType === undefined &&
      (options.rawBody !== undefined || options.body !== undefined)
    ) {
      headers['content-type'] = 'application/json';
    }
    const rawBody =
      options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    return account.api.request(r.method, r.path(untouched), { rawBody, headers });
  };

  describe('malformed JSON is 400 invalid_json', () => {
    const MALFORMED = [
      '{',
      '{"subject":',
      '{"a":}',
      "{'subject':'x'}",
      '{"subject":"x",}',
      '{"subject":"x"} trailing',
      '{}{}',
      'nul',
      'tru',
      '{"subject":"\\x"}',
      '{"n":01}',
      '{"n":NaN}',
      '{subject:"x"}',
      '\u0000',
      '   ',
    ];
    it.each(cross(MALFORMED))('%s: %j', async (name, raw) => {
      const r = route(name);
      expectExactProblem(await send(r, { rawBody: raw }), 400, 'invalid_json', r.path(untouched));
    });
  });

  describe('JSON that is not an object is 400 validation_failed on "body"', () => {
    const NOT_OBJECTS = [
      '[]',
      '[{"subject":"x"}]',
      '"str"',
      '""',
      '1',
      '-0.5',
      '1e400',
      'null',
      'true',
      'false',
    ];
    it.each(cross(NOT_OBJECTS))('%s: %s', async (name, raw) => {
      const r = route(name);
      const res = await send(r, { rawBody: raw });
      expectValidation(res, r.path(untouched), 'body');
      expect(res.body.errors).toEqual([{ field: 'body', message: 'must be a JSON object' }]);
    });
  });

  describe('JSON keys: one given twice in an object, or a reserved one, is a 400 naming it', () => {
    const DUPLICATE = 'is given more than once in the same object';
    const RESERVED =
      'is a reserved key (it would change the prototype of JavaScript objects); use another name';
    const KEYS: Array<[string, string, string]> = [
      ['{"status":"closed","status":"active","subject":"x"}', 'status', DUPLICATE],
      ['{"subject":"a","\\u0073ubject":"b"}', 'subject', DUPLICATE],
      ['{"metadata":{"a":{"b":1,"b":2}}}', 'metadata.a.b', DUPLICATE],
      ['{"metadata":{"list":[{"k":1},{"k":1,"k":2}]}}', 'metadata.list.1.k', DUPLICATE],
      ['{"metadata":{"__proto__":{"admin":true}}}', 'metadata.__proto__', RESERVED],
      ['{"__proto__":{"admin":true}}', '__proto__', RESERVED],
      ['{"metadata":{"\\u005f_proto__":1}}', 'metadata.__proto__', RESERVED],
      [
        '{"metadata":{"constructor":{"prototype":{"admin":true}}}}',
        'metadata.constructor.prototype',
        RESERVED,
      ],
    ];
    it.each(cross(KEYS))('%s: %j', async (name, [raw, field, message]) => {
      const r = route(name);
      const res = await send(r, { rawBody: raw });
      expectValidation(res, r.path(untouched), field);
      expect(res.body.errors).toEqual([{ field, message }]);
    });
  });

  describe('body size: 1 MiB is read, one byte more is 413 payload_too_large', () => {
    /** `{"pad":"xxx…"}` of exactly `bytes` bytes. */
    const padded = (bytes: number) => `{"pad":"${'x'.repeat(bytes - 10)}"}`;
    it('the padding helper is exact', () => {
      expect(Buffer.byteLength(padded(ONE_MIB))).toBe(ONE_MIB);
    });
    it.each(cross([ONE_MIB + 1, ONE_MIB + 1024, 2 * ONE_MIB, 5 * ONE_MIB]))(
      '%s: %i bytes is 413',
      async (name, bytes) => {
        const r = route(name);
        expectExactProblem(
          await send(r, { rawBody: padded(bytes) }),
          413,
          'payload_too_large',
          r.path(untouched),
        );
      },
    );
    it.each(ROUTES.map((r) => r.name))(
      '%s: an oversized body that is not even JSON is 413 too',
      async (name) => {
        const r = route(name);
        expectExactProblem(
          await send(r, { rawBody: '{'.repeat(ONE_MIB + 1) }),
          413,
          'payload_too_large',
          r.path(untouched),
        );
      },
    );
    it.each(ROUTES.map((r) => r.name))(
      '%s: exactly 1 MiB is parsed (then refused for its unknown field)',
      async (name) => {
        const r = route(name);
        expectValidation(await send(r, { rawBody: padded(ONE_MIB) }), r.path(untouched), 'pad');
      },
    );
  });

  describe('non-JSON content types are 415 unsupported_media_type', () => {
    const TYPES = [
      'text/plain',
      'text/plain; charset=utf-8',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/xml',
      'application/octet-stream',
      'application/jsonx',
      'image/png',
    ];
    it.each(cross(TYPES))('%s: %s with a valid JSON body', async (name, type) => {
      const r = route(name);
      expectExactProblem(
        await send(r, { rawBody: JSON.stringify(r.valid), contentType: type }),
        415,
        'unsupported_media_type',
        r.path(untouched),
      );
    });
    it.each(ROUTES.map((r) => r.name))('%s: a body without any Content-Type', async (name) => {
      const r = route(name);
      const res = await account.api.request(r.method, r.path(untouched), {
        rawBody: Buffer.from(JSON.stringify(r.valid)),
      });
      expectExactProblem(res, 415, 'unsupported_media_type', r.path(untouched));
    });
    it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8'])(
      'control: %s is JSON',
      async (type) => {
        const res = await send(route('create'), { rawBody: '{"subject":"typed"}', contentType: type });
        expect(res.status).toBe(201);
        validCreates++;
      },
    );
  });

  describe('wrong types and values in every field are 400 naming the field', () => {
    type FieldCase = [field: string | string[], body: Record<string, unknown>];
    const wrong = (
      field: string,
      values: unknown[],
      build: (v: unknown) => Record<string, unknown>,
    ): FieldCase[] => values.map((v) => [field, build(v)]);
    const NOT_STRINGS = [1, 0, -1.5, true, false, {}, { a: 1 }, [], ['x']];

    const CREATE: FieldCase[] = [
      ...wrong('visitor', ['x', '', 1, true, [], [{ name: 'x' }]], (v) => ({ visitor: v })),
      ...wrong('visitor.name', NOT_STRINGS, (v) => ({ visitor: { name: v } })),
      ...wrong('visitor.email', [...NOT_STRINGS, 'not-an-email', 'a@', '@b.com', 'a b@c.com', ''], (v) => ({
        visitor: { email: v },
      })),
      ...wrong('visitor.phone', NOT_STRINGS, (v) => ({ visitor: { phone: v } })),
      ...wrong('subject', NOT_STRINGS, (v) => ({ subject: v })),
      ...wrong('metadata', ['x', '', 1, true, false, [], [1, 2], null], (v) => ({ metadata: v })),
      ...wrong(
        'status',
        [...NOT_STRINGS, null, '', 'closed', 'ditutup', 'zamknięte', 'bogus', 'ACTIVE!'],
        (v) => ({ status: v }),
      ),
      ...wrong('message', ['x', '', 1, true, [], null], (v) => ({ message: v })),
      ...wrong('message.content', [...NOT_STRINGS, null, ''], (v) => ({
        message: { content: v, sender: 'agent' },
      })),
      ['message.content', { message: { sender: 'agent' } }],
      ...wrong('message.sender', [...NOT_STRINGS, null, '', 'alien', 'Agent', 'agent '], (v) => ({
        message: { content: 'hi', sender: v },
      })),
      ['message.sender', { message: { content: 'hi' } }],
    ];
    const MESSAGE: FieldCase[] = [
      ...wrong('content', [...NOT_STRINGS, null, ''], (v) => ({ content: v, sender: 'agent' })),
      ['content', { sender: 'agent' }],
      ...wrong('sender', [...NOT_STRINGS, null, '', 'alien', 'AGENT'], (v) => ({ content: 'hi', sender: v })),
      ['sender', { content: 'hi' }],
      [['content', 'sender'], {}],
    ];
    const STATUS: FieldCase[] = [
      ...wrong('status', [...NOT_STRINGS, null, '', 'bogus', 'open', 'active '.repeat(10)], (v) => ({
        status: v,
      })),
      ['body', {}],
    ];
    const LEAD: FieldCase[] = [
      ...wrong('name', NOT_STRINGS, (v) => ({ name: v, email: 'lead@example.com' })),
      ...wrong(
        'email',
        [...NOT_STRINGS, 'bad', 'a@', '@b.com', 'a@@b.com', 'a b@c.com', 'ada@example', ''],
        (v) => ({ email: v }),
      ),
      ...wrong('phone', NOT_STRINGS, (v) => ({ phone: v, email: 'lead@example.com' })),
      // Neither email nor phone.
      [['email', 'phone', 'body'], {}],
      [['email', 'phone', 'body'], { name: 'No Contact' }],
      [['email', 'phone', 'body'], { email: null, phone: null }],
      [['email', 'phone', 'body'], { name: 'Blank', email: null, phone: '' }],
    ];
    const TABLE: Array<[string, FieldCase]> = [
      ...CREATE.map((c) => ['create', c] as [string, FieldCase]),
      ...MESSAGE.map((c) => ['message', c] as [string, FieldCase]),
      ...STATUS.map((c) => ['status', c] as [string, FieldCase]),
      ...LEAD.map((c) => ['lead', c] as [string, FieldCase]),
    ];
    it.each(TABLE)('%s: %j', async (name, [field, body]) => {
      const r = route(name);
      expectValidation(await send(r, { body }), r.path(untouched), field);
    });
  });

  describe('unknown fields are 400 naming them', () => {
    const TABLE: Array<[string, string, Record<string, unknown>]> = [
      ['create', 'foo', { foo: 1 }],
      ['create', 'Subject', { Subject: 'x' }],
      ['create', 'id', { id: randomUUID(), subject: 'x' }],
      ['create', 'account_id', { account_id: randomUUID() }],
      ['create', 'message_count', { message_count: 5 }],
      ['create', 'visitor.foo', { visitor: { name: 'x', foo: 1 } }],
      ['create', 'message.foo', { message: { content: 'x', sender: 'agent', foo: 1 } }],
      ['message', 'foo', { content: 'x', sender: 'agent', foo: 1 }],
      ['message', 'conversation_id', { content: 'x', sender: 'agent', conversation_id: randomUUID() }],
      ['status', 'foo', { status: 'active', foo: 1 }],
      ['status', 'closed_at', { status: 'active', closed_at: null }],
      ['lead', 'foo', { email: 'lead@example.com', foo: 1 }],
      ['lead', 'conversation_id', { email: 'lead@example.com', conversation_id: randomUUID() }],
    ];
    it.each(TABLE)('%s: %s', async (name, field, body) => {
      const r = route(name);
      const res = await send(r, { body });
      expectValidation(res, r.path(untouched), field);
    });
  });

  describe('hostile strings in every string field', () => {
    interface Slot {
      route: string;
      field: string;
      body: (value: string) => Record<string, unknown>;
      /** Free text keeps any character Postgres can store; enums and emails refuse anything odd. */
      freeText: boolean;
      /** Where the value shows up in the 201 response. */
      read?: (response: any) => unknown;
      /** Longest accepted value (for metadata: the whole object is at most 16 KiB of JSON). */
      maxLength: number;
    }
    const SLOTS: Slot[] = [
      {
        route: 'create',
        field: 'subject',
        body: (v) => ({ subject: v }),
        freeText: true,
        read: (r) => r.subject,
        maxLength: 500,
      },
      {
        route: 'create',
        field: 'visitor.name',
        body: (v) => ({ visitor: { name: v } }),
        freeText: true,
        read: (r) => r.visitor.name,
        maxLength: 200,
      },
      {
        route: 'create',
        field: 'visitor.email',
        body: (v) => ({ visitor: { email: v } }),
        freeText: false,
        maxLength: 320,
      },
      {
        route: 'create',
        field: 'visitor.phone',
        body: (v) => ({ visitor: { phone: v } }),
        freeText: true,
        read: (r) => r.visitor.phone,
        maxLength: 50,
      },
      { route: 'create', field: 'status', body: (v) => ({ status: v }), freeText: false, maxLength: 50 },
      {
        route: 'create',
        field: 'message.content',
        body: (v) => ({ message: { content: v, sender: 'visitor' } }),
        freeText: true,
        maxLength: 10_000,
      },
      {
        route: 'create',
        field: 'message.sender',
        body: (v) => ({ message: { content: 'hi', sender: v } }),
        freeText: false,
        maxLength: 10,
      },
      {
        route: 'create',
        field: 'metadata',
        body: (v) => ({ metadata: { note: v } }),
        freeText: true,
        read: (r) => r.metadata.note,
        maxLength: 16_384,
      },
      {
        route: 'create',
        field: 'metadata',
        body: (v) => ({ metadata: { [v]: 1 } }),
        freeText: true,
        read: (r) => Object.keys(r.metadata)[0],
        maxLength: 16_384,
      },
      {
        route: 'message',
        field: 'content',
        body: (v) => ({ content: v, sender: 'agent' }),
        freeText: true,
        read: (r) => r.content,
        maxLength: 10_000,
      },
      {
        route: 'message',
        field: 'sender',
        body: (v) => ({ content: 'hi', sender: v }),
        freeText: false,
        maxLength: 10,
      },
      { route: 'status', field: 'status', body: (v) => ({ status: v }), freeText: false, maxLength: 50 },
      {
        route: 'lead',
        field: 'name',
        body: (v) => ({ name: v, email: 'lead@example.com' }),
        freeText: true,
        read: (r) => r.name,
        maxLength: 200,
      },
      { route: 'lead', field: 'email', body: (v) => ({ email: v }), freeText: false, maxLength: 320 },
      {
        route: 'lead',
        field: 'phone',
        body: (v) => ({ phone: v }),
        freeText: true,
        read: (r) => r.phone,
        maxLength: 50,
      },
    ];
    const slotName = (s: Slot) => `${s.route} ${s.field}`;

    /** Refused everywhere: Postgres cannot store them, or they are far too long. */
    const ALWAYS_BAD: Array<[string, (s: Slot) => string]> = [
      ['NUL inside', () => 'a\u0000b'],
      ['NUL alone', () => '\u0000'],
      ['unpaired high surrogate', () => 'a\ud800b'],
      ['unpaired high surrogate at the end', () => 'abc\ud800'],
      ['unpaired low surrogate', () => 'x\udc00y'],
      ['reversed surrogate pair', () => '\ude00\ud83d'],
      ['one character over the limit', (s) => 'x'.repeat(s.maxLength + 1)],
      ['10001 characters', (s) => 'x'.repeat(Math.max(10_001, s.maxLength + 1))],
      ['1 MB', () => 'x'.repeat(1_000_000)],
    ];
    it.each(SLOTS.flatMap((s) => ALWAYS_BAD.map(([label, make]) => [slotName(s), label, s, make] as const)))(
      '%s: %s is 400',
      async (_slot, _label, slot, make) => {
        const r = route(slot.route);
        expectValidation(await send(r, { body: slot.body(make(slot)) }), r.path(untouched), slot.field);
      },
    );

    const CONTROL = ['a\u0001b', 'a\u001fb', 'a\u007fb', '\u0001\u001f\u007f', 'tab\tnew\nline\rreturn'];
    const freeSlots = SLOTS.filter((s) => s.freeText);
    const strictSlots = SLOTS.filter((s) => !s.freeText);

    it.each(strictSlots.flatMap((s) => CONTROL.map((v) => [slotName(s), v, s] as const)))(
      '%s: control characters %j are 400',
      async (_slot, value, slot) => {
        const r = route(slot.route);
        expectValidation(await send(r, { body: slot.body(value) }), r.path(untouched), slot.field);
      },
    );

    // Free text may carry any character Postgres can store: it is kept exactly, never mangled.
    it.each(
      freeSlots.flatMap((s) =>
        [...CONTROL, '😀 astral', 'x'.repeat(s.maxLength === 16_384 ? 1_000 : s.maxLength)].map(
          (v) => [slotName(s), v, s] as const,
        ),
      ),
    )('%s: %j is stored and read back exactly', async (_slot, value, slot) => {
      const r = route(slot.route);
      const res = await account.api.request(r.method, r.path(scratch), { body: slot.body(value) });
      expect(res.status).toBe(201);
      if (slot.route === 'create') validCreates++;
      if (slot.read) expect(slot.read(res.body)).toBe(value);
      if (slot.route === 'create') {
        const read = await account.api.get(`/v1/conversations/${res.body.id}`);
        expect(read.status).toBe(200);
        if (slot.read) expect(slot.read(read.body)).toBe(value);
        if (slot.field === 'message.content')
          expect(read.body.messages.map((m: { content: string }) => m.content)).toEqual([value]);
      }
      if (slot.route === 'message') {
        const read = await account.api.get(`/v1/conversations/${scratch}`);
        expect(read.body.messages.find((m: { id: string }) => m.id === res.body.id)?.content).toBe(value);
      }
    });
  });

  describe('message length is 1..10000 characters', () => {
    it.each([
      ['10000 ASCII characters', 'a'.repeat(10_000)],
      ['1 character', 'a'],
      ['10000 non-ASCII BMP characters', 'ż'.repeat(10_000)],
      // 10000 characters as JSON Schema (OpenAPI maxLength) counts them: code points, not UTF-16 units.
      ['10000 astral characters', '😀'.repeat(10_000)],
    ])('%s are accepted, on send and at create', async (_label, content) => {
      const sent = await account.api.post(`/v1/conversations/${scratch}/messages`, {
        content,
        sender: 'agent',
      });
      expect(sent.status).toBe(201);
      expect(sent.body.content).toBe(content);
      const created = await account.api.post('/v1/conversations', {
        message: { content, sender: 'visitor' },
      });
      expect(created.status).toBe(201);
      validCreates++;
      expect(created.body.message_count).toBe(1);
    });

    it.each([
      ['10001 ASCII characters', 'a'.repeat(10_001)],
      ['10001 astral characters', '😀'.repeat(10_001)],
      ['an empty string', ''],
    ])('%s are refused, on send and at create', async (_label, content) => {
      const path = `/v1/conversations/${untouched}/messages`;
      expectValidation(await account.api.post(path, { content, sender: 'agent' }), path, 'content');
      expectValidation(
        await account.api.post('/v1/conversations', { message: { content, sender: 'visitor' } }),
        '/v1/conversations',
        'message.content',
      );
    });
  });

  describe('leads', () => {
    it.each([
      ['email only', { email: 'only@example.com' }],
      ['phone only', { phone: '+48 600 000 000' }],
      ['both, with a name', { name: 'Both', email: 'both@example.com', phone: '+60 3-0000 0000' }],
    ])('a lead with %s is accepted (control)', async (_label, body) => {
      const res = await account.api.post(`/v1/conversations/${scratch}/lead`, body);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject(body);
    });
  });

  describe('query parameters of the list', () => {
    const QUERY_400: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1e2', 'limit'],
      ['limit=', 'limit'],
      ['limit=%00', 'limit'],
      ['limit=1%00', 'limit'],
      ['limit=%01', 'limit'],
      ['limit=%7F', 'limit'],
      ['limit=%E0%A4%A', 'limit'],
      ['limit=%ED%A0%80', 'limit'],
      [`limit=${'9'.repeat(30)}`, 'limit'],
      [`limit=${'x'.repeat(10_001)}`, 'limit'],
      ['had=0', 'limit'],
      ['limit=5&had=10', 'limit'],
      ['limit=5&limit=6', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['offset=%00', 'offset'],
      [`offset=${'9'.repeat(30)}`, 'offset'],
      [`mengimbangi=${'x'.repeat(10_001)}`, 'offset'],
      ['status=bogus', 'status'],
      ['status=', 'status'],
      ['status=%00', 'status'],
      ['status=active%00', 'status'],
      ['status=%01active', 'status'],
      ['status=%ED%A0%80', 'status'],
      [`status=${'x'.repeat(10_001)}`, 'status'],
      ['stan=bogus', 'status'],
      ['status=active&stan=zamkni%C4%99te', 'status'],
      ['snapshot=yesterday', 'snapshot'],
      ['snapshot=', 'snapshot'],
      ['snapshot=%00', 'snapshot'],
      ['snapshot=2024-13-45T00:00:00Z', 'snapshot'],
      ['snapshot=2024-01-01T00:00:00Z%00', 'snapshot'],
      [`snapshot=${'x'.repeat(10_001)}`, 'snapshot'],
    ];
    it.each(QUERY_400)('?%s is 400 on %s', async (query, field) => {
      for (const collection of ['/v1/conversations', '/v1/rozmowy']) {
        const res = await account.api.get(`${collection}?${query}`);
        expectValidation(res, collection, field);
      }
    });

    // A parameter the endpoint does not know is refused by name (docs/api-conventions.md): a
    // client must never believe a filter applied that did not.
    const UNKNOWN: Array<[string, string]> = [
      ['foo=%00', 'foo'],
      ['foo=%E0%A4%A', 'foo'],
      ['foo=%ED%A0%80', 'foo'],
      [`foo=${'x'.repeat(10_001)}`, 'foo'],
      [`${'k'.repeat(10_001)}=1`, `${'k'.repeat(64)}…`],
      ['%00=1', '\u0000'],
      ['status[]=active', 'status[]'],
      ['sort=newest', 'sort'],
      ['createdAfter=2026-01-01T00:00:00Z', 'createdAfter'],
    ];
    it.each(UNKNOWN)('unknown parameter %s is a 400 naming it', async (query, field) => {
      const res = await account.api.get(`/v1/conversations?limit=100&${query}`);
      expectValidation(res, '/v1/conversations', field);
      expect(res.body.errors).toContainEqual({ field, message: 'is not a parameter of this endpoint' });
    });

    // Node's HTTP parser answers these before any route (outside the document), as problem details.
    it('a 1 MB query string is refused before routing: 431 headers_too_large, without a 5xx', async () => {
      const res = await account.api.get(`/v1/conversations?foo=${'x'.repeat(1_000_000)}`, {
        contract: false,
      });
      expect({ status: res.status, code: res.body?.code }).toEqual({
        status: 431,
        code: 'headers_too_large',
      });
      expectProblemShape(res);
    });
  });

  describe('path ids', () => {
    const ID_ROUTES: Array<[string, string, (id: string) => string, unknown]> = [
      ['GET one', 'GET', (id) => `/v1/conversations/${id}`, undefined],
      ['PATCH', 'PATCH', (id) => `/v1/conversations/${id}`, { status: 'closed' }],
      ['send message', 'POST', (id) => `/v1/conversations/${id}/messages`, { content: 'x', sender: 'agent' }],
      [
        'send message (pl)',
        'POST',
        (id) => `/v1/rozmowy/${id}/wiadomości`,
        { content: 'x', sender: 'agent' },
      ],
      ['lead', 'POST', (id) => `/v1/conversations/${id}/lead`, { email: 'lead@example.com' }],
    ];
    // Any id that names no conversation of this account is a 404 not_found, whatever it looks like.
    const NOT_FOUND_IDS: Array<[string, () => string]> = [
      ['an unknown UUID', () => randomUUID()],
      ['a non-UUID', () => 'not-a-uuid'],
      ['a UUID with a suffix', () => `${untouched}x`],
      ['a UUID with %00', () => `${untouched}%00`],
      ['%00 alone', () => '%00'],
      ['an id with %00 inside', () => 'ab%00cd'],
      ['an id with control characters', () => '%01%1F%7F'],
      ['an encoded slash traversal', () => '..%2F..%2Fadmin'],
      ['a 201-character id', () => 'a'.repeat(201)],
      ['a 10001-character id', () => 'a'.repeat(10_001)],
    ];
    it.each(
      ID_ROUTES.flatMap(([name, method, path, body]) =>
        NOT_FOUND_IDS.map(([label, id]) => [name, label, method, path, body, id] as const),
      ),
    )('%s with %s is 404 not_found', async (_name, _label, method, path, body, id) => {
      const p = path(id());
      const res = await account.api.request(method, p, { body });
      expectExactProblem(res, 404, 'not_found', p);
    });

    // Undecodable percent-encoding cannot name a resource: a problem document, never a 5xx or a bare framework error.
    const UNDECODABLE: Array<[string, string]> = [
      ['truncated UTF-8', '%E0%A4%A'],
      ['a lone %FF byte', '%FF'],
      ['an encoded lone surrogate', '%ED%A0%80'],
      ['a bare %', '%'],
      ['%zz', '%zz'],
      ['300 characters then truncated UTF-8', `${'a'.repeat(300)}%E0%A4%A`],
    ];
    it.each(
      ID_ROUTES.flatMap(([name, method, path, body]) =>
        UNDECODABLE.map(([label, id]) => [name, label, id, method, path, body] as const),
      ),
    )('%s with %s in the id is a 400 or 404 problem', async (_name, _label, id, method, path, body) => {
      const res = await account.api.request(method, path(id), { body });
      expect([400, 404]).toContain(res.status);
      expectProblemShape(res);
      expect(PROBLEM_TITLES[res.body.code]).toBe(res.body.title);
      // `instance` is the request target as sent: fetch percent-encodes the Polish `ś`.
      expect(res.body.instance).toBe(path(id).split('?')[0].replace('ś', '%C5%9B'));
    });

    it('a 1 MB id is refused before routing: 431 headers_too_large, without a 5xx', async () => {
      const res = await account.api.get(`/v1/conversations/${'a'.repeat(1_000_000)}`, { contract: false });
      expect({ status: res.status, code: res.body?.code }).toEqual({
        status: 431,
        code: 'headers_too_large',
      });
      expectProblemShape(res);
    });
  });

  it('after all of it, the account holds exactly what the valid requests created', async () => {
    const list = await account.api.get('/v1/conversations?limit=1');
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(validCreates);
    const [{ n }] = await stack.query(
      `SELECT count(*)::int AS n FROM conversations.conversations WHERE account_id = $1`,
      [account.accountId],
    );
    expect(n).toBe(validCreates);

    // The conversation every rejected request aimed at is byte for byte what it was.
    expect((await account.api.get(`/v1/conversations/${untouched}`)).text).toBe(untouchedBefore);
    const [{ messages }] = await stack.query(
      `SELECT count(*)::int AS messages FROM conversations.messages WHERE conversation_id = $1`,
      [untouched],
    );
    expect(messages).toBe(1);
    const [{ leads }] = await stack.query(
      `SELECT count(*)::int AS leads FROM conversations.leads WHERE conversation_id = $1`,
      [untouched],
    );
    expect(leads).toBe(0);
  });
});
