import { randomUUID } from 'node:crypto';
import { CLOUDEVENTS_SOURCE, CloudEvent } from '@app/contracts';
import { ApiClient, eventually, EventTap, TappedEvent, TestAccount, TestStack } from '@app/testing';

/**
 * Domain events (docs/events.md): every state change made through the public API leaves as
 * exactly one CloudEvents 1.0 message on `conversations.events`, routed by its English type,
 * persistent, after the change committed, in commit order per conversation; nothing else emits.
 *
 * "Nothing else" is checked without sleeping: after the actions under test, a fence change is made
 * on the same conversation; the relay publishes in commit order, so once the fence's event has
 * arrived anything the earlier requests had written would have arrived before it.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('domain events on conversations.events', () => {
  let stack: TestStack;
  let tap: EventTap;
  const startedAt = Date.now();

  beforeAll(async () => {
    stack = await TestStack.start();
    tap = await EventTap.open();
  });
  afterAll(async () => {
    await tap?.close();
    await stack?.close();
  });

  /** Every structural rule of the envelope and the delivery, for one tapped event. */
  function expectEnvelope(tapped: TappedEvent, account: TestAccount, conversationId: string, type: string) {
    const { event } = tapped;
    expect(Object.keys(event).sort()).toEqual(
      [
        'accountid',
        'data',
        'datacontenttype',
        'id',
        'requestid',
        'sequence',
        'source',
        'specversion',
        'subject',
        'time',
        'type',
      ].sort(),
    );
    expect(event.requestid).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    expect(event.specversion).toBe('1.0');
    expect(event.id).toMatch(UUID);
    expect(event.source).toBe(CLOUDEVENTS_SOURCE);
    expect(event.source.length).toBeGreaterThan(0);
    expect(event.type).toBe(type);
    expect(event.time).toMatch(ISO_TIME);
    const time = Date.parse(event.time);
    expect(time).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(time).toBeLessThanOrEqual(Date.now() + 1000);
    expect(event.subject).toBe(conversationId);
    expect(event.accountid).toBe(account.accountId);
    expect(Number.isInteger(event.sequence) && event.sequence >= 1).toBe(true);
    expect(event.datacontenttype).toBe('application/json');
    expect(tapped.routingKey).toBe(type);
    expect(tapped.persistent).toBe(true);
    expect(tapped.contentType).toBe('application/cloudevents+json');
  }

  /**
   * Makes a fence change on the conversation (a bot message), waits for its event and returns the
   * account's events before it, asserting that the fence event is last and nothing came after.
   */
  async function eventsBeforeFence(account: TestAccount, conversationId: string): Promise<TappedEvent[]> {
    const before = tap.forAccount(account.accountId).length;
    const fence = await account.api.post(`/v1/conversations/${conversationId}/messages`, {
      content: `fence ${randomUUID()}`,
      sender: 'bot',
    });
    expect(fence.status).toBe(201);
    const events = await eventually(() => {
      const found = tap.forAccount(account.accountId);
      const index = found.findIndex(
        (t) => t.event.type === 'message.sent' && (t.event.data as any).message?.id === fence.body.id,
      );
      if (index < 0) throw new Error(`fence event not received (have ${found.length}, had ${before})`);
      return found;
    });
    const last = events[events.length - 1];
    expect((last.event.data as any).message.id).toBe(fence.body.id);
    return events.slice(0, -1);
  }

  const types = (events: TappedEvent[]) => events.map((t) => t.event.type);
  const ids = (events: TappedEvent[]) => events.map((t) => t.event.id);

  async function create(api: ApiClient, body: unknown = {}) {
    const response = await api.post('/v1/conversations', body);
    expect(response.status).toBe(201);
    return response;
  }

  it('create emits conversation.started carrying the created conversation', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api, {
      subject: 'Order question',
      visitor: { name: 'Ada', email: 'ada@example.com', phone: null },
      metadata: { order: 'A-1', nested: { n: 1 } },
    });
    const [started] = await tap.waitForAccount(account.accountId, 1);
    expectEnvelope(started, account, created.body.id, 'conversation.started');
    expect(started.event.requestid).toBe(created.headers.get('x-request-id'));
    expect(started.event.data).toEqual({ conversation: created.body });
    expect((started.event.data as any).conversation.status).toBe('active');
    expect(await eventsBeforeFence(account, created.body.id)).toHaveLength(1);
  });

  it('create with status pending emits one conversation.started with status pending', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api, { status: 'w toku' });
    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual(['conversation.started']);
    expect(events[0].event.data).toEqual({ conversation: { ...created.body, status: 'pending' } });
  });

  it('create with a first visitor message emits conversation.started then message.received', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api, {
      subject: 'Hi',
      message: { content: 'Hello there', sender: 'visitor' },
    });
    expect(created.body.message_count).toBe(1);
    const read = await account.api.get(`/v1/conversations/${created.body.id}`);
    expect(read.status).toBe(200);
    const [message] = read.body.messages;

    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual(['conversation.started', 'message.received']);
    const [started, received] = events;
    expectEnvelope(started, account, created.body.id, 'conversation.started');
    expectEnvelope(received, account, created.body.id, 'message.received');
    expect([started.event.sequence, received.event.sequence]).toEqual([1, 2]);
    // started describes the conversation as it began: before its first message
    expect(started.event.data).toEqual({
      conversation: expect.objectContaining({
        id: created.body.id,
        subject: 'Hi',
        status: 'active',
        message_count: 0,
        last_message_at: null,
      }),
    });
    expect(received.event.data).toEqual({ conversation_id: created.body.id, message });
    expect(message).toMatchObject({
      content: 'Hello there',
      sender: 'visitor',
      conversation_id: created.body.id,
    });
    expect(new Set(ids(events)).size).toBe(2);
  });

  it('create with a first agent message emits conversation.started then message.sent', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api, { message: { content: 'Welcome!', sender: 'agent' } });
    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual(['conversation.started', 'message.sent']);
    expect((events[1].event.data as any).message).toMatchObject({ content: 'Welcome!', sender: 'agent' });
  });

  it('a visitor message emits message.received; agent, bot and system messages emit message.sent', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api);
    const sent: unknown[] = [];
    for (const sender of ['visitor', 'agent', 'bot', 'system', 'visitor']) {
      const response = await account.api.post(`/v1/rozmowy/${created.body.id}/wiadomości`, {
        content: `from ${sender}`,
        sender,
      });
      expect(response.status).toBe(201);
      sent.push(response.body);
    }
    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual([
      'conversation.started',
      'message.received',
      'message.sent',
      'message.sent',
      'message.sent',
      'message.received',
    ]);
    events.slice(1).forEach((tapped, i) => {
      expectEnvelope(tapped, account, created.body.id, tapped.event.type);
      expect(tapped.event.data).toEqual({ conversation_id: created.body.id, message: sent[i] });
    });
    expect(new Set(ids(events)).size).toBe(events.length);
  });

  it('status changes: pending and back emit status_changed, close emits closed, reopen emits reopened', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api);
    const path = `/v1/conversations/${created.body.id}`;

    const toPending = await account.api.patch(path, { status: 'pending' });
    const toActive = await account.api.patch(path, { status: 'aktif' });
    // closed in Polish, with a Polish response: the event stays canonical (en)
    const closed = await account.api.patch(`/v1/rozmowy/${created.body.id}`, { status: 'zamknięte' });
    const reopened = await account.api.patch(path, { status: 'active' });
    expect([toPending.status, toActive.status, closed.status, reopened.status]).toEqual([200, 200, 200, 200]);
    expect(closed.body.status).toBe('zamknięte');
    expect(closed.body.closed_at).not.toBeNull();
    expect(reopened.body.closed_at).toBeNull();

    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual([
      'conversation.started',
      'conversation.status_changed',
      'conversation.status_changed',
      'conversation.closed',
      'conversation.reopened',
    ]);
    const [, pendingEvent, activeEvent, closedEvent, reopenedEvent] = events;
    expectEnvelope(pendingEvent, account, created.body.id, 'conversation.status_changed');
    expect(pendingEvent.event.data).toEqual({ conversation: toPending.body, previous_status: 'active' });
    expect(activeEvent.event.data).toEqual({
      conversation: { ...toActive.body, status: 'active' },
      previous_status: 'pending',
    });
    expectEnvelope(closedEvent, account, created.body.id, 'conversation.closed');
    expect(closedEvent.event.data).toEqual({ conversation: { ...closed.body, status: 'closed' } });
    expectEnvelope(reopenedEvent, account, created.body.id, 'conversation.reopened');
    expect(reopenedEvent.event.data).toEqual({ conversation: reopened.body });
  });

  it('pending -> closed emits conversation.closed', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api, { status: 'pending' });
    const closed = await account.api.patch(`/v1/conversations/${created.body.id}`, { status: 'closed' });
    expect(closed.status).toBe(200);
    const reopened = await account.api.patch(`/v1/conversations/${created.body.id}`, { status: 'active' });
    expect(reopened.status).toBe(200);
    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual(['conversation.started', 'conversation.closed', 'conversation.reopened']);
    expect(events[1].event.data).toEqual({ conversation: closed.body });
  });

  it('a lead emits lead.captured carrying the stored lead', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api);
    const lead = await account.api.post(`/v1/conversations/${created.body.id}/lead`, {
      name: 'Grace',
      email: 'grace@example.com',
      phone: '+1 555 0100',
    });
    expect(lead.status).toBe(201);
    const phoneOnly = await account.api.post(`/v1/conversations/${created.body.id}/lead`, {
      phone: '+48 600 000 000',
    });
    expect(phoneOnly.status).toBe(201);
    const events = await eventsBeforeFence(account, created.body.id);
    expect(types(events)).toEqual(['conversation.started', 'lead.captured', 'lead.captured']);
    expectEnvelope(events[1], account, created.body.id, 'lead.captured');
    expect(events[1].event.data).toEqual({ conversation_id: created.body.id, lead: lead.body });
    expect(events[2].event.data).toEqual({ conversation_id: created.body.id, lead: phoneOnly.body });
  });

  it('no-op PATCHes and failed requests (400, 404, 409) emit nothing', async () => {
    const account = await stack.createAccount();
    const { api } = account;
    const created = await create(api);
    const id = created.body.id;
    const path = `/v1/conversations/${id}`;
    const unknown = randomUUID();

    const outcomes: Array<[string, number, number]> = [];
    const expectStatus = async (label: string, request: Promise<{ status: number }>, status: number) =>
      outcomes.push([label, (await request).status, status]);

    await expectStatus('no-op active', api.patch(path, { status: 'active' }), 200);
    await expectStatus('no-op aktif', api.patch(path, { status: 'aktif' }), 200);
    await expectStatus('no-op aktywne (pl path)', api.patch(`/v1/rozmowy/${id}`, { status: 'aktywne' }), 200);
    await expectStatus(
      '400 bad sender',
      api.post(`${path}/messages`, { content: 'x', sender: 'robot' }),
      400,
    );
    await expectStatus(
      '400 empty content',
      api.post(`${path}/messages`, { content: '', sender: 'agent' }),
      400,
    );
    await expectStatus('400 lead without contact', api.post(`${path}/lead`, { name: 'No Contact' }), 400);
    await expectStatus('400 lead bad email', api.post(`${path}/lead`, { email: 'not-an-email' }), 400);
    await expectStatus('400 bad status', api.patch(path, { status: 'archived' }), 400);
    await expectStatus(
      '400 create with bad status',
      api.post('/v1/conversations', { status: 'closed' }),
      400,
    );
    await expectStatus(
      '400 create with bad message',
      api.post('/v1/conversations', { message: { content: 'x' } }),
      400,
    );
    await expectStatus(
      '404 message',
      api.post(`/v1/conversations/${unknown}/messages`, { content: 'x', sender: 'agent' }),
      404,
    );
    await expectStatus('404 patch', api.patch(`/v1/conversations/${unknown}`, { status: 'closed' }), 404);
    await expectStatus('404 lead', api.post(`/v1/conversations/${unknown}/lead`, { email: 'a@b.co' }), 404);
    await expectStatus('close', api.patch(path, { status: 'closed' }), 200);
    await expectStatus('no-op closed', api.patch(path, { status: 'ditutup' }), 200);
    await expectStatus(
      '409 send to closed',
      api.post(`${path}/messages`, { content: 'x', sender: 'visitor' }),
      409,
    );
    await expectStatus('409 closed -> pending', api.patch(path, { status: 'pending' }), 409);
    await expectStatus('reopen', api.patch(path, { status: 'active' }), 200);
    // another account cannot touch this conversation (404), and that emits nothing either
    const stranger = await stack.createAccount();
    await expectStatus('404 foreign', stranger.api.patch(path, { status: 'closed' }), 404);
    await expectStatus(
      '404 foreign message',
      stranger.api.post(`${path}/messages`, { content: 'x', sender: 'agent' }),
      404,
    );

    expect(outcomes.map(([label, status]) => [label, status])).toEqual(
      outcomes.map(([label, , want]) => [label, want]),
    );

    const events = await eventsBeforeFence(account, id);
    expect(types(events)).toEqual(['conversation.started', 'conversation.closed', 'conversation.reopened']);
    expect(tap.forAccount(stranger.accountId)).toEqual([]);
    const outbox = await stack.query(
      `SELECT type FROM conversations.outbox WHERE account_id = $1 ORDER BY id`,
      [account.accountId],
    );
    expect(outbox.map((row) => row.type)).toEqual([
      'conversation.started',
      'conversation.closed',
      'conversation.reopened',
      'message.sent', // the fence
    ]);
  });

  it('~30 concurrent messages to one conversation: events arrive in the order GET lists the messages', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api);
    const senders = ['visitor', 'agent', 'bot'];
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        account.api.post(`/v1/conversations/${created.body.id}/messages`, {
          content: `m${i}`,
          sender: senders[i % 3],
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(30).fill(201));

    const read = await account.api.get(`/v1/conversations/${created.body.id}`);
    expect(read.body.messages).toHaveLength(30);
    expect(read.body.message_count).toBe(30);
    const listed: string[] = read.body.messages.map((m: { id: string }) => m.id);
    expect(new Set(listed)).toEqual(new Set(responses.map((r) => r.body.id)));

    const events = await tap.waitForAccount(account.accountId, 31);
    const messageEvents = events.filter((t) => t.event.type.startsWith('message.'));
    expect(types(events)[0]).toBe('conversation.started');
    expect(messageEvents.map((t) => (t.event.data as any).message.id)).toEqual(listed);
    messageEvents.forEach((t, i) => {
      const message = read.body.messages[i];
      expect(t.event.type).toBe(message.sender === 'visitor' ? 'message.received' : 'message.sent');
      expect(t.event.data).toEqual({ conversation_id: created.body.id, message });
    });
    // event times follow the same order
    const times = messageEvents.map((t) => Date.parse(t.event.time));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(await eventsBeforeFence(account, created.body.id)).toHaveLength(31);
  });

  it('every outbox row ends up published, and the stored envelope is exactly what was delivered', async () => {
    const account = await stack.createAccount();
    const created = await create(account.api, { message: { content: 'hey', sender: 'visitor' } });
    expect(
      (await account.api.patch(`/v1/conversations/${created.body.id}`, { status: 'pending' })).status,
    ).toBe(200);
    const delivered = await eventsBeforeFence(account, created.body.id);
    expect(delivered).toHaveLength(3);

    const rows = await eventually(async () => {
      const found = await stack.query(
        `SELECT event_id, type, conversation_id, envelope, published_at, created_at FROM conversations.outbox
          WHERE account_id = $1 ORDER BY id`,
        [account.accountId],
      );
      if (found.some((row) => row.published_at === null)) throw new Error('outbox rows still unpublished');
      return found;
    });
    expect(rows).toHaveLength(4); // three + the fence
    rows.slice(0, 3).forEach((row, i) => {
      expect(row.event_id).toBe(delivered[i].event.id);
      expect(row.type).toBe(delivered[i].event.type);
      expect(row.conversation_id).toBe(created.body.id);
      expect(row.envelope).toEqual(delivered[i].event);
      expect(row.published_at.getTime()).toBeGreaterThanOrEqual(row.created_at.getTime());
    });
  });

  describe('rows already in the outbox are relayed', () => {
    function envelopeFor(type: string, accountId: string, conversationId: string): CloudEvent {
      return {
        specversion: '1.0',
        id: randomUUID(),
        source: CLOUDEVENTS_SOURCE,
        type: type as CloudEvent['type'],
        time: new Date().toISOString(),
        subject: conversationId,
        datacontenttype: 'application/json',
        accountid: accountId,
        sequence: 1,
        data: {
          conversation_id: conversationId,
          lead: { id: randomUUID(), conversation_id: conversationId },
        } as never,
      };
    }

    async function expectRelayed(envelope: CloudEvent) {
      const tapped = await eventually(() => tap.events.find((t) => t.event.id === envelope.id) ?? false);
      expect(tapped.event).toEqual(envelope);
      expect(tapped.routingKey).toBe(envelope.type);
      expect(tapped.persistent).toBe(true);
      await eventually(async () => {
        const [row] = await stack.query(`SELECT published_at FROM conversations.outbox WHERE event_id = $1`, [
          envelope.id,
        ]);
        return row.published_at !== null;
      });
      expect(tap.events.filter((t) => t.event.id === envelope.id)).toHaveLength(1);
    }

    it('an unpublished row inserted directly (woken by NOTIFY) is published once', async () => {
      const envelope = envelopeFor('lead.captured', randomUUID(), randomUUID());
      await stack.query(
        `INSERT INTO conversations.outbox (event_id, account_id, conversation_id, type, envelope, sequence, published_at)
         VALUES ($1, $2, $3, $4, $5, 1, NULL)`,
        [envelope.id, envelope.accountid, envelope.subject, envelope.type, JSON.stringify(envelope)],
      );
      await expectRelayed(envelope);
    });

    it('an unpublished row written without a NOTIFY is published by the poll fallback', async () => {
      const envelope = envelopeFor('lead.captured', randomUUID(), randomUUID());
      // session_replication_role=replica skips the insert trigger for this one transaction
      await stack.query(`BEGIN;
        SET LOCAL session_replication_role = replica;
        INSERT INTO conversations.outbox (event_id, account_id, conversation_id, type, envelope, sequence)
        VALUES ('${envelope.id}', '${envelope.accountid}', '${envelope.subject}', '${envelope.type}',
                '${JSON.stringify(envelope).replace(/'/g, "''")}'::jsonb, 1);
        COMMIT;`);
      const [row] = await stack.query(`SELECT published_at FROM conversations.outbox WHERE event_id = $1`, [
        envelope.id,
      ]);
      expect(row).toBeDefined();
      await expectRelayed(envelope);
    });

    it('rows left unpublished while the service was down go out when it starts again', async () => {
      await stack.stopConversations();
      const envelopes = [0, 1, 2].map(() => envelopeFor('lead.captured', randomUUID(), randomUUID()));
      try {
        for (const envelope of envelopes) {
          await stack.query(
            `INSERT INTO conversations.outbox (event_id, account_id, conversation_id, type, envelope, sequence)
             VALUES ($1, $2, $3, $4, $5, 1)`,
            [envelope.id, envelope.accountid, envelope.subject, envelope.type, JSON.stringify(envelope)],
          );
        }
        const pending = await stack.query(
          `SELECT count(*)::int AS n FROM conversations.outbox WHERE event_id = ANY($1::uuid[]) AND published_at IS NULL`,
          [envelopes.map((e) => e.id)],
        );
        expect(pending[0].n).toBe(3);
        expect(tap.events.filter((t) => envelopes.some((e) => e.id === t.event.id))).toEqual([]);
      } finally {
        await stack.startConversations();
      }
      for (const envelope of envelopes) await expectRelayed(envelope);
      const order = envelopes.map((e) => tap.events.findIndex((t) => t.event.id === e.id));
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    });
  });
});
