import { Webhook } from 'standardwebhooks';
import { EVENT_NAMES } from '@app/dialects';
import { expectProblem, ReceivedWebhook, TestAccount, TestStack, WebhookReceivers } from '@app/testing';

/**
 * Replay (docs/webhooks.md, "Replay"): the stored events of a window re-delivered to a real
 * receiver on 127.0.0.1, in order, with their original webhook-id, signed with the current secret.
 */

const verify = (secret: string, received: ReceivedWebhook) =>
  new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as { type: string; sequence: number };

describe('webhook replay', () => {
  let stack: TestStack;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
  });
  afterAll(async () => {
    await receivers.closeAll();
    await stack?.close();
  });

  /** A conversation started, a visitor message, then closed: three events, in this order. */
  async function threeEvents(account: TestAccount): Promise<string> {
    const created = await account.api.post('/v1/conversations', {
      message: { sender: 'visitor', content: 'Hello' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await account.api.patch(`/v1/conversations/${id}`, { status: 'closed' })).status).toBe(200);
    return id;
  }

  describe.each(['en', 'ms', 'pl'] as const)('in %s', (dialect) => {
    it("re-delivers the window's events in order, same webhook-id, signed with the current secret", async () => {
      const account = await stack.createAccount();
      const target = await receivers.start();
      const since = new Date(Date.now() - 1000).toISOString();
      const created = await account.api.post('/v1/webhooks', { url: target.url, events: ['*'], dialect });
      expect(created.status).toBe(201);
      const webhookId = created.body.id as string;
      await threeEvents(account);
      const originals = await target.waitFor(3);
      const rotated = await account.api.post(`/v1/webhooks/${webhookId}/secret/rotate`);
      const secret = rotated.body.secret as string;

      // Types named in the subscription's dialect; the window is the events' own.
      const types = ['conversation.started', 'message.received', 'conversation.closed'].map(
        (type) => EVENT_NAMES[type as keyof typeof EVENT_NAMES][dialect],
      );
      const replay = await account.api.post(`/v1/webhooks/${webhookId}/replay`, { since, types });
      expect(replay.status).toBe(202);
      expect(replay.body).toEqual({ events: 3 });

      const received = (await target.waitFor(6)).slice(3);
      const payloads = received.map((request) => verify(secret, request));
      expect(payloads.map((payload) => payload.type)).toEqual(types);
      expect(payloads.map((payload) => payload.sequence)).toEqual([1, 2, 3]);
      const ids = (requests: ReceivedWebhook[]) => requests.map((request) => request.headers['webhook-id']);
      expect(new Set(ids(received))).toEqual(new Set(ids(originals)));
      const deliveries = await account.api.get(`/v1/webhooks/${webhookId}/deliveries?limit=100`);
      expect(deliveries.body.pagination.total).toBe(6);
    });
  });

  it("defaults to the subscription's types and now, and replays nothing outside the window", async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    const created = await account.api.post('/v1/webhooks', { url: target.url, events: ['lead.captured'] });
    const before = new Date(Date.now() - 1000).toISOString();
    await threeEvents(account);
    const empty = await account.api.post(`/v1/webhooks/${created.body.id}/replay`, { since: before });
    expect(empty.body).toEqual({ events: 0 });
    const later = await account.api.post(`/v1/webhooks/${created.body.id}/replay`, {
      since: new Date(Date.now() + 60_000).toISOString(),
      until: new Date(Date.now() + 120_000).toISOString(),
      types: ['*'],
    });
    expect(later.body).toEqual({ events: 0 });
    expect(target.received).toHaveLength(0);
  });

  it('refuses a window of more than 10,000 events with 422 replay_too_large, sending nothing', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    const created = await account.api.post('/v1/webhooks', { url: target.url, events: ['*'] });
    const since = new Date(Date.now() - 1000).toISOString();
    await threeEvents(account);
    await target.waitFor(3);
    // 9,998 more stored events (already published, so nothing else sees them): 10,001 in the window.
    await stack.query(
      `INSERT INTO conversations.outbox
         (event_id, account_id, conversation_id, type, envelope, created_at, published_at, sequence, published_seq)
       SELECT gen_random_uuid(), account_id, conversation_id, type, envelope, created_at, published_at, sequence, published_seq
         FROM conversations.outbox, generate_series(1, 9998)
        WHERE account_id = $1 AND type = 'conversation.closed'`,
      [account.accountId],
    );
    const refused = await account.api.post(`/v1/webhooks/${created.body.id}/replay`, { since });
    expectProblem(refused, 422, 'replay_too_large');
    expect(refused.body.detail).toContain('10001 events, over the 10000');
    const deliveries = await account.api.get(`/v1/webhooks/${created.body.id}/deliveries`);
    expect(deliveries.body.pagination.total).toBe(3);
  });

  it('answers 404 for an unknown webhook, 409 for a disabled one, 400 for a window that ends first', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    const since = new Date().toISOString();
    expectProblem(
      await account.api.post('/v1/webhooks/3f2a9c1e-7b6d-4e5f-8a9b-0c1d2e3f4a5b/replay', { since }),
      404,
      'not_found',
    );
    const created = await account.api.post('/v1/webhooks', { url: target.url, events: ['*'] });
    const path = `/v1/webhooks/${created.body.id}/replay`;
    expectProblem(await account.api.post(path, { since, until: since }), 400, 'validation_failed');
    expectProblem(await account.api.post(path, {}), 400, 'validation_failed');
    await account.api.patch(`/v1/webhooks/${created.body.id}`, { status: 'disabled' });
    expectProblem(await account.api.post(path, { since }), 409, 'webhook_disabled');
  });
});
