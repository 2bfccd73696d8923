import {
  EventTap,
  eventually,
  expectValidation,
  newConversation,
  TestAccount,
  TestStack,
} from '@app/testing';

/**
 * Conversation tags (docs/conversations.md, "Search and tags"): stored trimmed, lower-cased and
 * NFC, at most 20 of 1-50 characters, without duplicates; set on create, replaced or edited by
 * PATCH (concurrent edits lose nothing), carried by conversation.updated, and a list filter in
 * every rendering (`tag`, Polish `etykieta`) where every tag given must be present.
 */

describe('conversation tags', () => {
  let stack: TestStack;
  let tap: EventTap;
  let owner: TestAccount;
  let other: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start();
    tap = await EventTap.open('conversation.*');
    [owner, other] = [await stack.createAccount(), await stack.createAccount()];
  });

  afterAll(async () => {
    await tap?.close();
    await stack?.close();
  });

  /** The conversation's events of `type`, in arrival order, once there are `count` of them. */
  const eventsOf = (id: string, type: string, count: number) =>
    eventually(() => {
      const found = tap
        .forAccount(owner.accountId)
        .filter(({ event }) => event.subject === id && event.type === type);
      if (found.length < count) throw new Error(`expected ${count} ${type}, got ${found.length}`);
      return found.map(({ event }) => event.data as Record<string, unknown>);
    }, 10_000);

  it('stores tags normalised (trimmed, lower-cased, NFC, once) and shows them everywhere a conversation is', async () => {
    const decomposedCafe = 'Cafe\u0301';
    const created = await newConversation(owner.api, { tags: ['  VIP ', 'vip', decomposedCafe, 'Łódź'] });
    expect(created.tags).toEqual(['vip', 'café', 'łódź']);
    expect((await owner.api.get(`/v1/conversations/${created.id}`)).body.tags).toEqual(created.tags);
    const listed = (await owner.api.get('/v1/conversations?limit=100')).body.data;
    expect(listed.find((row: { id: string }) => row.id === created.id).tags).toEqual(created.tags);
    const [started] = await eventsOf(created.id, 'conversation.started', 1);
    expect((started.conversation as { tags: string[] }).tags).toEqual(created.tags);
    // Without tags: an empty list, never absent.
    expect((await newConversation(owner.api)).tags).toEqual([]);
  });

  it('PATCH tags replaces the set; add_tags and remove_tags edit it; conversation.updated names what changed', async () => {
    const { id } = await newConversation(owner.api, { tags: ['vip', 'sales'] });
    const path = `/v1/conversations/${id}`;
    const replaced = await owner.api.patch(path, { tags: ['Billing', 'vip'] });
    expect(replaced.status).toBe(200);
    expect(replaced.body.tags).toEqual(['billing', 'vip']);
    const edited = await owner.api.patch(path, {
      add_tags: ['Refund', 'billing'],
      remove_tags: ['VIP', 'absent'],
    });
    expect(edited.body.tags).toEqual(['billing', 'refund']);
    // The same set in another order changes nothing and emits nothing.
    const same = await owner.api.patch(path, { tags: ['refund', 'billing'] });
    expect(same.body).toEqual(edited.body);
    const cleared = await owner.api.patch(`/v1/rozmowy/${id}`, { tags: [] });
    expect(cleared.body.tags).toEqual([]);

    const events = await eventsOf(id, 'conversation.updated', 3);
    expect(
      events.map(({ changed, tags_added, tags_removed }) => ({ changed, tags_added, tags_removed })),
    ).toEqual([
      { changed: ['tags'], tags_added: ['billing'], tags_removed: ['sales'] },
      { changed: ['tags'], tags_added: ['refund'], tags_removed: ['vip'] },
      { changed: ['tags'], tags_added: [], tags_removed: ['billing', 'refund'] },
    ]);
    expect((events[2].conversation as { tags: string[] }).tags).toEqual([]);
  });

  it('concurrent add_tags of different tags all land: none is lost', async () => {
    const { id } = await newConversation(owner.api, { tags: ['first'] });
    const path = `/v1/conversations/${id}`;
    const added = Array.from({ length: 12 }, (_, i) => `writer-${i}`);
    const responses = await Promise.all(added.map((tag) => owner.api.patch(path, { add_tags: [tag] })));
    expect(responses.map((response) => response.status)).toEqual(added.map(() => 200));
    const { tags } = (await owner.api.get(path)).body as { tags: string[] };
    expect(tags[0]).toBe('first');
    expect([...tags].sort()).toEqual(['first', ...added].sort());
  });

  it('refuses bad tags with a 400 naming the field, and changes nothing', async () => {
    const { id } = await newConversation(owner.api, { tags: ['keep'] });
    const path = `/v1/conversations/${id}`;
    const twenty = Array.from({ length: 20 }, (_, i) => `t${i}`);
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ tags: [''] }, ['tags.0']],
      [{ tags: ['   '] }, ['tags.0']],
      [{ tags: ['x'.repeat(51)] }, ['tags.0']],
      [{ tags: ['bad\ttag'] }, ['tags.0']],
      [{ tags: [...twenty, 't20'] }, ['tags']],
      [{ tags: 'vip' }, ['tags']],
      [{ tags: [7] }, ['tags.0']],
      [{ tags: ['a'], add_tags: ['b'] }, ['tags']],
      [{ add_tags: ['vip'], remove_tags: ['VIP'] }, ['remove_tags']],
      [{ add_tags: twenty }, ['add_tags']],
    ];
    for (const [body, fields] of cases) expectValidation(await owner.api.patch(path, body), path, fields);
    expectValidation(
      await owner.api.post('/v1/conversations', { tags: ['y'.repeat(51)] }),
      '/v1/conversations',
      ['tags.0'],
    );
    expect((await owner.api.get(path)).body.tags).toEqual(['keep']);
    // Fifty characters once trimmed is the limit, not fifty characters sent.
    expect((await owner.api.patch(path, { add_tags: [` ${'z'.repeat(50)} `] })).body.tags).toEqual([
      'keep',
      'z'.repeat(50),
    ]);
  });

  it('filters the list by tag in every rendering: every tag given must be present; other accounts never match', async () => {
    const both = await newConversation(owner.api, { tags: ['alpha-tag', 'beta-tag'] });
    const alpha = await newConversation(owner.api, { tags: ['alpha-tag'] });
    await newConversation(owner.api, { tags: ['beta-tag'] });
    await newConversation(other.api, { tags: ['alpha-tag', 'beta-tag'] });
    const ids = async (path: string, headers: Record<string, string> = {}) => {
      const response = await owner.api.get(path, { headers });
      expect(response.status).toBe(200);
      return {
        ids: response.body.data.map((row: { id: string }) => row.id),
        total: response.body.pagination.total,
      };
    };
    expect(await ids('/v1/conversations?tag=ALPHA-tag')).toEqual({ ids: [alpha.id, both.id], total: 2 });
    const expected = { ids: [both.id], total: 1 };
    expect(await ids('/v1/conversations?tag=alpha-tag&tag=beta-tag')).toEqual(expected);
    expect(await ids('/v1/rozmowy?etykieta=alpha-tag&etykieta=beta-tag')).toEqual(expected);
    expect(
      await ids('/v1/conversations?tag=alpha-tag&etykieta=beta-tag', { 'accept-language': 'ms' }),
    ).toEqual(expected);
    expect(await ids('/v1/conversations?tag=alpha-tag&status=aktif&tag=beta-tag')).toEqual(expected);
    expect(await ids('/v1/conversations?tag=absent-tag')).toEqual({ ids: [], total: 0 });

    // The next link repeats every tag.
    const first = await owner.api.get('/v1/rozmowy?etykieta=alpha-tag&limit=1');
    expect(first.body.pagination.next).toMatch(/[?&]tag=alpha-tag(&|$)/);
    const second = await owner.api.get(first.body.pagination.next);
    expect(second.body.data.map((row: { id: string }) => row.id)).toEqual([both.id]);

    expectValidation(await owner.api.get('/v1/conversations?tag='), '/v1/conversations', ['tag.0']);
    expectValidation(await owner.api.get(`/v1/conversations?tag=${'t'.repeat(51)}`), '/v1/conversations', [
      'tag.0',
    ]);
  });
});
