import { EventTap, eventually, expectProblem, newConversation, TestAccount, TestStack } from '@app/testing';

/**
 * Editing a conversation (docs/conversations.md): PATCH also takes
 * `subject`, `visitor` (replaced whole) and `metadata` (merged, a null removes a key), emitting
 * `conversation.updated` naming what changed; `GET .../lead` answers the captured lead.
 */

describe('editing a conversation and reading its lead', () => {
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

  const newOrderConversation = (body: Record<string, unknown> = {}) =>
    newConversation(owner.api, {
      subject: 'Order 1001',
      visitor: { name: 'Ada', email: 'ada@example.com' },
      metadata: { order: '1001', channel: 'web', coupon: 'SPRING' },
      ...body,
    });

  /** The conversation's events of `types` in arrival order, once there are `count` of them. */
  const eventsOf = (id: string, count: number, types = ['conversation.updated']) =>
    eventually(() => {
      const found = tap
        .forAccount(owner.accountId)
        .filter(({ event }) => event.subject === id && types.includes(event.type));
      if (found.length < count) throw new Error(`expected ${count} events, got ${found.length}`);
      return found.map(({ event }) => event);
    }, 10_000);

  it('changes subject, visitor and metadata in one PATCH, merging metadata, and emits conversation.updated naming them', async () => {
    const { id, updated_at } = await newOrderConversation();
    const path = `/v1/conversations/${id}`;
    const response = await owner.api.patch(path, {
      subject: 'Order 1001 (refund)',
      visitor: { name: 'Ada Lovelace', phone: '+44 20 7946 0958' },
      metadata: { coupon: null, refund: { amount: 12.5, currency: 'EUR' } },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id,
      subject: 'Order 1001 (refund)',
      visitor: { name: 'Ada Lovelace', email: null, phone: '+44 20 7946 0958' },
      metadata: { order: '1001', channel: 'web', refund: { amount: 12.5, currency: 'EUR' } },
    });
    expect(response.body.metadata).not.toHaveProperty('coupon');
    expect(response.body.updated_at > updated_at).toBe(true);
    expect((await owner.api.get(path)).body).toMatchObject(response.body);

    const [event] = await eventsOf(id, 1);
    expect(event.data).toEqual({
      conversation: response.body,
      changed: ['subject', 'visitor', 'metadata'],
      tags_added: [],
      tags_removed: [],
    });
  });

  it('a PATCH with the stored values changes nothing and emits nothing; null clears subject and visitor', async () => {
    const { id } = await newOrderConversation();
    const path = `/v1/conversations/${id}`;
    const before = (await owner.api.get(path)).body;
    const same = await owner.api.patch(path, {
      subject: 'Order 1001',
      metadata: { order: '1001', absent: null },
      status: 'active',
    });
    expect(same.status).toBe(200);
    expect(same.body.updated_at).toBe(before.updated_at);
    // A real change after it: the relay publishes in commit order, so once this one is seen, an
    // event of the no-op PATCH would have been seen too.
    const cleared = await owner.api.patch(path, { subject: null, visitor: null });
    expect(cleared.body).toMatchObject({ subject: null, visitor: null, metadata: before.metadata });
    const events = await eventsOf(id, 1);
    expect(events).toHaveLength(1);
    expect((events[0].data as { changed: string[] }).changed).toEqual(['subject', 'visitor']);
  });

  it('status and details in one PATCH: the status event, then conversation.updated; a closed conversation can still be edited', async () => {
    const { id } = await newOrderConversation();
    const path = `/v1/rozmowy/${id}`;
    const closed = await owner.api.patch(path, { status: 'zamknięte', metadata: { csat: 5 } });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ status: 'zamknięte', metadata: { csat: 5, order: '1001' } });
    const tagged = await owner.api.patch(path, { metadata: { tag: 'refund' } });
    expect(tagged.body).toMatchObject({ status: 'zamknięte', metadata: { csat: 5, tag: 'refund' } });
    const events = await eventsOf(id, 3, ['conversation.closed', 'conversation.updated']);
    expect(events.map((event) => event.type)).toEqual([
      'conversation.closed',
      'conversation.updated',
      'conversation.updated',
    ]);
  });

  it('refuses what it cannot apply with a 400 or 409 and changes nothing', async () => {
    const { id } = await newOrderConversation();
    const path = `/v1/conversations/${id}`;
    const before = (await owner.api.get(path)).body;
    const tooMany = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, i]));
    const merged = await owner.api.patch(path, { subject: 'changed', metadata: tooMany });
    expect({ status: merged.status, code: merged.body.code }).toEqual({
      status: 400,
      code: 'validation_failed',
    });
    expect(merged.body.errors).toEqual([{ field: 'metadata', message: expect.stringContaining('51 keys') }]);
    for (const body of [
      {},
      { subject: 'x'.repeat(501) },
      { visitor: { email: 'not an email' } },
      { metadata: 'flat' },
      { owner: 'someone' },
    ]) {
      const refused = await owner.api.patch(path, body);
      expect({ body, status: refused.status, code: refused.body.code }).toEqual({
        body,
        status: 400,
        code: 'validation_failed',
      });
    }
    expect((await owner.api.get(path)).body).toEqual(before);
  });

  it('a status move it cannot make is a 409 and nothing else in the PATCH applies', async () => {
    const { id } = await newOrderConversation();
    const path = `/v1/conversations/${id}`;
    await owner.api.patch(path, { status: 'closed' });
    const before = (await owner.api.get(path)).body;
    expectProblem(
      await owner.api.patch(path, { status: 'pending', subject: 'changed' }),
      409,
      'invalid_transition',
      path,
    );
    expect((await owner.api.get(path)).body).toEqual(before);
  });

  it("another account's conversation is a 404 for PATCH and for its lead, and is not changed", async () => {
    const { id } = await newOrderConversation();
    const path = `/v1/conversations/${id}`;
    expectProblem(await other.api.patch(path, { subject: 'mine now' }), 404, 'not_found', path);
    expectProblem(await other.api.get(`${path}/lead`), 404, 'not_found', `${path}/lead`);
    expect((await owner.api.get(path)).body.subject).toBe('Order 1001');
  });

  it('GET lead: 404 until one is captured, then the latest captured, in either path rendering', async () => {
    const { id } = await newOrderConversation();
    const lead = `/v1/conversations/${id}/lead`;
    const none = await owner.api.get(lead);
    expectProblem(none, 404, 'not_found', lead);
    expect(none.body.detail).toContain('no lead');
    const first = await owner.api.post(lead, { email: 'first@example.com' });
    const second = await owner.api.post(lead, { name: 'Ada', phone: '+48 22 123 45 67' });
    expect([first.status, second.status]).toEqual([201, 201]);
    const read = await owner.api.get(lead);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(second.body);
    expect((await owner.api.get(`/v1/rozmowy/${id}/lead`)).body).toEqual(second.body);
    const unknown = '/v1/conversations/00000000-0000-4000-8000-000000000000/lead';
    expectProblem(await owner.api.get(unknown), 404, 'not_found', unknown);
  });
});
