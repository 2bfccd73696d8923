import { Webhook } from 'standardwebhooks';
import { loadConfig, webhooksSchema } from '@app/config';
import { EVENT_NAMES, PUBLIC_EVENT_TYPES } from '@app/dialects';
import {
  eventually,
  ReceivedWebhook,
  TestAccount,
  TestStack,
  WebhookReceiver,
  WebhookReceivers,
} from '@app/testing';

/**
 * Delivery end to end (docs/webhooks.md): real gateway, conversations and webhooks services,
 * RabbitMQ and Postgres, receivers on 127.0.0.1. Retries run on the test schedule `1,1,1`
 * (four attempts in all).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Each attempt's timeout here (WEBHOOK_TIMEOUT_MS; 10 s by default). */
const ATTEMPT_TIMEOUT_MS = 5000;
/** How much later than the sender's clock a receiver may stamp a request. */
const STAMP_SKEW_MS = 250;
/** In-flight attempts one endpoint may hold (its default). */
const ENDPOINT_CONCURRENCY = loadConfig(webhooksSchema, {}).WEBHOOK_CONCURRENCY_PER_ENDPOINT;

/** A port nothing listens on (a receiver that is down). */
async function closedPort(): Promise<number> {
  const probe = await WebhookReceiver.start();
  const { port } = probe;
  await probe.close();
  return port;
}

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
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    // A short attempt timeout, so the hanging receiver's attempts end within the test.
    stack = await TestStack.start({ webhooks: { WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS) } });
  });
  afterAll(async () => {
    await receivers.closeAll();
    await stack?.close();
  });

  async function subscribe(account: TestAccount, url: string, body: Record<string, unknown> = {}) {
    const created = await account.api.post('/v1/webhooks', { url, events: ['*'], ...body });
    expect(created.status).toBe(201);
    return created.body as { id: string; secret: string };
  }

  /** Makes each of the four public events happen once on a new conversation. */
  async function allFourEvents(account: TestAccount): Promise<string> {
    const created = await account.api.post('/v1/conversations', {
      subject: 'Webhooks',
      message: { sender: 'visitor', content: 'Hi' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(
      (await account.api.post(`/v1/conversations/${id}/lead`, { email: 'ada@example.com' })).status,
    ).toBe(201);
    expect((await account.api.patch(`/v1/conversations/${id}`, { status: 'closed' })).status).toBe(200);
    return id;
  }

  describe.each(['en', 'ms', 'pl'] as const)('dialect %s', (dialect) => {
    it('delivers each of the four events, signed, with type in the dialect', async () => {
      const account = await stack.createAccount();
      const target = await receivers.start();
      const { secret } = await subscribe(account, target.url, { dialect });
      const conversationId = await allFourEvents(account);
      const received = await target.waitFor(4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(target.received).toHaveLength(4);

      const types = PUBLIC_EVENT_TYPES;
      const payloads = received.map((r) => verify(secret, r));
      expect(payloads.map((p) => p.type).sort()).toEqual(types.map((t) => EVENT_NAMES[t][dialect]).sort());
      for (const [index, payload] of payloads.entries()) {
        expect(Object.keys(payload).sort()).toEqual(['data', 'sequence', 'timestamp', 'type']);
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
    const target = await receivers.start();
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
    expect(delivery).toMatchObject({
      event_id: first.headers['webhook-id'],
      attempt_count: 2,
      last_status_code: 204,
    });
    const detail = await account.api.get(`/v1/webhooks/${hook.id}/deliveries/${delivery.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 500, response_body: 'boom', error: null }),
      expect.objectContaining({ attempt: 2, status_code: 204, response_body: '', error: null }),
    ]);
  });

  async function deliveries(account: TestAccount, hookId: string, query = '') {
    const list = await account.api.get(`/v1/webhooks/${hookId}/deliveries${query}`);
    expect(list.status).toBe(200);
    return list.body.data as any[];
  }

  async function attemptsOf(account: TestAccount, hookId: string, deliveryId: string) {
    const detail = await account.api.get(`/v1/webhooks/${hookId}/deliveries/${deliveryId}`);
    expect(detail.status).toBe(200);
    return detail.body;
  }

  it('receiver down for the whole schedule: four attempts, each logged, then failed; a manual retry delivers with the same webhook-id', async () => {
    const account = await stack.createAccount();
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/hooks`;
    const hook = await subscribe(account, url, { events: ['lead.captured'] });
    const conversation = await account.api.post('/v1/conversations', {});
    await account.api.post(`/v1/conversations/${conversation.body.id}/lead`, { phone: '+48 22 123 45 67' });

    const [failed] = await eventually(
      async () => {
        const found = await deliveries(account, hook.id, '?status=failed');
        expect(found).toHaveLength(1);
        return found;
      },
      15_000,
      200,
    );
    expect(failed).toMatchObject({
      status: 'failed',
      attempt_count: 4,
      next_attempt_at: null,
      last_status_code: null,
      event_type: 'lead.captured',
    });
    expect(failed.completed_at).not.toBeNull();
    const detail = await attemptsOf(account, hook.id, failed.id);
    expect(detail.attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3, 4]);
    for (const attempt of detail.attempts) {
      expect(attempt).toEqual({
        attempt: expect.any(Number),
        started_at: expect.any(String),
        duration_ms: expect.any(Number),
        status_code: null,
        response_body: null,
        error: 'connection refused',
      });
    }
    // one second apart (the test schedule), never earlier
    const starts = detail.attempts.map((a: any) => Date.parse(a.started_at));
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(990);
    expect((await account.api.get(`/v1/webhooks/${hook.id}`)).body.failing_since).not.toBeNull();

    const target = await receivers.start(port);
    const retried = await account.api.post(`/v1/webhooks/${hook.id}/deliveries/${failed.id}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: failed.id, status: 'pending', attempt_count: 4 });
    const [received] = await target.waitFor(1);
    expect(received.headers['webhook-id']).toBe(failed.event_id);
    expect(verify(hook.secret, received).type).toBe('lead.captured');
    const done = await eventually(async () => {
      const found = await attemptsOf(account, hook.id, failed.id);
      expect(found.status).toBe('succeeded');
      return found;
    });
    expect(done).toMatchObject({ attempt_count: 5, last_status_code: 200 });
    expect(done.attempts[4]).toMatchObject({
      attempt: 5,
      status_code: 200,
      response_body: 'ok',
      error: null,
    });
    expect((await account.api.get(`/v1/webhooks/${hook.id}`)).body.failing_since).toBeNull();
    // a succeeded delivery can be sent again too; a pending one cannot
    target.answer('hang');
    expect((await account.api.post(`/v1/webhooks/${hook.id}/deliveries/${failed.id}/retry`)).status).toBe(
      202,
    );
    const pending = await account.api.post(`/v1/webhooks/${hook.id}/deliveries/${failed.id}/retry`);
    expect({ status: pending.status, code: pending.body.code }).toEqual({
      status: 409,
      code: 'delivery_pending',
    });
  });

  it('a hanging receiver does not delay deliveries to a healthy one', async () => {
    const account = await stack.createAccount();
    const hanging = await receivers.start();
    hanging.answer('hang');
    const healthy = await receivers.start();
    const slow = await subscribe(account, hanging.url, { events: ['conversation.started'] });
    await subscribe(account, healthy.url, { events: ['conversation.started'] });
    const count = 30;
    const sentAt: number[] = [];
    for (let i = 0; i < count; i++) {
      sentAt.push(Date.now());
      expect((await account.api.post('/v1/conversations', { subject: `n${i}` })).status).toBe(201);
    }
    const received = await healthy.waitFor(count, () => true, 10_000);
    const latencies = received.map(
      (r) => r.receivedAt - sentAt[Number(/n(\d+)/.exec(r.json.data.conversation.subject)![1])],
    );
    // Had a healthy delivery queued behind a hanging attempt, it would have waited for that
    // attempt's timeout; none did (a bound on cause, not a latency target: those are benchmarks).
    expect(Math.max(...latencies)).toBeLessThan(ATTEMPT_TIMEOUT_MS);
    // The hanging endpoint holds at most its own concurrency at once: until the first attempt
    // times out, no more than WEBHOOK_CONCURRENCY_PER_ENDPOINT requests reach it. (The receiver
    // stamps a request when its body has arrived, some ms after the sender started its clock.)
    const firstAt = hanging.received[0].receivedAt;
    const beforeFirstTimeout = hanging.received.filter(
      (r) => r.receivedAt < firstAt + ATTEMPT_TIMEOUT_MS - STAMP_SKEW_MS,
    );
    expect(beforeFirstTimeout.length).toBeGreaterThan(0);
    expect(beforeFirstTimeout.length).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
    // Its attempts time out (ATTEMPT_TIMEOUT_MS) and are logged as such.
    const timedOut = await eventually(
      async () => {
        const found = (await deliveries(account, slow.id, '?limit=100')).filter((d) => d.attempt_count > 0);
        expect(found.length).toBeGreaterThan(0);
        return found[0];
      },
      ATTEMPT_TIMEOUT_MS * 3,
      200,
    );
    const detail = await attemptsOf(account, slow.id, timedOut.id);
    expect(detail.attempts[0]).toMatchObject({
      status_code: null,
      error: `timed out after ${ATTEMPT_TIMEOUT_MS} ms`,
    });
    expect(detail.attempts[0].duration_ms).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS - 100);
    await account.api.patch(`/v1/webhooks/${slow.id}`, { status: 'disabled' });
  });

  it('a disabled or deleted subscription receives nothing; the others still do', async () => {
    const account = await stack.createAccount();
    const [disabledTarget, deletedTarget, control] = [
      await receivers.start(),
      await receivers.start(),
      await receivers.start(),
    ];
    const disabled = await subscribe(account, disabledTarget.url, { events: ['conversation.started'] });
    const deleted = await subscribe(account, deletedTarget.url, { events: ['conversation.started'] });
    const created = await subscribe(account, control.url, {
      events: ['conversation.started'],
      status: 'disabled',
    });
    expect((await account.api.patch(`/v1/webhooks/${disabled.id}`, { status: 'disabled' })).status).toBe(200);
    expect((await account.api.request('DELETE', `/v1/webhooks/${deleted.id}`)).status).toBe(204);
    expect((await account.api.patch(`/v1/webhooks/${created.id}`, { status: 'enabled' })).status).toBe(200);
    for (let i = 0; i < 3; i++) await account.api.post('/v1/conversations', {});
    await control.waitFor(3);
    // The fan-out creates every delivery of an event in one statement: none exist for the others.
    const rows = await stack.query(
      `SELECT count(*)::int AS n FROM webhooks.deliveries WHERE subscription_id = ANY($1::uuid[])`,
      [[disabled.id, deleted.id]],
    );
    expect(rows[0].n).toBe(0);
    expect(disabledTarget.received).toHaveLength(0);
    expect(deletedTarget.received).toHaveLength(0);
    expect(disabledTarget.connections + deletedTarget.connections).toBe(0);
  });

  it('pending retries of a subscription that gets disabled are not sent; re-enabling resumes them', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    target.answer({ status: 500 });
    const hook = await subscribe(account, target.url, { events: ['conversation.started'] });
    await account.api.post('/v1/conversations', {});
    await target.waitFor(1);
    expect((await account.api.patch(`/v1/webhooks/${hook.id}`, { status: 'disabled' })).status).toBe(200);
    target.answer({ status: 200 });
    const [paused] = await deliveries(account, hook.id);
    expect(paused).toMatchObject({ status: 'pending', next_attempt_at: null });
    // Paused: off the dispatchers' due index until re-enabled.
    const [row] = await stack.query(`SELECT next_attempt_at FROM webhooks.deliveries WHERE id = $1`, [
      paused.id,
    ]);
    expect(row.next_attempt_at).toBeNull();
    expect(target.received).toHaveLength(1);
    expect((await account.api.patch(`/v1/webhooks/${hook.id}`, { status: 'enabled' })).status).toBe(200);
    await target.waitFor(2);
    await eventually(async () => (await deliveries(account, hook.id))[0].status === 'succeeded');
  });

  it('a 410 disables the subscription at once and fails the delivery', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    target.answer({ status: 410, body: 'gone' });
    const hook = await subscribe(account, target.url, { events: ['conversation.started'] });
    await account.api.post('/v1/conversations', {});
    await target.waitFor(1);
    const disabled = await eventually(async () => {
      const read = await account.api.get(`/v1/webhooks/${hook.id}`);
      expect(read.body.status).toBe('disabled');
      return read.body;
    });
    expect(disabled.disabled_reason).toBe('endpoint_gone');
    expect((await deliveries(account, hook.id))[0]).toMatchObject({
      status: 'failed',
      attempt_count: 1,
      last_status_code: 410,
    });
    await account.api.post('/v1/conversations', {});
    const test = await account.api.post(`/v1/webhooks/${hook.id}/test`);
    expect({ status: test.status, code: test.body.code }).toEqual({ status: 409, code: 'webhook_disabled' });
    expect(target.received).toHaveLength(1);
  });

  it.each([429, 503])('honours Retry-After on a %i', async (status) => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    target.answer((_, index) =>
      index === 0 ? { status, headers: { 'retry-after': '3' } } : { status: 200 },
    );
    await subscribe(account, target.url, { events: ['conversation.started'] });
    await account.api.post('/v1/conversations', {});
    const [first, second] = await target.waitFor(2, () => true, 10_000);
    // The schedule says 1 s; the subscriber asked for 3.
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(2900);
  });

  it('a subscription failing for 5 days is disabled at its next failed attempt', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    target.answer({ status: 500 });
    const hook = await subscribe(account, target.url, { events: ['conversation.started'] });
    await stack.query(
      `UPDATE webhooks.subscriptions SET failing_since = now() - interval '5 days 1 minute' WHERE id = $1`,
      [hook.id],
    );
    await account.api.post('/v1/conversations', {});
    await target.waitFor(1);
    const read = await eventually(async () => {
      const found = await account.api.get(`/v1/webhooks/${hook.id}`);
      expect(found.body.status).toBe('disabled');
      return found.body;
    });
    expect(read.disabled_reason).toBe('failing');
    const [row] = await stack.query(
      `SELECT status, next_attempt_at FROM webhooks.deliveries WHERE subscription_id = $1`,
      [hook.id],
    );
    expect(row).toEqual({ status: 'pending', next_attempt_at: null });
    expect(target.received).toHaveLength(1);
  });

  it('a failure within the 5 days does not disable, and a success ends the streak', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    target.answer((_, index) => (index === 0 ? { status: 500 } : { status: 200 }));
    const hook = await subscribe(account, target.url, { events: ['conversation.started'] });
    await stack.query(
      `UPDATE webhooks.subscriptions SET failing_since = now() - interval '4 days' WHERE id = $1`,
      [hook.id],
    );
    await account.api.post('/v1/conversations', {});
    await target.waitFor(2);
    await eventually(async () => {
      const found = (await account.api.get(`/v1/webhooks/${hook.id}`)).body;
      expect(found).toMatchObject({ status: 'enabled', failing_since: null });
      return true;
    });
  });

  it('POST /test sends webhook.test to that subscription alone', async () => {
    const account = await stack.createAccount();
    const [target, other] = [await receivers.start(), await receivers.start()];
    const hook = await subscribe(account, target.url, { dialect: 'pl' });
    await subscribe(account, other.url);
    const test = await account.api.post(`/v1/webhooks/${hook.id}/test`, undefined, {
      headers: { 'accept-language': 'ms' },
    });
    expect(test.status).toBe(202);
    expect(test.body).toMatchObject({
      webhook_id: hook.id,
      event_type: 'webhook.test',
      status: 'pending',
      attempt_count: 0,
    });
    const [received] = await target.waitFor(1);
    const payload = verify(hook.secret, received);
    expect(payload).toEqual({
      type: 'webhook.test',
      timestamp: expect.any(String),
      data: { webhook_id: hook.id, message: expect.any(String) },
    });
    expect(received.headers['webhook-id']).toBe(test.body.event_id);
    await eventually(async () => (await deliveries(account, hook.id))[0].status === 'succeeded');
    expect(other.received).toHaveLength(0);
    expect(other.connections).toBe(0);
  });

  it('after a secret rotation deliveries carry both signatures; either secret verifies', async () => {
    const account = await stack.createAccount();
    const target = await receivers.start();
    const hook = await subscribe(account, target.url);
    const rotated = await account.api.post(`/v1/webhooks/${hook.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    await account.api.post(`/v1/webhooks/${hook.id}/test`);
    const [received] = await target.waitFor(1);
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, received).type).toBe('webhook.test');
    expect(verify(hook.secret, received).type).toBe('webhook.test');
  });
});
