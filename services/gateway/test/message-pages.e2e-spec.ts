import { Client } from 'pg';
import { TestAccount, TestStack } from '@app/testing';

/**
 * A conversation's messages in pages (issue 14, item 1; DESIGN.md "Integrator API"): `limit`
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
