import { randomUUID } from 'node:crypto';
import { ApiClient, ApiResponse, expectProblem, newConversation, TestAccount, TestStack } from '@app/testing';

/**
 * Idempotency-Key on POST (docs/api-conventions.md): scoped to the account; the same key, path
 * and JSON body (compared after parsing) replays the first response, status and body, marked
 * `idempotent-replayed: true`, and does nothing again; another path or body is 422
 * `idempotency_key_reused`; a duplicate racing the first is 409 `idempotency_key_in_use`.
 */

/** Asserts an RFC 9457 problem produced for this very request (not a replay). */
function expectFreshProblem(
  res: ApiResponse,
  status: number,
  code: string,
  instance: string,
  detail?: string,
): void {
  expectProblem(res, status, code, instance, detail);
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

/** The second response is the first one again, byte for byte, marked as a replay. */
function expectReplayOf(replay: ApiResponse, original: ApiResponse): void {
  expect(replay.status).toBe(original.status);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.headers.get('content-type')).toBe(original.headers.get('content-type'));
  expect(replay.text).toBe(original.text);
  // A replay is still its own request: it gets its own request id.
  expect(replay.headers.get('x-request-id')).toBeTruthy();
  expect(replay.headers.get('x-request-id')).not.toBe(original.headers.get('x-request-id'));
}

const newKey = () => `test-${randomUUID()}`;
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

describe('Idempotency-Key', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack?.close());

  const conversationCount = async (accountId: string) =>
    Number(
      (
        await stack.query(
          `SELECT count(*)::int AS n FROM conversations.conversations WHERE account_id = $1`,
          [accountId],
        )
      )[0].n,
    );
  const messageRows = async (conversationId: string) =>
    Number(
      (
        await stack.query(
          `SELECT count(*)::int AS n FROM conversations.messages WHERE conversation_id = $1`,
          [conversationId],
        )
      )[0].n,
    );
  const leadRows = async (conversationId: string) =>
    Number(
      (
        await stack.query(`SELECT count(*)::int AS n FROM conversations.leads WHERE conversation_id = $1`, [
          conversationId,
        ])
      )[0].n,
    );
  const listTotal = async (api: ApiClient) => {
    const res = await api.get('/v1/conversations');
    expect(res.status).toBe(200);
    return res.body.pagination.total as number;
  };
  const createConversation = async (api: ApiClient, body: Record<string, unknown> = { subject: 'target' }) =>
    (await newConversation(api, body)).id;

  /** A body with nested objects and several keys at every level, so key order matters on the wire. */
  const richCreateBody = () => ({
    subject: 'Order question',
    status: 'pending',
    visitor: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958' },
    metadata: { zeta: 1, alpha: { y: [3, 2, 1], b: 'two', a: null }, mid: 'ü', long_key_name: true },
    message: { content: 'Hello, I need help', sender: 'visitor' },
  });
  const reorderedRichCreateBody = () => ({
    message: { sender: 'visitor', content: 'Hello, I need help' },
    metadata: { long_key_name: true, mid: 'ü', alpha: { a: null, b: 'two', y: [3, 2, 1] }, zeta: 1 },
    visitor: { phone: '+44 20 7946 0958', email: 'ada@example.com', name: 'Ada Lovelace' },
    status: 'pending',
    subject: 'Order question',
  });

  describe('create', () => {
    let account: TestAccount;
    beforeAll(async () => {
      account = await stack.createAccount();
    });

    it('replays the first 201 byte for byte and creates nothing new', async () => {
      const key = newKey();
      const first = await account.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expect(first.status).toBe(201);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(first.body).toMatchObject({ status: 'pending', subject: 'Order question', message_count: 1 });

      const second = await account.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expectReplayOf(second, first);
      const third = await account.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expectReplayOf(third, first);

      expect(await listTotal(account.api)).toBe(1);
      expect(await conversationCount(account.accountId)).toBe(1);
      expect(await messageRows(first.body.id)).toBe(1);
    });

    it('replays for the same JSON with keys reordered at every level and other whitespace', async () => {
      const key = newKey();
      const before = await conversationCount(account.accountId);
      const first = await account.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expect(first.status).toBe(201);

      const reordered = await account.api.post('/v1/conversations', reorderedRichCreateBody(), withKey(key));
      expectReplayOf(reordered, first);
      const pretty = await account.api.post('/v1/conversations', undefined, {
        ...withKey(key),
        rawBody: JSON.stringify(reorderedRichCreateBody(), null, 2),
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      });
      expectReplayOf(pretty, first);

      expect(await conversationCount(account.accountId)).toBe(before + 1);
    });

    it('treats an absent body and {} as the same request', async () => {
      const key = newKey();
      const before = await conversationCount(account.accountId);
      const first = await account.api.post('/v1/conversations', {}, withKey(key));
      expect(first.status).toBe(201);
      const bare = await account.api.request('POST', '/v1/conversations', withKey(key));
      expectReplayOf(bare, first);
      expect(await conversationCount(account.accountId)).toBe(before + 1);
    });

    it('the same key with another body is 422 idempotency_key_reused and creates nothing', async () => {
      const key = newKey();
      const first = await account.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expect(first.status).toBe(201);
      const before = await conversationCount(account.accountId);

      const variants: object[] = [
        { ...richCreateBody(), subject: 'Another subject' },
        { ...richCreateBody(), metadata: { ...richCreateBody().metadata, zeta: 2 } },
        {
          ...richCreateBody(),
          metadata: { ...richCreateBody().metadata, alpha: { y: [1, 2, 3], b: 'two', a: null } },
        },
        { ...richCreateBody(), status: undefined },
        {},
      ];
      for (const body of variants) {
        const res = await account.api.post('/v1/conversations', body, withKey(key));
        expectFreshProblem(res, 422, 'idempotency_key_reused', '/v1/conversations');
      }
      // The original is still what the key replays.
      expectReplayOf(await account.api.post('/v1/conversations', richCreateBody(), withKey(key)), first);
      expect(await conversationCount(account.accountId)).toBe(before);
    });

    it('the same key on another path is 422 idempotency_key_reused and changes nothing', async () => {
      const key = newKey();
      const first = await account.api.post('/v1/conversations', { subject: 'keyed' }, withKey(key));
      expect(first.status).toBe(201);
      const target = first.body.id as string;

      const message = await account.api.post(
        `/v1/conversations/${target}/messages`,
        { content: 'hi', sender: 'agent' },
        withKey(key),
      );
      expectFreshProblem(message, 422, 'idempotency_key_reused', `/v1/conversations/${target}/messages`);
      const lead = await account.api.post(
        `/v1/conversations/${target}/lead`,
        { email: 'a@example.com' },
        withKey(key),
      );
      expectFreshProblem(lead, 422, 'idempotency_key_reused', `/v1/conversations/${target}/lead`);

      expect(await messageRows(target)).toBe(0);
      expect(await leadRows(target)).toBe(0);
    });

    it('keys are scoped to the account: the same key and body in another account creates its own conversation', async () => {
      const key = newKey();
      const otherAccount = await stack.createAccount();
      const mine = await account.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expect(mine.status).toBe(201);

      const theirs = await otherAccount.api.post('/v1/conversations', richCreateBody(), withKey(key));
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get('idempotent-replayed')).toBeNull();
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect(await conversationCount(otherAccount.accountId)).toBe(1);

      // Each account replays its own response, and another body is only "reused" within one account.
      expectReplayOf(
        await otherAccount.api.post('/v1/conversations', richCreateBody(), withKey(key)),
        theirs,
      );
      expectReplayOf(await account.api.post('/v1/conversations', richCreateBody(), withKey(key)), mine);
      expect((await otherAccount.api.get(`/v1/conversations/${mine.body.id}`)).status).toBe(404);
      expect(await conversationCount(otherAccount.accountId)).toBe(1);
    });

    it('keys are case-sensitive and distinct keys are distinct requests', async () => {
      const base = newKey();
      const before = await conversationCount(account.accountId);
      const lower = await account.api.post('/v1/conversations', { subject: 'case' }, withKey(`${base}-abc`));
      const upper = await account.api.post('/v1/conversations', { subject: 'case' }, withKey(`${base}-ABC`));
      expect([lower.status, upper.status]).toEqual([201, 201]);
      expect(upper.headers.get('idempotent-replayed')).toBeNull();
      expect(upper.body.id).not.toBe(lower.body.id);
      expect(await conversationCount(account.accountId)).toBe(before + 2);
    });

    it('a request without a key is never replayed', async () => {
      const before = await conversationCount(account.accountId);
      const a = await account.api.post('/v1/conversations', { subject: 'no key' });
      const b = await account.api.post('/v1/conversations', { subject: 'no key' });
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(b.body.id).not.toBe(a.body.id);
      expect(await conversationCount(account.accountId)).toBe(before + 2);
    });
  });

  describe('send message', () => {
    let account: TestAccount;
    let conversationId: string;
    beforeAll(async () => {
      account = await stack.createAccount();
      conversationId = await createConversation(account.api);
    });

    it('replays the first 201 byte for byte; message_count and the stored rows do not change', async () => {
      const key = newKey();
      const path = `/v1/conversations/${conversationId}/messages`;
      const body = { content: 'Where is my order?', sender: 'visitor' };
      const first = await account.api.post(path, body, withKey(key));
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        conversation_id: conversationId,
        content: body.content,
        sender: 'visitor',
      });

      expectReplayOf(await account.api.post(path, body, withKey(key)), first);
      expectReplayOf(
        await account.api.post(path, { sender: 'visitor', content: 'Where is my order?' }, withKey(key)),
        first,
      );

      const read = await account.api.get(`/v1/conversations/${conversationId}`);
      expect(read.body.message_count).toBe(1);
      expect(read.body.messages.map((m: { id: string }) => m.id)).toEqual([first.body.id]);
      expect(await messageRows(conversationId)).toBe(1);
    });

    it('the same key and body on another conversation is 422, not a message there', async () => {
      const key = newKey();
      const other = await createConversation(account.api);
      const body = { content: 'same words', sender: 'agent' };
      const first = await account.api.post(
        `/v1/conversations/${conversationId}/messages`,
        body,
        withKey(key),
      );
      expect(first.status).toBe(201);
      const res = await account.api.post(`/v1/conversations/${other}/messages`, body, withKey(key));
      expectFreshProblem(res, 422, 'idempotency_key_reused', `/v1/conversations/${other}/messages`);
      expect(await messageRows(other)).toBe(0);
    });

    it('the same key with another message is 422', async () => {
      const key = newKey();
      const path = `/v1/conversations/${conversationId}/messages`;
      const first = await account.api.post(path, { content: 'one', sender: 'agent' }, withKey(key));
      expect(first.status).toBe(201);
      const rows = await messageRows(conversationId);
      expectFreshProblem(
        await account.api.post(path, { content: 'two', sender: 'agent' }, withKey(key)),
        422,
        'idempotency_key_reused',
        path,
      );
      expectFreshProblem(
        await account.api.post(path, { content: 'one', sender: 'bot' }, withKey(key)),
        422,
        'idempotency_key_reused',
        path,
      );
      expect(await messageRows(conversationId)).toBe(rows);
    });

    it('replays a 409 conversation_closed even after the conversation is reopened', async () => {
      const target = await createConversation(account.api);
      const path = `/v1/conversations/${target}/messages`;
      expect((await account.api.patch(`/v1/conversations/${target}`, { status: 'closed' })).status).toBe(200);

      const key = newKey();
      const body = { content: 'too late', sender: 'visitor' };
      const first = await account.api.post(path, body, withKey(key));
      expectFreshProblem(first, 409, 'conversation_closed', path);

      expect((await account.api.patch(`/v1/conversations/${target}`, { status: 'active' })).status).toBe(200);
      const replay = await account.api.post(path, body, withKey(key));
      expectReplayOf(replay, first);
      expect(await messageRows(target)).toBe(0);

      // Without the key the same message now goes through: the replay above was a real replay.
      const fresh = await account.api.post(path, body, withKey(newKey()));
      expect(fresh.status).toBe(201);
      expect(await messageRows(target)).toBe(1);
    });

    it('replays a 404 for an unknown conversation', async () => {
      const key = newKey();
      const path = `/v1/conversations/${randomUUID()}/messages`;
      const body = { content: 'anyone there?', sender: 'visitor' };
      const first = await account.api.post(path, body, withKey(key));
      expectFreshProblem(first, 404, 'not_found', path);
      expectReplayOf(await account.api.post(path, body, withKey(key)), first);
    });
  });

  describe('lead', () => {
    let account: TestAccount;
    let conversationId: string;
    beforeAll(async () => {
      account = await stack.createAccount();
      conversationId = await createConversation(account.api);
    });

    it('replays the first 201 byte for byte and stores one lead', async () => {
      const key = newKey();
      const path = `/v1/conversations/${conversationId}/lead`;
      const body = { name: 'Grace Hopper', email: 'grace@example.com', phone: '+1 555 0100' };
      const first = await account.api.post(path, body, withKey(key));
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ conversation_id: conversationId, email: 'grace@example.com' });

      expectReplayOf(await account.api.post(path, body, withKey(key)), first);
      expectReplayOf(
        await account.api.post(
          path,
          { phone: '+1 555 0100', email: 'grace@example.com', name: 'Grace Hopper' },
          withKey(key),
        ),
        first,
      );
      expect(await leadRows(conversationId)).toBe(1);

      expectFreshProblem(
        await account.api.post(path, { ...body, email: 'other@example.com' }, withKey(key)),
        422,
        'idempotency_key_reused',
        path,
      );
      expect(await leadRows(conversationId)).toBe(1);
    });
  });

  describe('errors with a key', () => {
    let account: TestAccount;
    beforeAll(async () => {
      account = await stack.createAccount();
    });

    // As with Stripe: a request refused by validation never started, so it records nothing under
    // its key; the corrected request may use the same key.
    it('a 400 validation error binds nothing: the same key then carries the corrected request', async () => {
      const key = newKey();
      const first = await account.api.post('/v1/conversations', { subject: 42 }, withKey(key));
      expectFreshProblem(first, 400, 'validation_failed', '/v1/conversations');
      expect(first.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'subject' })]),
      );
      const again = await account.api.post('/v1/conversations', { subject: 42 }, withKey(key));
      expectFreshProblem(again, 400, 'validation_failed', '/v1/conversations');
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(await conversationCount(account.accountId)).toBe(0);

      const fixed = await account.api.post('/v1/conversations', { subject: 'fixed' }, withKey(key));
      expect(fixed.status).toBe(201);
      expectReplayOf(await account.api.post('/v1/conversations', { subject: 'fixed' }, withKey(key)), fixed);
      expect(await conversationCount(account.accountId)).toBe(1);
      expect(await listTotal(account.api)).toBe(1);
    });

    const MALFORMED_KEY = {
      field: 'Idempotency-Key',
      message: 'must be one value of 1 to 255 printable ASCII characters',
    };
    it.each([
      ['256 characters', 'k'.repeat(256)],
      ['300 characters', 'k'.repeat(300)],
      ['10000 characters', 'k'.repeat(10_000)],
      ['empty', ''],
      ['an inner space', 'my key'],
      ['an inner tab', 'my\tkey'],
      ['a Latin-1 character', 'clé'],
      ['raw UTF-8 bytes', Buffer.from('ключ-идемпотентности', 'utf8').toString('latin1')],
    ])('a key with %s is 400 and creates nothing', async (_name, key) => {
      const before = await conversationCount(account.accountId);
      const res = await account.api.post('/v1/conversations', { subject: 'malformed key' }, withKey(key));
      expectFreshProblem(
        res,
        400,
        'validation_failed',
        '/v1/conversations',
        `${MALFORMED_KEY.field}: ${MALFORMED_KEY.message}`,
      );
      expect(res.body.errors).toEqual([MALFORMED_KEY]);
      expect(await conversationCount(account.accountId)).toBe(before);
    });

    it('a malformed key is refused on messages and leads too', async () => {
      const target = await createConversation(account.api);
      const key = 'k'.repeat(256);
      const messagePath = `/v1/conversations/${target}/messages`;
      expectFreshProblem(
        await account.api.post(messagePath, { content: 'x', sender: 'agent' }, withKey(key)),
        400,
        'validation_failed',
        messagePath,
      );
      const leadPath = `/v1/conversations/${target}/lead`;
      expectFreshProblem(
        await account.api.post(leadPath, { email: 'a@example.com' }, withKey(key)),
        400,
        'validation_failed',
        leadPath,
      );
      expect(await messageRows(target)).toBe(0);
      expect(await leadRows(target)).toBe(0);
    });

    it('accepts keys of 1 and exactly 255 printable ASCII characters', async () => {
      const before = await conversationCount(account.accountId);
      const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join(
        '',
      );
      const longest = (printable + printable + printable).slice(0, 255);
      for (const key of [`${Date.now() % 10}`, longest]) {
        const first = await account.api.post(
          '/v1/conversations',
          { subject: `key of ${key.length}` },
          withKey(key),
        );
        expect(first.status).toBe(201);
        expectReplayOf(
          await account.api.post('/v1/conversations', { subject: `key of ${key.length}` }, withKey(key)),
          first,
        );
      }
      expect(await conversationCount(account.accountId)).toBe(before + 2);
    });
  });

  describe('concurrency', () => {
    it.each([2, 8])(
      '%i identical requests at once with one key create exactly one conversation',
      async (parallel) => {
        const account = await stack.createAccount();
        const key = newKey();
        const body = richCreateBody();
        const responses = await Promise.all(
          Array.from({ length: parallel }, () => account.api.post('/v1/conversations', body, withKey(key))),
        );

        const created = responses.filter((res) => res.status === 201);
        const inUse = responses.filter((res) => res.status === 409);
        expect(created.length + inUse.length).toBe(parallel);
        const originals = created.filter((res) => res.headers.get('idempotent-replayed') === null);
        expect(originals).toHaveLength(1);
        for (const replay of created.filter((res) => res !== originals[0]))
          expectReplayOf(replay, originals[0]);
        for (const res of inUse) {
          expectFreshProblem(res, 409, 'idempotency_key_in_use', '/v1/conversations');
        }

        expect(await conversationCount(account.accountId)).toBe(1);
        expect(await listTotal(account.api)).toBe(1);
        expect(await messageRows(originals[0].body.id)).toBe(1);
        // Once the first has finished, the key replays it.
        expectReplayOf(await account.api.post('/v1/conversations', body, withKey(key)), originals[0]);
      },
    );

    it('concurrent messages with one key store exactly one message', async () => {
      const account = await stack.createAccount();
      const target = await createConversation(account.api);
      const key = newKey();
      const path = `/v1/conversations/${target}/messages`;
      const responses = await Promise.all(
        Array.from({ length: 8 }, () =>
          account.api.post(path, { content: 'once', sender: 'visitor' }, withKey(key)),
        ),
      );
      expect(responses.every((res) => res.status === 201 || res.status === 409)).toBe(true);
      expect(
        responses.filter((res) => res.status === 201 && res.headers.get('idempotent-replayed') === null),
      ).toHaveLength(1);
      for (const res of responses.filter((r) => r.status === 409))
        expectFreshProblem(res, 409, 'idempotency_key_in_use', path);
      expect(await messageRows(target)).toBe(1);
      expect((await account.api.get(`/v1/conversations/${target}`)).body.message_count).toBe(1);
    });
  });
});
