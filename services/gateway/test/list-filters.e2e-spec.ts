import { sleep, TestAccount, TestStack } from '@app/testing';

/**
 * The conversation list's filters and order (docs/conversations.md):
 * created_after / created_before / updated_after (exclusive instants), visitor_email (exact, case
 * aside) and order, combined with status, paging, the `next` link and the snapshot.
 */

interface Listed {
  id: string;
  created_at: string;
  updated_at: string;
  status: string;
}

describe('conversation list: filters and order', () => {
  let stack: TestStack;
  let account: TestAccount;
  let other: TestAccount;
  const created: Listed[] = [];

  beforeAll(async () => {
    stack = await TestStack.start();
    [account, other] = [await stack.createAccount(), await stack.createAccount()];
    const visitors = ['Ada@Example.com', 'grace@example.com', null, 'ada@example.com', 'linus@example.com'];
    for (const [i, email] of visitors.entries()) {
      const response = await account.api.post('/v1/conversations', {
        subject: `#${i}`,
        status: i === 2 ? 'pending' : 'active',
        ...(email && { visitor: { email } }),
      });
      created.push(response.body);
      await sleep(5); // distinct created_at, to the millisecond
    }
    await other.api.post('/v1/conversations', { visitor: { email: 'ada@example.com' } });
  });

  afterAll(() => stack?.close());

  const list = async (query: string) => {
    const response = await account.api.get(`/v1/conversations?${query}`);
    expect(response.status).toBe(200);
    return response.body as {
      data: Listed[];
      pagination: { total: number; next: string | null; snapshot: string };
    };
  };
  const ids = (page: { data: Listed[] }) => page.data.map((conversation) => conversation.id);
  const at = (i: number) => encodeURIComponent(created[i].created_at);

  it('created_after and created_before are exclusive instants, newest first by default, oldest first with order=asc', async () => {
    const page = await list(`created_after=${at(0)}&created_before=${at(4)}`);
    expect(ids(page)).toEqual([created[3].id, created[2].id, created[1].id]);
    expect(page.pagination.total).toBe(3);
    expect(ids(await list(`created_after=${at(0)}&created_before=${at(4)}&order=asc`))).toEqual([
      created[1].id,
      created[2].id,
      created[3].id,
    ]);
  });

  it('accepts any offset: the same instant written in another zone selects the same rows', async () => {
    const instant = new Date(created[2].created_at);
    const warsaw = new Date(instant.getTime() + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(ids(await list(`created_after=${encodeURIComponent(warsaw)}`))).toEqual(
      ids(await list(`created_after=${at(2)}`)),
    );
  });

  it('visitor_email matches exactly, case aside, within the account only', async () => {
    const page = await list('visitor_email=ADA@example.COM');
    expect(ids(page).sort()).toEqual([created[0].id, created[3].id].sort());
    expect(page.pagination.total).toBe(2);
    expect(ids(await list('visitor_email=ada@example'))).toEqual([]);
  });

  it('updated_after returns what changed since an instant', async () => {
    const since = new Date().toISOString();
    await sleep(5);
    await account.api.post(`/v1/conversations/${created[1].id}/messages`, { sender: 'agent', content: 'hi' });
    const page = await list(`updated_after=${encodeURIComponent(since)}`);
    expect(ids(page)).toEqual([created[1].id]);
  });

  it('combines with status, pages with a next link that keeps every filter, and keeps the snapshot', async () => {
    const first = await list(`status=aktif&created_after=${at(0)}&order=asc&limit=2`);
    expect(ids(first)).toEqual([created[1].id, created[3].id]);
    expect(first.pagination.total).toBe(3);
    const next = new URL(first.pagination.next!, 'http://x');
    expect(Object.fromEntries(next.searchParams)).toMatchObject({
      status: 'active',
      created_after: created[0].created_at,
      order: 'asc',
      limit: '2',
      offset: '2',
    });
    // A conversation created meanwhile matches the filters but is not in the snapshot's pages.
    await account.api.post('/v1/conversations', { subject: 'late' });
    const second = await account.api.get(first.pagination.next!);
    expect(ids(second.body)).toEqual([created[4].id]);
    expect(second.body.pagination).toMatchObject({ total: 3, next: null });
  });

  it.each([
    ['created_after=2026-01-01', 'created_after'],
    ['created_before=yesterday', 'created_before'],
    ['updated_after=2026-13-01T00:00:00Z', 'updated_after'],
    ['order=newest', 'order'],
    ['visitor_email=', 'visitor_email'],
  ])('refuses %s with a 400 naming the parameter', async (query, field) => {
    const response = await account.api.get(`/v1/conversations?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  });
});
