import { Client } from 'pg';
import {
  eventually,
  ReceivedWebhook,
  TestAccount,
  TestStack,
  WebhookReceiver,
  WebhookReceivers,
} from '@app/testing';

/**
 * Event order, against a real receiver (docs/webhooks.md): a conversation's events arrive in order (creating
 * a conversation with a first message delivers conversation.started before message.received,
 * however many are created at once) with their `sequence`; the four event types added since the
 * interface are subscribable by name in every dialect, and `*` keeps meaning the four public ones.
 */

const conversationOf = (received: ReceivedWebhook): string =>
  received.json.data.conversation?.id ?? received.json.data.conversation_id;

describe('webhook event order and types', () => {
  let stack: TestStack;
  let account: TestAccount;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    // Long enough for a receiver a test keeps hanging on purpose (see the claims test below).
    stack = await TestStack.start({ webhooks: { WEBHOOK_TIMEOUT_MS: '30000' } });
    account = await stack.createAccount();
  });
  afterAll(async () => {
    await receivers.closeAll();
    await stack?.close();
  });

  async function subscribe(owner: TestAccount, url: string, body: Record<string, unknown>) {
    const created = await owner.api.post('/v1/webhooks', { url, ...body });
    expect(created.status).toBe(201);
    return created.body as { id: string; events: string[] };
  }

  it('delivers conversation.started before the first message of each of many conversations created at once', async () => {
    const owner = await stack.createAccount();
    const target = await receivers.start();
    // A receiver that takes a while, as real ones do: concurrent sends would overtake each other.
    target.answer((_request, index) => ({ status: 200, delayMs: index % 3 === 0 ? 30 : 0 }));
    await subscribe(owner, target.url, { events: ['*'] });
    const created: string[] = [];
    for (let round = 0; round < 5; round++) {
      const batch = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          owner.api.post('/v1/conversations', {
            message: { sender: 'visitor', content: `hi ${round}.${i}` },
          }),
        ),
      );
      created.push(...batch.map((response) => response.body.id as string));
    }
    await target.waitFor(created.length * 2, undefined, 30_000);
    const arrivals = new Map<string, Array<[string, number]>>();
    for (const received of target.received) {
      const id = conversationOf(received);
      arrivals.set(id, [...(arrivals.get(id) ?? []), [received.json.type, received.json.sequence]]);
    }
    for (const id of created) {
      expect({ id, arrivals: arrivals.get(id) }).toEqual({
        id,
        arrivals: [
          ['conversation.started', 1],
          ['message.received', 2],
        ],
      });
    }
  });

  it("holds a conversation's later events back while its earlier ones still wait to be claimed", async () => {
    // The race an integrator met (20 conversations started with a visitor message, then an agent
    // reply to each): the first events, fanned out while the endpoint's queue was full, waited in
    // Postgres for a claim; the replies, fanned out once the queue had room, were claimed at once
    // and sent first. Here the claim of the first events is held back on purpose (their rows
    // locked, as a claim running late would leave them) so the order cannot depend on timing.
    const owner = await stack.createAccount();
    const target = await receivers.start();
    target.answer((request) =>
      request.json.data.conversation?.subject === 'filler' ? 'hang' : { status: 200 },
    );
    const hook = await subscribe(owner, target.url, { events: ['*', 'message.sent'] });
    const deliveries = (where = 'true') =>
      stack.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks.deliveries WHERE subscription_id = $1 AND ${where}`,
        [hook.id],
      );

    // Fill the endpoint's queue: two rounds of its concurrency, the first round hanging.
    const fillers = 2 * stack.webhooksConfig().WEBHOOK_CONCURRENCY_PER_ENDPOINT;
    for (let i = 0; i < fillers; i++) await owner.api.post('/v1/conversations', { subject: 'filler' });
    await target.waitFor(fillers / 2);
    // The endpoint counts as full only once every filler is claimed: a fan-out batch checks it
    // once for all its rows, so one holding the last filler and a new conversation's first event
    // would claim both.
    await eventually(async () => (await deliveries('lease_owner IS NOT NULL'))[0].n === fillers);
    const started = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        owner.api.post('/v1/conversations', { message: { sender: 'visitor', content: `hello ${i}` } }),
      ),
    );
    const ids = started.map((response) => response.body.id as string);
    await eventually(async () => (await deliveries())[0].n === fillers + 2 * ids.length);

    const claims = new Client({ connectionString: process.env.DATABASE_URL });
    await claims.connect();
    try {
      await claims.query('BEGIN');
      const { rowCount } = await claims.query(
        `SELECT id FROM webhooks.deliveries WHERE subscription_id = $1 AND lease_owner IS NULL FOR UPDATE`,
        [hook.id],
      );
      expect(rowCount).toBe(2 * ids.length);
      target.answer({ status: 200 });
      target.release();
      await target.waitFor(fillers);
      const replies = await Promise.all(
        ids.map((id) =>
          owner.api.post(`/v1/conversations/${id}/messages`, { sender: 'agent', content: 'hi' }),
        ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(ids.map(() => 201));
      await eventually(async () => (await deliveries(`event_type = 'message.sent'`))[0].n === ids.length);
      // A reply sent ahead of its conversation's first events goes out now (or never: the fix).
      await eventually(() => target.received.length === fillers + ids.length, 2000).catch(() => undefined);
    } finally {
      await claims.query('COMMIT');
      await claims.end();
    }

    await target.waitFor(fillers + 3 * ids.length, undefined, 30_000);
    const sequences = new Map<string, number[]>();
    for (const received of target.received) {
      const id = conversationOf(received);
      sequences.set(id, [...(sequences.get(id) ?? []), received.json.sequence]);
    }
    const outOfOrder = ids.map((id) => sequences.get(id)?.join()).filter((order) => order !== '1,2,3');
    expect(outOfOrder).toEqual([]);
  });

  it('delivers the added event types to subscriptions naming them in any dialect, not to `*`', async () => {
    const [named, wildcard, both] = [
      await receivers.start(),
      await receivers.start(),
      await receivers.start(),
    ];
    const hook = await subscribe(account, named.url, {
      events: [
        'perbualan.dikemas_kini',
        'wiadomość.wysłana',
        'conversation.reopened',
        'rozmowa.stan_zmieniony',
      ],
      dialect: 'pl',
    });
    const shown = await account.api.get(`/v1/webhooks/${hook.id}`, { headers: { 'accept-language': 'ms' } });
    expect([...shown.body.events].sort()).toEqual(
      [
        'mesej.dihantar',
        'perbualan.dibuka_semula',
        'perbualan.dikemas_kini',
        'perbualan.status_berubah',
      ].sort(),
    );
    await subscribe(account, wildcard.url, { events: ['*'] });
    const mixed = await subscribe(account, both.url, {
      events: ['*', 'message.sent', 'conversation.started'],
    });
    expect(mixed.events).toEqual(['*', 'message.sent']);

    const { body } = await account.api.post('/v1/conversations', {});
    const id = body.id as string;
    await account.api.post(`/v1/conversations/${id}/messages`, { sender: 'agent', content: 'Hello' });
    await account.api.patch(`/v1/conversations/${id}`, { status: 'pending' });
    await account.api.patch(`/v1/conversations/${id}`, { status: 'closed' });
    await account.api.patch(`/v1/conversations/${id}`, { status: 'active' });
    await account.api.patch(`/v1/conversations/${id}`, { subject: 'Renamed' });

    await named.waitFor(4);
    await wildcard.waitFor(2);
    await both.waitFor(3);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = (target: WebhookReceiver) => target.received.map((r) => [r.json.type, r.json.sequence]);
    expect(seen(named)).toEqual([
      ['wiadomość.wysłana', 2],
      ['rozmowa.stan_zmieniony', 3],
      ['rozmowa.wznowiona', 5],
      ['rozmowa.zaktualizowana', 6],
    ]);
    expect(named.received[1].json.data).toMatchObject({
      previous_status: 'aktywne',
      conversation: { status: 'w toku' },
    });
    expect(seen(wildcard)).toEqual([
      ['conversation.started', 1],
      ['conversation.closed', 4],
    ]);
    expect(seen(both)).toEqual([
      ['conversation.started', 1],
      ['message.sent', 2],
      ['conversation.closed', 4],
    ]);
    await eventually(() => named.received.every((r) => typeof r.headers['webhook-id'] === 'string'));
    const [event] = (await account.api.get(`/v1/events?conversation_id=${id}&type=message.sent`)).body.data;
    expect(named.received[0].headers['webhook-id']).toBe(event.id);
  });
});
