import {
  eventually,
  ReceivedWebhook,
  TestAccount,
  TestStack,
  WebhookReceiver,
  WebhookReceivers,
} from '@app/testing';

/**
 * Issue 14, items 6-7, against a real receiver: a conversation's events arrive in order (creating
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
    stack = await TestStack.start({ webhooks: true });
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
