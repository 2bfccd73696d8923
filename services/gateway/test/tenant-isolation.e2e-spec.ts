import { ApiResponse, TestAccount, TestStack } from '@app/testing';

/**
 * Tenant isolation (docs/api-conventions.md: another account's resource is a 404, never a
 * 403): account B can neither see nor touch account A's conversations, through any path or
 * dialect, and gets exactly the answer it would get for an id that does not exist at all.
 * A's conversation is unchanged afterwards.
 */

const PROBLEM_BASE = '/problems/';
const UNKNOWN_ID = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const MALFORMED_IDS = [
  'not-a-uuid',
  '12345',
  '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4',
  'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
];

interface Operation {
  name: string;
  method: 'GET' | 'POST' | 'PATCH';
  path: (id: string) => string;
  body?: unknown;
}

/** Every operation on one conversation, through each spelling of its path. */
const OPERATIONS: Operation[] = [
  { name: 'get (en)', method: 'GET', path: (id) => `/v1/conversations/${id}` },
  { name: 'get (pl)', method: 'GET', path: (id) => `/v1/rozmowy/${id}` },
  {
    name: 'message (en)',
    method: 'POST',
    path: (id) => `/v1/conversations/${id}/messages`,
    body: { content: 'hijack', sender: 'agent' },
  },
  {
    name: 'message (pl)',
    method: 'POST',
    path: (id) => `/v1/rozmowy/${id}/wiadomości`,
    body: { content: 'hijack', sender: 'visitor' },
  },
  {
    name: 'message (pl, pre-encoded)',
    method: 'POST',
    path: (id) => `/v1/rozmowy/${id}/wiadomo%C5%9Bci`,
    body: { content: 'hijack', sender: 'bot' },
  },
  {
    name: 'close (en)',
    method: 'PATCH',
    path: (id) => `/v1/conversations/${id}`,
    body: { status: 'closed' },
  },
  { name: 'pending (pl)', method: 'PATCH', path: (id) => `/v1/rozmowy/${id}`, body: { status: 'w toku' } },
  {
    name: 'same status (ms)',
    method: 'PATCH',
    path: (id) => `/v1/conversations/${id}`,
    body: { status: 'aktif' },
  },
  {
    name: 'lead (en)',
    method: 'POST',
    path: (id) => `/v1/conversations/${id}/lead`,
    body: { name: 'Mallory', email: 'mallory@evil.example', phone: '+1 555 0100' },
  },
  {
    name: 'lead (pl)',
    method: 'POST',
    path: (id) => `/v1/rozmowy/${id}/lead`,
    body: { phone: '+48 000 000 000' },
  },
];

/** The exact 404 not_found problem document. */
function expectNotFound(res: ApiResponse, path: string): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: 404, code: 'not_found' });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  expect(res.body).toEqual({
    type: `${PROBLEM_BASE}not-found`,
    title: 'Resource not found',
    status: 404,
    detail: expect.any(String),
    code: 'not_found',
    request_id: res.headers.get('x-request-id'),
    instance: new URL(path, 'http://x').pathname,
  });
}

/** A 404 with everything that names the request (its id, its request id) taken out. */
function anonymised(res: ApiResponse, id: string): unknown {
  const { request_id, instance, detail, ...rest } = res.body;
  const headers = Object.fromEntries(
    [...res.headers.entries()].filter(
      ([name]) => !/^(x-request-id|date|content-length|ratelimit|x-ratelimit-)/.test(name),
    ),
  );
  return {
    status: res.status,
    headers,
    body: {
      ...rest,
      instance: String(instance).replace(id, '<id>'),
      detail: String(detail).replace(id, '<id>'),
    },
  };
}

describe('tenant isolation', () => {
  let stack: TestStack;
  let a: TestAccount;
  let b: TestAccount;
  let owned: string;
  /** A's conversation as A sees it, before B tries anything. */
  let snapshot: any;
  let listBefore: any;

  beforeAll(async () => {
    stack = await TestStack.start();
    a = await stack.createAccount('business', 'Tenant A');
    b = await stack.createAccount('business', 'Tenant B');
    const created = await a.api.post('/v1/conversations', {
      subject: 'Private to A',
      visitor: { name: 'Alice', email: 'alice@a.example', phone: '+44 20 0000 0000' },
      metadata: { secret: 'a-only' },
      message: { content: 'hello from A', sender: 'visitor' },
    });
    expect(created.status).toBe(201);
    owned = created.body.id;
    const second = await a.api.post(`/v1/conversations/${owned}/messages`, {
      content: 'reply from A',
      sender: 'agent',
    });
    expect(second.status).toBe(201);
    snapshot = (await a.api.get(`/v1/conversations/${owned}`)).body;
    expect(snapshot).toMatchObject({ status: 'active', message_count: 2 });
    listBefore = (await a.api.get('/v1/conversations')).body;
  });
  afterAll(() => stack?.close());

  it("B's list is empty while B has nothing, and never shows A's conversations", async () => {
    for (const path of [
      '/v1/conversations',
      '/v1/rozmowy',
      '/v1/conversations?status=active',
      '/v1/rozmowy?stan=aktywne&limit=100',
    ]) {
      const res = await b.api.get(path);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
      expect(res.body.pagination.total).toBe(0);
    }
    const own = await b.api.post('/v1/conversations', { subject: "B's own" });
    expect(own.status).toBe(201);
    const res = await b.api.get('/v1/conversations?limit=100');
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: any) => c.id)).toEqual([own.body.id]);
    expect(res.body.pagination.total).toBe(1);
    // and A does not see B's
    const fromA = await a.api.get('/v1/conversations?limit=100');
    expect(fromA.body.data.map((c: any) => c.id)).toEqual([owned]);
    expect(fromA.body.pagination.total).toBe(1);
  });

  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "B: %s on A's conversation is 404 not_found",
    async (_name, op) => {
      const path = op.path(owned);
      const res = await b.api.request(op.method, path, { body: op.body });
      expectNotFound(res, path);
      // Nothing in the answer reveals that the conversation exists.
      expect(res.text).not.toContain('Private to A');
      expect(res.text).not.toContain('alice@a.example');
    },
  );

  it.each(OPERATIONS.map((op) => [op.name, op] as const))(
    "B: %s on A's conversation is indistinguishable from an unknown id",
    async (_name, op) => {
      const foreign = await b.api.request(op.method, op.path(owned), { body: op.body });
      const unknown = await b.api.request(op.method, op.path(UNKNOWN_ID), { body: op.body });
      expectNotFound(unknown, op.path(UNKNOWN_ID));
      expect(anonymised(foreign, owned)).toEqual(anonymised(unknown, UNKNOWN_ID));
    },
  );

  it.each(OPERATIONS.flatMap((op) => MALFORMED_IDS.map((id) => [op.name, id, op] as const)))(
    '%s with malformed id %j: the same 404 not_found',
    async (_name, id, op) => {
      const res = await b.api.request(op.method, op.path(id), { body: op.body });
      expectNotFound(res, op.path(id));
      const unknown = await b.api.request(op.method, op.path(UNKNOWN_ID), { body: op.body });
      expect(anonymised(res, id)).toEqual(anonymised(unknown, UNKNOWN_ID));
    },
  );

  it("A's conversation is unchanged after everything B tried", async () => {
    // Run every operation once more right here, so this test stands on its own.
    for (const op of OPERATIONS)
      expect((await b.api.request(op.method, op.path(owned), { body: op.body })).status).toBe(404);
    const after = await a.api.get(`/v1/conversations/${owned}`);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(snapshot);
    expect(after.body).toMatchObject({
      status: 'active',
      message_count: 2,
      visitor: { name: 'Alice', email: 'alice@a.example', phone: '+44 20 0000 0000' },
      closed_at: null,
    });
    expect(after.body.messages.map((m: any) => m.content)).toEqual(['hello from A', 'reply from A']);
    const list = await a.api.get('/v1/conversations');
    expect(list.body.data).toEqual(listBefore.data);
    expect(list.body.pagination.total).toBe(1);
    for (const status of ['pending', 'closed']) {
      expect((await a.api.get(`/v1/conversations?status=${status}`)).body.pagination.total).toBe(0);
    }
  });

  it('the owner still can do all of it (the 404s above are about ownership, not the requests)', async () => {
    const path = (suffix = '') => `/v1/conversations/${owned}${suffix}`;
    expect((await a.api.post(path('/lead'), { phone: '+44 20 1111 1111' })).status).toBe(201);
    expect((await a.api.post(path('/messages'), { content: 'ok', sender: 'agent' })).status).toBe(201);
    expect((await a.api.patch(path(), { status: 'w toku' })).status).toBe(200);
    const after = await a.api.get(path());
    expect(after.body).toMatchObject({
      status: 'pending',
      message_count: 3,
      visitor: { name: 'Alice', email: 'alice@a.example', phone: '+44 20 1111 1111' },
    });
    // ...and B still cannot see it.
    expectNotFound(await b.api.get(`/v1/rozmowy/${owned}`), `/v1/rozmowy/${owned}`);
  });
});
