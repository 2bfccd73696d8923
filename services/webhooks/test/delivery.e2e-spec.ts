import { Webhook } from 'standardwebhooks';
import { EVENT_NAMES, PublicEventType } from '@app/dialects';
import { eventually, ReceivedWebhook, TestAccount, TestStack, WebhookReceiver } from '@app/testing';

/**
 * Delivery end to end (DESIGN.md, Events): real gateway, conversations and webhooks services,
 * RabbitMQ and Postgres, receivers on 127.0.0.1. Retries run on the test schedule `1,1,1`
 * (four attempts in all).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Verifies a received request with the reference Standard Webhooks implementation; returns the payload. */
function verify(secret: string, received: ReceivedWebhook): any {
  const headers = {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(received.body, headers);
}

describe('webhook delivery', () => {
  let stack: TestStack;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.close();
  });

  async function receiver(): Promise<WebhookReceiver> {
    const started = await WebhookReceiver.start();
    receivers.push(started);
    return started;
  }

  async function subscribe(account: TestAccount, url: string, body: Record<string, unknown> = {}) {
    const created = await account.api.post('/v1/webhooks', { url, events: ['*'], ...body });
    expect(created.status).toBe(201);
    return created.body as { id: string; secret: string };
  }

  /** Makes each of the four public events happen once on a new conversation. */
  async function allFourEvents(account: TestAccount): Promise<string> {
    const created = await account.api.post('/v1/conversations', { subject: 'Webhooks', message: { sender: 'visitor', content: 'Hi' } });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await account.api.post(`/v1/conversations/${id}/lead`, { email: 'ada@example.com' })).status).toBe(201);
    expect((await account.api.patch(`/v1/conversations/${id}`, { status: 'closed' })).status).toBe(200);
    return id;
  }

  describe.each(['en', 'ms', 'pl'] as const)('dialect %s', (dialect) => {
    it('delivers each of the four events, signed, with type in the dialect', async () => {
      const account = await stack.createAccount();
      const target = await receiver();
      const { secret } = await subscribe(account, target.url, { dialect });
      const conversationId = await allFourEvents(account);
      const received = await target.waitFor(4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(target.received).toHaveLength(4);

      const types = Object.keys(EVENT_NAMES) as PublicEventType[];
      const payloads = received.map((r) => verify(secret, r));
      expect(payloads.map((p) => p.type).sort()).toEqual(types.map((t) => EVENT_NAMES[t][dialect]).sort());
      for (const [index, payload] of payloads.entries()) {
        expect(Object.keys(payload).sort()).toEqual(['data', 'timestamp', 'type']);
        expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
        const headers = received[index].headers;
        expect(headers['webhook-id']).toMatch(UUID);
        expect(headers['content-type']).toBe('application/json');
        expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
        expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
        const data = payload.data;
        expect(data.conversation?.id ?? data.conversation_id).toBe(conversationId);
      }
      const closed = payloads.find((p) => p.type === EVENT_NAMES['conversation.closed'][dialect]);
      expect(closed.data.conversation.status).toBe({ en: 'closed', ms: 'ditutup', pl: 'zamknięte' }[dialect]);
      // a different secret does not verify
      expect(() => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), received[0])).toThrow();
    });
  });

  it('retries a 500 and delivers on the second attempt with the same webhook-id', async () => {
    const account = await stack.createAccount();
    const target = await receiver();
    target.answer((_, index) => (index === 0 ? { status: 500, body: 'boom' } : { status: 204 }));
    const hook = await subscribe(account, target.url, { events: ['conversation.started'] });
    await account.api.post('/v1/conversations', {});
    const [first, second] = await target.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(900);
    verify(hook.secret, second);

    const delivery = await eventually(async () => {
      const list = await account.api.get(`/v1/webhooks/${hook.id}/deliveries`);
      expect(list.body.data[0]?.status).toBe('succeeded');
      return list.body.data[0];
    });
    expect(delivery).toMatchObject({ event_id: first.headers['webhook-id'], attempt_count: 2, last_status_code: 204 });
    const detail = await account.api.get(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 500, response_body: 'boom', error: null }),
      expect.objectContaining({ attempt: 2, status_code: 204, response_body: '', error: null }),
    ]);
  });
});
