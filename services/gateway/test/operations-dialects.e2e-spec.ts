import { ApiClient, ApiResponse, TestStack } from '@app/testing';

/**
 * Every conversation operation in every dialect (docs/dialects.md):
 * English and Polish paths (the Polish messages segment percent-encoded by fetch and also sent
 * literally pre-encoded), Malay and Polish parameter names and status values, mixed freely on
 * input; the output dialect chosen by Accept-Language, else by the path; exact response shapes
 * and X-Request-Id on every response.
 */

type Dialect = 'en' | 'ms' | 'pl';
type Status = 'active' | 'pending' | 'closed';

const RENDER: Record<Status, Record<Dialect, string>> = {
  active: { en: 'active', ms: 'aktif', pl: 'aktywne' },
  pending: { en: 'pending', ms: 'belum selesai', pl: 'w toku' },
  closed: { en: 'closed', ms: 'ditutup', pl: 'zamknięte' },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** pagination.snapshot: an opaque base64url token. */
const SNAPSHOT_TOKEN = /^[A-Za-z0-9_-]+$/;
const CONVERSATION_FIELDS = [
  'closed_at',
  'created_at',
  'id',
  'last_message_at',
  'message_count',
  'metadata',
  'status',
  'subject',
  'tags',
  'updated_at',
  'visitor',
];
const MESSAGE_FIELDS = ['content', 'conversation_id', 'created_at', 'id', 'sender'];
const LEAD_FIELDS = ['conversation_id', 'created_at', 'email', 'id', 'name', 'phone'];
const PAGINATION_FIELDS = ['limit', 'next', 'offset', 'snapshot', 'total'];

/** The two collection paths and the four spellings of the messages path. */
const COLLECTIONS = ['/v1/conversations', '/v1/rozmowy'] as const;
const MESSAGE_PATHS: Array<[string, (id: string) => string]> = [
  ['en', (id) => `/v1/conversations/${id}/messages`],
  ['pl (encoded by fetch)', (id) => `/v1/rozmowy/${id}/wiadomości`],
  ['pl (pre-encoded %C5%9B)', (id) => `/v1/rozmowy/${id}/wiadomo%C5%9Bci`],
  ['pl (pre-encoded lower-case %c5%9b)', (id) => `/v1/rozmowy/${id}/wiadomo%c5%9bci`],
  ['mixed en collection + pl messages', (id) => `/v1/conversations/${id}/wiadomości`],
  ['mixed pl collection + en messages', (id) => `/v1/rozmowy/${id}/messages`],
];

/** Accept-Language header (or none) × path → the dialect the response must be rendered in. */
const NEGOTIATION_CASES: Array<{ acceptLanguage?: string; path: 'en' | 'pl'; expected: Dialect }> = [
  { path: 'en', expected: 'en' },
  { path: 'pl', expected: 'pl' },
  { acceptLanguage: 'en', path: 'pl', expected: 'en' },
  { acceptLanguage: 'ms', path: 'en', expected: 'ms' },
  { acceptLanguage: 'ms', path: 'pl', expected: 'ms' },
  { acceptLanguage: 'pl', path: 'en', expected: 'pl' },
  { acceptLanguage: 'fr, pl;q=0.8', path: 'en', expected: 'pl' },
  { acceptLanguage: 'fr, ms;q=0.8', path: 'pl', expected: 'ms' },
  { acceptLanguage: 'en;q=0.3, ms;q=0.9, pl;q=0.5', path: 'pl', expected: 'ms' },
  { acceptLanguage: 'pl-PL, en;q=0.5', path: 'en', expected: 'pl' },
  { acceptLanguage: 'ms-MY', path: 'pl', expected: 'ms' },
  { acceptLanguage: 'de, fr;q=0.5', path: 'pl', expected: 'pl' },
  { acceptLanguage: 'de', path: 'en', expected: 'en' },
  { acceptLanguage: 'pl;q=0, en;q=0.1', path: 'pl', expected: 'en' },
];
const NEGOTIATION = NEGOTIATION_CASES.map((entry) => ({ ...entry, label: entry.acceptLanguage ?? '(none)' }));

function expectRequestId(res: ApiResponse, supplied?: string): void {
  const id = res.headers.get('x-request-id');
  expect(id).toEqual(supplied ?? expect.stringMatching(/^\S{1,128}$/));
}

function expectJson(res: ApiResponse, status: number): void {
  expect({ status: res.status, body: res.status === status ? 'ok' : res.body }).toEqual({
    status,
    body: 'ok',
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  expectRequestId(res);
}

/** A conversation with exactly its documented fields (docs/conversations.md), with `expected` overriding the defaults. */
function expectConversation(body: any, expected: Record<string, unknown> = {}): void {
  expect(Object.keys(body).sort()).toEqual(CONVERSATION_FIELDS);
  expect(body).toEqual({
    id: expect.stringMatching(UUID),
    status: expect.any(String),
    visitor: null,
    subject: null,
    metadata: {},
    message_count: 0,
    last_message_at: null,
    created_at: expect.stringMatching(ISO),
    updated_at: expect.stringMatching(ISO),
    closed_at: null,
    tags: [],
    ...expected,
  });
  expect(Date.parse(body.updated_at)).toBeGreaterThanOrEqual(Date.parse(body.created_at));
}

function expectMessage(
  body: any,
  expected: { conversation_id: string; sender: string; content: string },
): void {
  expect(Object.keys(body).sort()).toEqual(MESSAGE_FIELDS);
  expect(body).toEqual({
    id: expect.stringMatching(UUID),
    created_at: expect.stringMatching(ISO),
    ...expected,
  });
}

describe('operations in every dialect', () => {
  let stack: TestStack;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await TestStack.start();
    ({ api } = await stack.createAccount('business'));
  });
  afterAll(() => stack?.close());

  const create = async (body: Record<string, unknown> = {}, path = '/v1/conversations') => {
    const res = await api.post(path, body);
    expectJson(res, 201);
    return res.body;
  };
  const withLanguage = (acceptLanguage?: string) =>
    acceptLanguage === undefined ? {} : { headers: { 'accept-language': acceptLanguage } };

  describe('create', () => {
    it.each(COLLECTIONS)(
      'POST %s with no body fields: 201, active, every field at its default',
      async (path) => {
        const res = await api.post(path, {});
        expectJson(res, 201);
        expectConversation(res.body, { status: path === '/v1/rozmowy' ? 'aktywne' : 'active' });
        expect(res.body.created_at).toBe(res.body.updated_at);
      },
    );

    it.each(COLLECTIONS)(
      'POST %s with every field: 201 echoing visitor, subject and metadata',
      async (path) => {
        const body = {
          visitor: { name: 'Zażółć Gęślą', email: 'jazn@example.com', phone: '+48 600 100 200' },
          subject: 'Pytanie o zamówienie',
          metadata: { order_id: 'A-1001', tags: ['vip'], nested: { n: 1, ok: true } },
        };
        const res = await api.post(path, body, { headers: { 'accept-language': 'en' } });
        expectJson(res, 201);
        expectConversation(res.body, { ...body, status: 'active' });
        const read = await api.get(`/v1/conversations/${res.body.id}`);
        expectJson(read, 200);
        expect(read.body).toEqual({ ...res.body, messages: [] });
      },
    );

    it('POST with a partial visitor fills the missing contact fields with null', async () => {
      const created = await create({ visitor: { email: 'only@example.com' } });
      expectConversation(created, {
        status: 'active',
        visitor: { name: null, email: 'only@example.com', phone: null },
      });
    });

    it.each(COLLECTIONS)(
      'POST %s with a first message: 201, message_count 1, the message readable with GET',
      async (path) => {
        const res = await api.post(path, {
          subject: 'With message',
          message: { content: 'Dzień dobry', sender: 'visitor' },
        });
        expectJson(res, 201);
        expectConversation(res.body, {
          status: path === '/v1/rozmowy' ? 'aktywne' : 'active',
          subject: 'With message',
          message_count: 1,
          last_message_at: expect.stringMatching(ISO),
        });
        const read = await api.get(`${path}/${res.body.id}`, withLanguage('en'));
        expectJson(read, 200);
        expect(read.body.messages).toHaveLength(1);
        expectMessage(read.body.messages[0], {
          conversation_id: res.body.id,
          sender: 'visitor',
          content: 'Dzień dobry',
        });
        expect(read.body.last_message_at).toBe(read.body.messages[0].created_at);
        expect(read.body).toEqual({ ...res.body, status: 'active', messages: read.body.messages });
      },
    );

    const PENDING_SPELLINGS = ['pending', 'belum selesai', 'w toku'];
    it.each(PENDING_SPELLINGS)('POST with status %j creates a pending conversation', async (status) => {
      for (const dialect of ['en', 'ms', 'pl'] as Dialect[]) {
        const res = await api.post('/v1/conversations', { status }, withLanguage(dialect));
        expectJson(res, 201);
        expectConversation(res.body, { status: RENDER.pending[dialect] });
      }
    });

    it.each(['active', 'aktif', 'aktywne'])(
      'POST with status %j creates an active conversation',
      async (status) => {
        const res = await api.post('/v1/rozmowy', { status });
        expectJson(res, 201);
        expectConversation(res.body, { status: 'aktywne' });
      },
    );
  });

  describe('get one', () => {
    let id: string;
    const sent: any[] = [];

    beforeAll(async () => {
      id = (await create({ subject: 'Thread', message: { content: 'm0', sender: 'visitor' } })).id;
      // One message through each spelling of the messages path, so ordering spans all of them.
      for (const [index, [, pathFor]] of MESSAGE_PATHS.entries()) {
        const sender = (['agent', 'visitor', 'bot', 'system'] as const)[index % 4];
        const res = await api.post(pathFor(id), { content: `m${index + 1}`, sender });
        expectJson(res, 201);
        sent.push(res.body);
      }
    });

    it.each(COLLECTIONS)(
      'GET %s/{id} returns the conversation with all messages, oldest first',
      async (path) => {
        const res = await api.get(`${path}/${id}`);
        expectJson(res, 200);
        expect(Object.keys(res.body).sort()).toEqual([...CONVERSATION_FIELDS, 'messages'].sort());
        const { messages, ...conversation } = res.body;
        expectConversation(conversation, {
          id,
          status: path === '/v1/rozmowy' ? 'aktywne' : 'active',
          subject: 'Thread',
          message_count: MESSAGE_PATHS.length + 1,
          last_message_at: sent[sent.length - 1].created_at,
        });
        expect(messages.map((m: any) => m.content)).toEqual(['m0', ...sent.map((m) => m.content)]);
        expect(messages.slice(1)).toEqual(sent);
        for (const message of messages) expect(Object.keys(message).sort()).toEqual(MESSAGE_FIELDS);
        const times = messages.map((m: any) => Date.parse(m.created_at));
        expect(times).toEqual([...times].sort((a, b) => a - b));
      },
    );

    it('GET with a pre-encoded or upper-case id works the same', async () => {
      const res = await api.get(`/v1/rozmowy/${id.toUpperCase()}`, withLanguage('ms'));
      expectJson(res, 200);
      expect(res.body).toMatchObject({ id, status: 'aktif', message_count: MESSAGE_PATHS.length + 1 });
    });
  });

  describe('send message', () => {
    it.each(MESSAGE_PATHS)(
      'POST %s: 201 with exactly {id, conversation_id, sender, content, created_at}',
      async (_name, pathFor) => {
        const conversation = await create();
        const res = await api.post(pathFor(conversation.id), {
          content: 'Witaj 👋 świecie',
          sender: 'agent',
        });
        expectJson(res, 201);
        expectMessage(res.body, {
          conversation_id: conversation.id,
          sender: 'agent',
          content: 'Witaj 👋 świecie',
        });
        const read = await api.get(`/v1/conversations/${conversation.id}`);
        expect(read.body).toMatchObject({
          message_count: 1,
          last_message_at: res.body.created_at,
          messages: [res.body],
        });
        expect(Date.parse(read.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(conversation.updated_at));
      },
    );

    it.each(['agent', 'visitor', 'bot', 'system'])('every sender is accepted: %s', async (sender) => {
      const conversation = await create();
      const res = await api.post(`/v1/rozmowy/${conversation.id}/wiadomości`, { content: 'x', sender });
      expectJson(res, 201);
      expectMessage(res.body, { conversation_id: conversation.id, sender, content: 'x' });
    });
  });

  describe('PATCH status', () => {
    const TARGETS: Array<[string, Status]> = [
      ['pending', 'pending'],
      ['belum selesai', 'pending'],
      ['w toku', 'pending'],
      ['closed', 'closed'],
      ['ditutup', 'closed'],
      ['zamknięte', 'closed'],
    ];
    it.each(TARGETS)(
      'PATCH {status: %j} from active, on either path, in every output dialect',
      async (text, target) => {
        for (const path of COLLECTIONS) {
          for (const dialect of ['en', 'ms', 'pl'] as Dialect[]) {
            const conversation = await create({ subject: `${text} ${dialect}` });
            const res = await api.patch(
              `${path}/${conversation.id}`,
              { status: text },
              withLanguage(dialect),
            );
            expectJson(res, 200);
            expectConversation(res.body, {
              id: conversation.id,
              subject: `${text} ${dialect}`,
              status: RENDER[target][dialect],
              created_at: conversation.created_at,
              closed_at: target === 'closed' ? expect.stringMatching(ISO) : null,
            });
            const read = await api.get(`/v1/conversations/${conversation.id}`);
            expect(read.body.status).toBe(RENDER[target].en);
          }
        }
      },
    );

    it.each(['active', 'aktif', 'aktywne'])(
      'PATCH {status: %j} reopens a closed conversation',
      async (text) => {
        const conversation = await create();
        expectJson(await api.patch(`/v1/conversations/${conversation.id}`, { status: 'closed' }), 200);
        const res = await api.patch(`/v1/rozmowy/${conversation.id}`, { status: text });
        expectJson(res, 200);
        expectConversation(res.body, {
          id: conversation.id,
          status: 'aktywne',
          created_at: conversation.created_at,
        });
      },
    );
  });

  describe('capture lead', () => {
    it.each(COLLECTIONS)('POST %s/{id}/lead: 201 with the lead; the visitor is updated', async (path) => {
      const conversation = await create({
        visitor: { name: 'Old name', email: null, phone: '+60 12 345 6789' },
      });
      const res = await api.post(`${path}/${conversation.id}/lead`, {
        name: 'Siti Nurhaliza',
        email: 'siti@example.my',
      });
      expectJson(res, 201);
      expect(Object.keys(res.body).sort()).toEqual(LEAD_FIELDS);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID),
        conversation_id: conversation.id,
        name: 'Siti Nurhaliza',
        email: 'siti@example.my',
        phone: null,
        created_at: expect.stringMatching(ISO),
      });
      const read = await api.get(`${path}/${conversation.id}`, withLanguage('en'));
      expect(read.body).toMatchObject({
        status: 'active',
        visitor: { name: 'Siti Nurhaliza', email: 'siti@example.my', phone: '+60 12 345 6789' },
      });
    });

    it('a lead with only a phone number is accepted on a conversation without a visitor', async () => {
      const conversation = await create();
      const res = await api.post(`/v1/rozmowy/${conversation.id}/lead`, { phone: '+48 22 123 45 67' });
      expectJson(res, 201);
      expect(res.body).toMatchObject({
        conversation_id: conversation.id,
        name: null,
        email: null,
        phone: '+48 22 123 45 67',
      });
      const read = await api.get(`/v1/conversations/${conversation.id}`);
      expect(read.body.visitor).toEqual({ name: null, email: null, phone: '+48 22 123 45 67' });
    });
  });

  describe('list', () => {
    let listApi: ApiClient;
    const byStatus: Record<Status, string[]> = { active: [], pending: [], closed: [] };

    beforeAll(async () => {
      ({ api: listApi } = await stack.createAccount('business'));
      for (const status of ['active', 'pending', 'closed', 'active', 'pending', 'active'] as Status[]) {
        const res = await listApi.post('/v1/conversations', {
          status: status === 'closed' ? 'active' : status,
        });
        expectJson(res, 201);
        if (status === 'closed') {
          // Checked by reading it back, so that the list tests do not hinge on the PATCH response.
          await listApi.patch(`/v1/conversations/${res.body.id}`, { status: 'closed' });
          expect((await listApi.get(`/v1/conversations/${res.body.id}`)).body.status).toBe('closed');
        }
        byStatus[status].unshift(res.body.id);
      }
    });

    const allIds = async () =>
      (await listApi.get('/v1/conversations?limit=100')).body.data.map((c: any) => c.id);

    it.each(COLLECTIONS)('GET %s: {data, pagination} with exact shapes', async (path) => {
      const res = await listApi.get(path);
      expectJson(res, 200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'pagination']);
      expect(Object.keys(res.body.pagination).sort()).toEqual(PAGINATION_FIELDS);
      expect(res.body.pagination).toEqual({
        limit: 20,
        offset: 0,
        total: 6,
        snapshot: expect.stringMatching(SNAPSHOT_TOKEN),
        next: null,
      });
      expect(res.body.data).toHaveLength(6);
      for (const conversation of res.body.data) {
        const closed = byStatus.closed.includes(conversation.id);
        expectConversation(conversation, { closed_at: closed ? expect.stringMatching(ISO) : null });
      }
      const dialect: Dialect = path === '/v1/rozmowy' ? 'pl' : 'en';
      const statuses = res.body.data.map((c: any) => c.status).sort();
      expect(statuses).toEqual(
        [
          ...byStatus.active.map(() => RENDER.active[dialect]),
          ...byStatus.pending.map(() => RENDER.pending[dialect]),
          ...byStatus.closed.map(() => RENDER.closed[dialect]),
        ].sort(),
      );
    });

    const PARAMS: Array<[string, string, number, number]> = [
      ['limit=2&offset=1', '/v1/conversations', 2, 1],
      ['had=2&mengimbangi=1', '/v1/conversations', 2, 1],
      ['limit=2&przesunięcie=1', '/v1/rozmowy', 2, 1],
      ['had=3&przesunięcie=2', '/v1/rozmowy', 3, 2],
      ['limit=4&mengimbangi=0', '/v1/rozmowy', 4, 0],
    ];
    it.each(PARAMS)('page parameters %s on %s', async (query, path, limit, offset) => {
      const all = await allIds();
      const res = await listApi.get(`${path}?${query}`);
      expectJson(res, 200);
      expect(res.body.pagination).toMatchObject({ limit, offset, total: 6 });
      expect(res.body.data.map((c: any) => c.id)).toEqual(all.slice(offset, offset + limit));
    });

    const FILTERS: Array<[string, Status]> = [
      ['status=active', 'active'],
      ['status=aktif', 'active'],
      ['stan=aktywne', 'active'],
      ['status=aktywne', 'active'],
      ['stan=aktif', 'active'],
      ['status=pending', 'pending'],
      ['status=belum%20selesai', 'pending'],
      ['status=belum+selesai', 'pending'],
      ['stan=w%20toku', 'pending'],
      ['stan=w+toku', 'pending'],
      ['status=closed', 'closed'],
      ['status=ditutup', 'closed'],
      ['stan=zamknięte', 'closed'],
      ['stan=zamkni%C4%99te', 'closed'],
    ];
    it.each(FILTERS)('filter %s', async (query, status) => {
      for (const path of COLLECTIONS) {
        for (const language of [undefined, 'en', 'ms', 'pl'] as const) {
          const res = await listApi.get(`${path}?${query}`, withLanguage(language));
          expectJson(res, 200);
          const dialect: Dialect = language ?? (path === '/v1/rozmowy' ? 'pl' : 'en');
          expect(res.body.pagination.total).toBe(byStatus[status].length);
          expect(res.body.data.map((c: any) => c.id)).toEqual(byStatus[status]);
          for (const c of res.body.data) expect(c.status).toBe(RENDER[status][dialect]);
        }
      }
    });
  });

  describe('output dialect negotiation', () => {
    let id: string;
    beforeAll(async () => {
      id = (await create({ status: 'pending' })).id;
    });

    it.each(NEGOTIATION)(
      'list, get and create: Accept-Language $label on the $path path render $expected',
      async ({ acceptLanguage, path, expected }) => {
        const base = path === 'pl' ? '/v1/rozmowy' : '/v1/conversations';
        const options = withLanguage(acceptLanguage);

        const list = await api.get(`${base}?status=pending&limit=100`, options);
        expectJson(list, 200);
        expect(list.body.data.length).toBeGreaterThan(0);
        for (const c of list.body.data) expect(c.status).toBe(RENDER.pending[expected]);

        const one = await api.get(`${base}/${id}`, options);
        expectJson(one, 200);
        expect(one.body.status).toBe(RENDER.pending[expected]);

        const created = await api.post(base, { status: 'w toku' }, options);
        expectJson(created, 201);
        expect(created.body.status).toBe(RENDER.pending[expected]);

        // JSON field names never change with the dialect.
        for (const body of [one.body, created.body, ...list.body.data]) {
          expect(
            Object.keys(body)
              .filter((k) => k !== 'messages')
              .sort(),
          ).toEqual(CONVERSATION_FIELDS);
        }
        expect(Object.keys(list.body.pagination).sort()).toEqual(PAGINATION_FIELDS);
      },
    );

    it.each(NEGOTIATION)(
      'PATCH: Accept-Language $label on the $path path renders $expected',
      async ({ acceptLanguage, path, expected }) => {
        const base = path === 'pl' ? '/v1/rozmowy' : '/v1/conversations';
        const options = withLanguage(acceptLanguage);
        const created = await create({ status: 'w toku' });
        const patched = await api.patch(`${base}/${created.id}`, { status: 'ditutup' }, options);
        expectJson(patched, 200);
        expect(patched.body.status).toBe(RENDER.closed[expected]);
        expect(Object.keys(patched.body).sort()).toEqual(CONVERSATION_FIELDS);
        // A no-op PATCH (same status, another spelling) renders the same way.
        const again = await api.patch(`${base}/${created.id}`, { status: 'zamknięte' }, options);
        expectJson(again, 200);
        expect(again.body).toEqual(patched.body);
      },
    );
  });

  describe('X-Request-Id', () => {
    it('is on every response, success or error, and a client-supplied one is echoed', async () => {
      const conversation = await create();
      const id = conversation.id;
      const calls: Array<[string, string, unknown?]> = [
        ['GET', '/v1/conversations'],
        ['GET', '/v1/rozmowy?had=1'],
        ['GET', `/v1/conversations/${id}`],
        ['GET', `/v1/rozmowy/${id}`],
        ['POST', '/v1/conversations', {}],
        ['POST', '/v1/rozmowy', {}],
        ['POST', `/v1/conversations/${id}/messages`, { content: 'a', sender: 'agent' }],
        ['POST', `/v1/rozmowy/${id}/wiadomości`, { content: 'b', sender: 'agent' }],
        ['POST', `/v1/rozmowy/${id}/wiadomo%C5%9Bci`, { content: 'c', sender: 'agent' }],
        ['PATCH', `/v1/conversations/${id}`, { status: 'aktif' }],
        ['POST', `/v1/conversations/${id}/lead`, { email: 'x@example.com' }],
        // errors
        ['GET', '/v1/conversations?limit=0'],
        ['GET', '/v1/rozmowy/00000000-0000-4000-8000-000000000000'],
        ['PATCH', `/v1/conversations/${id}`, { status: 'nope' }],
      ];
      const expectedStatus = [200, 200, 200, 200, 201, 201, 201, 201, 201, 200, 201, 400, 404, 400];
      const seen = new Set<string>();
      for (const [index, [method, path, body]] of calls.entries()) {
        const plain = await api.request(method, path, { body });
        expect({ path, status: plain.status }).toEqual({ path, status: expectedStatus[index] });
        expectRequestId(plain);
        seen.add(plain.headers.get('x-request-id')!);

        const supplied = `client-req.${index}:abc-XYZ_${Date.now()}`;
        const echoed = await api.request(method, path, { body, headers: { 'x-request-id': supplied } });
        expect({ path, status: echoed.status }).toEqual({ path, status: expectedStatus[index] });
        expectRequestId(echoed, supplied);
        if (echoed.status >= 400) expect(echoed.body.request_id).toBe(supplied);
      }
      // Generated ids are unique per request.
      expect(seen.size).toBe(calls.length);
    });
  });
});
