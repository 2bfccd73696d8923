import { ApiClient, ApiResponse, TestStack, expectProblem, expectValidation } from '@app/testing';

/**
 * Status transitions (docs/conversations.md): active<->pending,
 * active|pending -> closed (sets closed_at), closed -> active (clears it); the same status is a
 * no-op 200; anything else is 409 invalid_transition; a message into a closed conversation is 409
 * conversation_closed; create accepts active and pending only. Status values in any dialect.
 */

type Status = 'active' | 'pending' | 'closed';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SPELLINGS: Record<Status, string[]> = {
  active: ['active', 'aktif', 'aktywne'],
  pending: ['pending', 'belum selesai', 'w toku'],
  closed: ['closed', 'ditutup', 'zamknięte'],
};
function expectOk(res: ApiResponse, status = 200): void {
  expect({ status: res.status, body: res.status === status ? 'ok' : res.body }).toEqual({
    status,
    body: 'ok',
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('status transitions', () => {
  let stack: TestStack;
  let api: ApiClient;

  beforeAll(async () => {
    stack = await TestStack.start();
    ({ api } = await stack.createAccount('business'));
  });
  afterAll(() => stack?.close());

  const read = async (id: string) => {
    const res = await api.get(`/v1/conversations/${id}`);
    expectOk(res);
    return res.body;
  };

  /** A conversation in `status`, reached through the API and confirmed by reading it back. */
  const conversationIn = async (status: Status) => {
    const created = await api.post('/v1/conversations', {
      subject: `starts ${status}`,
      visitor: { name: 'Ana', email: 'ana@example.com', phone: null },
      message: { content: 'hello', sender: 'visitor' },
      ...(status === 'pending' && { status: 'pending' }),
    });
    expectOk(created, 201);
    if (status === 'closed') await api.patch(`/v1/conversations/${created.body.id}`, { status: 'closed' });
    const before = await read(created.body.id);
    expect(before.status).toBe(status);
    return before;
  };

  const ALLOWED: Array<[Status, Status]> = [
    ['active', 'pending'],
    ['pending', 'active'],
    ['active', 'closed'],
    ['pending', 'closed'],
    ['closed', 'active'],
  ];

  describe('allowed transitions', () => {
    it.each(ALLOWED)(
      '%s -> %s: 200 with the new status; closed_at set on close, cleared otherwise',
      async (from, to) => {
        const before = await conversationIn(from);
        const path = `/v1/conversations/${before.id}`;
        const res = await api.patch(path, { status: to });
        expectOk(res);
        const { messages, ...unchanged } = before;
        expect(messages).toHaveLength(1);
        expect(res.body).toEqual({
          ...unchanged,
          status: to,
          updated_at: expect.stringMatching(ISO),
          closed_at: to === 'closed' ? expect.stringMatching(ISO) : null,
        });
        expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
        if (to === 'closed') {
          expect(Date.parse(res.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
          expect(res.body.closed_at).toBe(res.body.updated_at);
        }
        // What the PATCH answered is what is stored.
        expect(await read(before.id)).toEqual({ ...res.body, messages });
      },
    );

    it.each(ALLOWED.flatMap(([from, to]) => SPELLINGS[to].slice(1).map((text) => [from, text, to] as const)))(
      '%s -> %j (another dialect in the body) on the Polish path',
      async (from, text, to) => {
        const before = await conversationIn(from);
        const res = await api.patch(
          `/v1/rozmowy/${before.id}`,
          { status: text },
          { headers: { 'accept-language': 'en' } },
        );
        expectOk(res);
        expect(res.body).toMatchObject({
          id: before.id,
          status: to,
          closed_at: to === 'closed' ? expect.stringMatching(ISO) : null,
        });
        expect((await read(before.id)).status).toBe(to);
      },
    );

    it('close, reopen, close again: a new closed_at each time, null while open', async () => {
      const conversation = await conversationIn('active');
      const path = `/v1/conversations/${conversation.id}`;
      const first = await api.patch(path, { status: 'ditutup' });
      expectOk(first);
      expect(first.body.closed_at).toMatch(ISO);
      const reopened = await api.patch(path, { status: 'aktywne' });
      expectOk(reopened);
      expect(reopened.body).toMatchObject({ status: 'active', closed_at: null });
      const pending = await api.patch(path, { status: 'belum selesai' });
      expectOk(pending);
      expect(pending.body).toMatchObject({ status: 'pending', closed_at: null });
      const second = await api.patch(path, { status: 'zamknięte' });
      expectOk(second);
      expect(second.body.status).toBe('closed');
      expect(Date.parse(second.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(first.body.closed_at));
      expect(Date.parse(second.body.closed_at)).toBeGreaterThanOrEqual(Date.parse(pending.body.updated_at));
      expect(await read(conversation.id)).toMatchObject({
        status: 'closed',
        closed_at: second.body.closed_at,
      });
    });
  });

  describe('same status', () => {
    it.each(
      (['active', 'pending', 'closed'] as Status[]).flatMap((s) =>
        SPELLINGS[s].map((text) => [s, text] as const),
      ),
    )('%s -> %j is a 200 no-op that changes nothing, updated_at included', async (status, text) => {
      const before = await conversationIn(status);
      const res = await api.patch(`/v1/conversations/${before.id}`, { status: text });
      expectOk(res);
      const { messages, ...conversation } = before;
      expect(res.body).toEqual(conversation);
      expect(await read(before.id)).toEqual(before);
    });
  });

  describe('forbidden transitions', () => {
    it.each(SPELLINGS.pending)('closed -> %j: 409 invalid_transition, nothing changes', async (text) => {
      const before = await conversationIn('closed');
      for (const path of [`/v1/conversations/${before.id}`, `/v1/rozmowy/${before.id}`]) {
        expectProblem(await api.patch(path, { status: text }), 409, 'invalid_transition', path);
      }
      expect(await read(before.id)).toEqual(before);
    });
  });

  describe('invalid status values', () => {
    const BAD: Array<[string, unknown]> = [
      ['unknown word', 'open'],
      ['empty', ''],
      ['number', 1],
      ['null', null],
      ['array', ['active']],
      ['object', { en: 'active' }],
      ['a status with a typo', 'aktiff'],
      ['two statuses', 'active,closed'],
    ];
    it.each(BAD)('PATCH with %s: 400 on "status", nothing changes', async (_name, value) => {
      const before = await conversationIn('active');
      const path = `/v1/conversations/${before.id}`;
      expectValidation(await api.patch(path, { status: value }), path, ['status']);
      expect(await read(before.id)).toEqual(before);
    });

    it('PATCH naming no field at all: 400 on the body', async () => {
      const before = await conversationIn('pending');
      const path = `/v1/rozmowy/${before.id}`;
      expectValidation(await api.patch(path, {}), path, ['body']);
      expect(await read(before.id)).toEqual(before);
    });

    it('an invalid status is a 400 even for an unknown conversation (shape before existence)', async () => {
      const path = '/v1/conversations/00000000-0000-4000-8000-000000000000';
      expectValidation(await api.patch(path, { status: 'open' }), path, ['status']);
      expectProblem(await api.patch(path, { status: 'closed' }), 404, 'not_found', path);
    });
  });

  describe('messages and closed conversations', () => {
    it('a message into a closed conversation is 409 conversation_closed, on every messages path; after reopening it is accepted', async () => {
      const before = await conversationIn('closed');
      const paths = [
        `/v1/conversations/${before.id}/messages`,
        `/v1/rozmowy/${before.id}/wiadomości`,
        `/v1/rozmowy/${before.id}/wiadomo%C5%9Bci`,
      ];
      for (const path of paths) {
        for (const sender of ['agent', 'visitor']) {
          expectProblem(
            await api.post(path, { content: 'anyone there?', sender }),
            409,
            'conversation_closed',
            path,
          );
        }
      }
      expect(await read(before.id)).toEqual(before);

      expectOk(await api.patch(`/v1/rozmowy/${before.id}`, { status: 'aktif' }));
      const sent = await api.post(paths[1], { content: 'back again', sender: 'visitor' });
      expectOk(sent, 201);
      expect(sent.body).toMatchObject({
        conversation_id: before.id,
        sender: 'visitor',
        content: 'back again',
      });
      const after = await read(before.id);
      expect(after).toMatchObject({
        status: 'active',
        closed_at: null,
        message_count: 2,
        last_message_at: sent.body.created_at,
      });
      expect(after.messages.map((m: any) => m.content)).toEqual(['hello', 'back again']);
    });

    it('a validation error on a message to a closed conversation is still a 400 (shape before state)', async () => {
      const before = await conversationIn('closed');
      const path = `/v1/conversations/${before.id}/messages`;
      expectValidation(await api.post(path, { content: '', sender: 'agent' }), path, ['content']);
    });

    it('pending conversations accept messages', async () => {
      const before = await conversationIn('pending');
      expectOk(
        await api.post(`/v1/conversations/${before.id}/messages`, { content: 'still here', sender: 'agent' }),
        201,
      );
      expect(await read(before.id)).toMatchObject({ status: 'pending', message_count: 2 });
    });
  });

  describe('status at creation', () => {
    it.each(SPELLINGS.pending)('create with status %j: 201 pending, closed_at null', async (text) => {
      const res = await api.post('/v1/conversations', { status: text });
      expectOk(res, 201);
      expect(res.body).toMatchObject({ status: 'pending', closed_at: null });
      expect((await read(res.body.id)).status).toBe('pending');
    });

    it.each([...SPELLINGS.closed, 'open', '', 'Zamknięte'])(
      'create with status %j: 400 on "status", nothing created',
      async (text) => {
        const countBefore = (await api.get('/v1/conversations?limit=1')).body.pagination.total;
        for (const path of ['/v1/conversations', '/v1/rozmowy']) {
          expectValidation(await api.post(path, { status: text }), path, ['status']);
        }
        expect((await api.get('/v1/conversations?limit=1')).body.pagination.total).toBe(countBefore);
      },
    );
  });
});
