import { Client } from 'pg';
import { ApiClient, TestAccount, TestStack } from '@app/testing';
import { createLogger } from '@app/observability';
import { startGateway } from '../src/gateway-service';

/**
 * A conversation's messages in pages (docs/conversations.md): `limit`
 * (1..100, default 20), an opaque `after` cursor (`pagination.next`), oldest first or with
 * order=desc newest first; every message once, none skipped, in both path renderings.
 */

interface Page {
  data: Array<{ id: string; content: string }>;
  pagination: { limit: number; next: string | null };
}

describe('messages of a conversation, paged', () => {
  let stack: TestStack;
  let account: TestAccount;
  let other: TestAccount;
  let id: string;
  const contents = Array.from({ length: 45 }, (_, i) => `message ${i}`);

  beforeAll(async () => {
    stack = await TestStack.start();
    [account, other] = [await stack.createAccount(), await stack.createAccount()];
    id = (await account.api.post('/v1/conversations', { subject: 'long' })).body.id;
    for (const content of contents) {
      await account.api.post(`/v1/conversations/${id}/messages`, { sender: 'visitor', content });
    }
  });

  afterAll(() => stack?.close());

  /** Every page from the first, following `next` (with the same order). */
  async function readAll(path: string, query: string): Promise<Page[]> {
    const pages: Page[] = [];
    let after: string | null = null;
    do {
      const suffix: string = after ? `&after=${encodeURIComponent(after)}` : '';
      const response = await account.api.get(`${path}?${query}${suffix}`);
      expect(response.status).toBe(200);
      pages.push(response.body);
      after = response.body.pagination.next;
    } while (after !== null && pages.length < 20);
    return pages;
  }

  it('reads every message once, oldest first, 20 by default', async () => {
    const pages = await readAll(`/v1/conversations/${id}/messages`, '');
    expect(pages.map((page) => page.data.length)).toEqual([20, 20, 5]);
    expect(pages.flatMap((page) => page.data.map((message) => message.content))).toEqual(contents);
    expect(pages.every((page) => page.pagination.limit === 20)).toBe(true);
  });

  it('reads newest first with order=desc, in pages of `limit` (or its Malay spelling `had`), on the Polish path too', async () => {
    const pages = await readAll(`/v1/rozmowy/${id}/wiadomo%C5%9Bci`, 'order=desc&had=100');
    expect(pages).toHaveLength(1);
    expect(pages[0].data.map((message) => message.content)).toEqual([...contents].reverse());
    const small = await readAll(`/v1/conversations/${id}/messages`, 'order=desc&limit=7');
    expect(small.map((page) => page.data.length)).toEqual([7, 7, 7, 7, 7, 7, 3]);
    expect(small.flatMap((page) => page.data.map((message) => message.content))).toEqual(
      [...contents].reverse(),
    );
  });

  it('a cursor from one gateway replica is followed by another (the keys are in the database)', async () => {
    const short = (await account.api.post('/v1/conversations', {})).body.id;
    for (const content of ['one', 'two', 'three'])
      await account.api.post(`/v1/conversations/${short}/messages`, { sender: 'visitor', content });
    const first = await account.api.get(`/v1/conversations/${short}/messages?limit=2`);
    const replica = await startGateway(stack.gatewayConfig(), createLogger('test', 'silent'));
    try {
      const rest = await new ApiClient(replica.url, account.apiKey).get(
        `/v1/conversations/${short}/messages?limit=2&after=${encodeURIComponent(first.body.pagination.next)}`,
      );
      expect({
        status: rest.status,
        contents: rest.body.data.map((m: { content: string }) => m.content),
      }).toEqual({
        status: 200,
        contents: ['three'],
      });
    } finally {
      await replica.close();
    }
  });

  it('a message sent while paging appears on a later page, none is skipped', async () => {
    const first = await account.api.get(`/v1/conversations/${id}/messages?limit=40`);
    await account.api.post(`/v1/conversations/${id}/messages`, { sender: 'agent', content: 'late' });
    const rest = await account.api.get(
      `/v1/conversations/${id}/messages?limit=40&after=${encodeURIComponent(first.body.pagination.next)}`,
    );
    expect(rest.body.data.map((message: { content: string }) => message.content)).toEqual([
      ...contents.slice(40),
      'late',
    ]);
    expect(rest.body.pagination.next).toBeNull();
  });

  it('an empty conversation is an empty page; an unknown or another account’s is a 404', async () => {
    const empty = (await account.api.post('/v1/conversations', {})).body.id;
    expect((await account.api.get(`/v1/conversations/${empty}/messages`)).body).toEqual({
      data: [],
      pagination: { limit: 20, next: null },
    });
    const response = await other.api.get(`/v1/conversations/${id}/messages`);
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 404, code: 'not_found' });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['order=newest', 'order'],
    ['after=bm90LWEtY3Vyc29y', 'after'],
    ['after=%20', 'after'],
    ['offset=20', 'offset'],
  ])('refuses %s with a 400 naming the parameter', async (query, field) => {
    const response = await account.api.get(`/v1/conversations/${id}/messages?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  });

  it('refuses a cursor made for the other order', async () => {
    const first = await account.api.get(`/v1/conversations/${id}/messages?limit=5`);
    const response = await account.api.get(
      `/v1/conversations/${id}/messages?order=desc&after=${encodeURIComponent(first.body.pagination.next)}`,
    );
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { field: 'after', message: 'was made for order=asc; pass the same order with it' },
    ]);
  });

  it('seals its cursor: opaque, and a 400 in another account or conversation, changed, or from 1.0.0', async () => {
    const first = await account.api.get(`/v1/conversations/${id}/messages?limit=5`);
    const cursor: string = first.body.pagination.next;
    expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toMatch(/asc|m1\./);
    expect(cursor).not.toBe(
      (await account.api.get(`/v1/conversations/${id}/messages?limit=5`)).body.pagination.next,
    );

    const refusal = async (api: typeof account.api, conversation: string, after: string) => {
      const response = await api.get(
        `/v1/conversations/${conversation}/messages?after=${encodeURIComponent(after)}`,
      );
      return { status: response.status, errors: response.body.errors };
    };
    const foreign = {
      status: 400,
      errors: [
        { field: 'after', message: 'must be a pagination.next cursor of this endpoint, for this account' },
      ],
    };
    const mine = (await other.api.post('/v1/conversations', {})).body.id;
    expect(await refusal(other.api, mine, cursor)).toEqual(foreign);
    const sibling = (await account.api.post('/v1/conversations', {})).body.id;
    await account.api.post(`/v1/conversations/${sibling}/messages`, { sender: 'visitor', content: 'x' });
    expect(await refusal(account.api, sibling, cursor)).toEqual(foreign);
    const bytes = Buffer.from(cursor, 'base64url');
    for (const at of [0, 5, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[at] ^= 0x01;
      expect(await refusal(account.api, id, tampered.toString('base64url'))).toEqual(foreign);
    }
    // What 1.0.0 handed out: the order and the position, in plain base64url.
    expect(await refusal(account.api, id, Buffer.from('m1.asc.4').toString('base64url'))).toEqual({
      status: 400,
      errors: [
        {
          field: 'after',
          message:
            'is a cursor of an earlier version of the API, no longer accepted; read again from the first page',
        },
      ],
    });
  });

  it('a conversation longer than one read carries is a 422 naming the way to read it, never a truncated or lost reply', async () => {
    const big = (await account.api.post('/v1/conversations', { subject: 'very long' })).body.id;
    const db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
         SELECT gen_random_uuid(), $1, $2, k, 'visitor', 'm' || k, now() FROM generate_series(0, 50000) k`,
        [big, account.accountId],
      );
      await db.query('UPDATE conversations.conversations SET message_count = 50001 WHERE id = $1', [big]);
    } finally {
      await db.end();
    }
    const whole = await account.api.get(`/v1/conversations/${big}`);
    expect({ status: whole.status, code: whole.body.code }).toEqual({
      status: 422,
      code: 'conversation_too_large',
    });
    expect(whole.body.detail).toContain(`/v1/conversations/${big}/messages`);
    const last = await account.api.get(`/v1/conversations/${big}/messages?order=desc&limit=1`);
    expect(last.body.data.map((message: { content: string }) => message.content)).toEqual(['m50000']);
  });
});
