import { SEARCH_LIMITS } from '@app/contracts';
import { expectValidation, newConversation, TestAccount, TestStack } from '@app/testing';

/**
 * Search (docs/conversations.md, "Search and tags"): `q` (Malay `cari`, Polish `szukaj`) lists the
 * conversations where every word of it (words of one character aside) starts a word of the
 * subject, the visitor's name or email, or any message, case and diacritics aside; it combines
 * with every filter, order and paging, and reads what was just written.
 */
describe('search (q)', () => {
  let stack: TestStack;
  let owner: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start();
    [owner, other] = [await stack.createAccount(), await stack.createAccount()];
  });

  afterAll(async () => {
    await stack?.close();
  });

  /** The ids and total of a list, asserting it is a 200. */
  const listed = async (path: string, account = owner, headers: Record<string, string> = {}) => {
    const response = await account.api.get(path, { headers });
    expect(response.status).toBe(200);
    return {
      ids: response.body.data.map((row: { id: string }) => row.id) as string[],
      total: response.body.pagination.total as number,
    };
  };
  const search = (q: string, account = owner) =>
    listed(`/v1/conversations?q=${encodeURIComponent(q)}`, account);
  const send = async (id: string, content: string) =>
    expect(
      (await owner.api.post(`/v1/conversations/${id}/messages`, { sender: 'visitor', content })).status,
    ).toBe(201);

  it('ignores case and diacritics in both directions, in the subject, the visitor and the messages', async () => {
    const subject = await newConversation(owner.api, { subject: 'Żółw w paczce' });
    const message = await newConversation(owner.api, { subject: 'Hello' });
    await send(message.id, 'mam zolw i ZAMOWIENIE 1001');
    const visitor = await newConversation(owner.api, {
      subject: 'Other',
      visitor: { name: 'Zoë Café', email: 'Ada.Lovelace@Example.com' },
    });
    expect(await search('zolw')).toEqual({ ids: [message.id, subject.id], total: 2 });
    expect(await search('ŻÓŁW')).toEqual({ ids: [message.id, subject.id], total: 2 });
    expect(await search('Zamówienie')).toEqual({ ids: [message.id], total: 1 });
    expect(await search('cafe zoe')).toEqual({ ids: [visitor.id], total: 1 });
    expect(await search('ada.lovelace@example.com')).toEqual({ ids: [visitor.id], total: 1 });
    expect(await search('example')).toEqual({ ids: [visitor.id], total: 1 });
    // Each word starts a word: a prefix finds, the middle of a word does not.
    expect(await search('zam')).toEqual({ ids: [message.id], total: 1 });
    expect(await search('mowienie')).toEqual({ ids: [], total: 0 });
  });

  it('needs every word, wherever each is: subject, visitor, any message', async () => {
    const split = await newConversation(owner.api, { subject: 'Parcel 4711 lost' });
    await send(split.id, 'first message');
    await send(split.id, 'I want a refund');
    await newConversation(owner.api, { subject: 'Parcel 4711 found' });
    expect(await search('parcel refund 4711')).toEqual({ ids: [split.id], total: 1 });
    expect(await search('parcel refund nothere')).toEqual({ ids: [], total: 0 });
    // Words of one character are ignored; a q of nothing else filters nothing.
    expect(await search('refund a I')).toEqual({ ids: [split.id], total: 1 });
    const all = await listed('/v1/conversations');
    expect(await search('a I -')).toEqual(all);
  });

  it('finds a message at once, and stops finding an edited subject or visitor', async () => {
    const { id } = await newConversation(owner.api, {
      subject: 'Kangaroo delivery',
      visitor: { name: 'Bolesław' },
    });
    expect(await search('wombat')).toEqual({ ids: [], total: 0 });
    await send(id, 'the wombat arrived');
    expect(await search('wombat')).toEqual({ ids: [id], total: 1 });
    const opened = await newConversation(owner.api, {
      message: { sender: 'visitor', content: 'A dingo too' },
    });
    expect(await search('dingo')).toEqual({ ids: [opened.id], total: 1 });

    expect((await owner.api.patch(`/v1/conversations/${id}`, { subject: 'Koala delivery' })).status).toBe(
      200,
    );
    expect(await search('kangaroo')).toEqual({ ids: [], total: 0 });
    expect(await search('koala wombat')).toEqual({ ids: [id], total: 1 });
    expect((await owner.api.patch(`/v1/conversations/${id}`, { visitor: null })).status).toBe(200);
    expect(await search('boleslaw')).toEqual({ ids: [], total: 0 });
    expect(
      (await owner.api.post(`/v1/conversations/${id}/lead`, { name: 'Mirosław', email: 'm@example.com' }))
        .status,
    ).toBe(201);
    expect(await search('miroslaw koala wombat')).toEqual({ ids: [id], total: 1 });
  });

  it("never finds another account's conversations with the same words", async () => {
    const mine = await newConversation(owner.api, { subject: 'Platypus tenant check' });
    const theirs = await newConversation(other.api, { subject: 'Platypus tenant check' });
    expect(await search('platypus tenant')).toEqual({ ids: [mine.id], total: 1 });
    expect(await search('platypus tenant', other)).toEqual({ ids: [theirs.id], total: 1 });
  });

  it('in every rendering, with the other filters, order and paging as of the first page', async () => {
    const a = await newConversation(owner.api, { subject: 'Echidna one', tags: ['vip'] });
    const b = await newConversation(owner.api, { subject: 'Echidna two', tags: ['vip'], status: 'pending' });
    const c = await newConversation(owner.api, { subject: 'Echidna three', tags: ['vip'] });
    await newConversation(owner.api, { subject: 'Echidna four' });
    const expected = { ids: [c.id, b.id, a.id], total: 3 };
    expect(await listed('/v1/conversations?q=echidna&tag=vip')).toEqual(expected);
    expect(
      await listed('/v1/conversations?cari=echidna&tag=vip', owner, { 'accept-language': 'ms' }),
    ).toEqual(expected);
    expect(await listed('/v1/rozmowy?szukaj=echidna&etykieta=vip')).toEqual(expected);
    expect(await listed('/v1/conversations?q=echidna&tag=vip&status=pending')).toEqual({
      ids: [b.id],
      total: 1,
    });
    expect(await listed('/v1/conversations?q=echidna&tag=vip&order=asc')).toEqual({
      ids: [a.id, b.id, c.id],
      total: 3,
    });

    const first = await owner.api.get('/v1/conversations?q=echidna&tag=vip&limit=2');
    expect(first.body.data.map((row: { id: string }) => row.id)).toEqual([c.id, b.id]);
    expect(first.body.pagination.next).toMatch(/[?&]q=echidna(&|$)/);
    // Created after the first page: not in the pages that follow it, nor in their total.
    await newConversation(owner.api, { subject: 'Echidna five', tags: ['vip'] });
    const second = await owner.api.get(first.body.pagination.next);
    expect(second.status).toBe(200);
    expect(second.body.data.map((row: { id: string }) => row.id)).toEqual([a.id]);
    expect(second.body.pagination.total).toBe(3);
    expect((await listed('/v1/conversations?q=echidna&tag=vip')).total).toBe(4);
  });

  it('counts many matches only so far past the page, and pages them exactly in either order', async () => {
    const { countAhead, walk } = SEARCH_LIMITS;
    const many = await stack.createAccount();
    // Older matches than the walk reaches from the newest end, newer ones that never match:
    // newest first, the page is not among the walked rows, and the matches are counted and
    // sorted from the index; oldest first, the walk finds them at once. One minute apart.
    const matching = countAhead + 100;
    await stack.query(
      `INSERT INTO conversations.conversations (id, account_id, status, subject, metadata, tags, created_at, updated_at, search_words)
       SELECT gen_random_uuid(), $1, 'active', subject, '{}', tags, at, at, conversations.detail_search_words(subject, NULL, NULL)
         FROM generate_series(1, $2::int + $3::int) AS i,
              LATERAL (SELECT now() - make_interval(mins => $2::int + $3::int - i) AS at,
                              CASE WHEN i <= $2 THEN 'Wombat ' || i ELSE 'Other ' || i END AS subject,
                              CASE WHEN i <= $2 THEN ARRAY['herd'] ELSE '{}'::text[] END AS tags) row`,
      [many.accountId, matching, walk + 100],
    );
    const ids = (
      await stack.query<{ id: string }>(
        `SELECT id FROM conversations.conversations WHERE account_id = $1 AND subject LIKE 'Wombat %' ORDER BY created_at, id`,
        [many.accountId],
      )
    ).map((row) => row.id);
    const newest = [...ids].reverse();
    const page = async (path: string) => {
      const response = await many.api.get(path);
      expect(response.status).toBe(200);
      return {
        ids: response.body.data.map((row: { id: string }) => row.id) as string[],
        total: response.body.pagination.total as number,
        lowerBound: response.body.pagination.total_is_lower_bound as boolean | undefined,
        next: response.body.pagination.next as string | null,
      };
    };
    for (const filter of ['q=wombat', 'tag=herd', 'szukaj=WOMBAT&etykieta=herd&stan=aktywne']) {
      const first = await page(`/v1/conversations?${filter}`);
      expect(first).toEqual({
        ids: newest.slice(0, 20),
        total: 20 + countAhead,
        lowerBound: true,
        next: expect.any(String),
      });
      expect(await page(first.next!)).toMatchObject({
        ids: newest.slice(20, 40),
        total: 40 + countAhead,
        lowerBound: true,
      });
      expect(await page(`/v1/conversations?${filter}&order=asc&limit=30&offset=30`)).toMatchObject({
        ids: ids.slice(30, 60),
        total: 60 + countAhead,
        lowerBound: true,
      });
      // The walk holds the page and every match; the total is counted from the index.
      expect(await page(`/v1/conversations?${filter}&order=asc&offset=${matching - 50}`)).toMatchObject({
        ids: ids.slice(matching - 50, matching - 30),
        total: matching,
        lowerBound: undefined,
      });
      // Near the end every match is counted: an exact total, no flag, no next page.
      expect(await page(`/v1/conversations?${filter}&offset=${matching - 10}`)).toEqual({
        ids: newest.slice(matching - 10),
        total: matching,
        lowerBound: undefined,
        next: null,
      });
    }
  });

  it('finds rare matches past the walk through the words of each message and of each conversation', async () => {
    const far = await stack.createAccount();
    const sendAs = async (id: string, content: string) =>
      expect(
        (await far.api.post(`/v1/conversations/${id}/messages`, { sender: 'visitor', content })).status,
      ).toBe(201);
    const subjectAndMessage = await newConversation(far.api, { subject: 'Kangaroo 5150' });
    await sendAs(subjectAndMessage.id, 'A refund, please');
    const twoMessages = await newConversation(far.api, { subject: 'Question' });
    await sendAs(twoMessages.id, 'The kangaroo');
    await sendAs(twoMessages.id, 'jumps away');
    const oneMessage = await newConversation(far.api, { subject: 'Other question' });
    await sendAs(oneMessage.id, 'kangaroo');
    // Newer conversations than these, more than the walk reads, none matching: the list finds
    // the matches through the indexes of words, not by walking.
    await stack.query(
      `INSERT INTO conversations.conversations (id, account_id, status, subject, metadata, created_at, updated_at, search_words)
       SELECT gen_random_uuid(), $1, 'active', 'Newer ' || i, '{}', at, at, conversations.detail_search_words('Newer ' || i, NULL, NULL)
         FROM generate_series(1, $2::int) AS i, LATERAL (SELECT now() + make_interval(mins => i) AS at) row`,
      [far.accountId, SEARCH_LIMITS.walk + 100],
    );
    const found = (q: string, account = far) =>
      listed(`/v1/conversations?q=${encodeURIComponent(q)}`, account);
    // Split between subject and message, whichever word is looked up first; between two messages.
    expect(await found('kangaroo refund')).toEqual({ ids: [subjectAndMessage.id], total: 1 });
    expect(await found('refund 5150')).toEqual({ ids: [subjectAndMessage.id], total: 1 });
    expect(await found('kangaroo jumps')).toEqual({ ids: [twoMessages.id], total: 1 });
    expect(await found('kangaroo')).toEqual({
      ids: [oneMessage.id, twoMessages.id, subjectAndMessage.id],
      total: 3,
    });
    // A message sent now is found at once; an edited subject by its new words only.
    await sendAs(oneMessage.id, 'Platypus!');
    expect(await found('platypus kangaroo')).toEqual({ ids: [oneMessage.id], total: 1 });
    expect(
      (await far.api.patch(`/v1/conversations/${subjectAndMessage.id}`, { subject: 'Wallaby 5150' })).status,
    ).toBe(200);
    expect(await found('kangaroo refund')).toEqual({ ids: [], total: 0 });
    expect(await found('wallaby refund')).toEqual({ ids: [subjectAndMessage.id], total: 1 });
    // The same words in another account are not found.
    expect(await found('kangaroo', owner)).toEqual({ ids: [], total: 0 });
  });

  it('refuses a q longer than 200 characters with a 400 naming it, in any spelling', async () => {
    const long = 'x'.repeat(201);
    expectValidation(await owner.api.get(`/v1/conversations?q=${long}`), '/v1/conversations', ['q']);
    expectValidation(await owner.api.get(`/v1/rozmowy?szukaj=${long}`), '/v1/rozmowy', ['q']);
    expect((await owner.api.get(`/v1/conversations?q=${'x'.repeat(200)}`)).status).toBe(200);
  });
});
