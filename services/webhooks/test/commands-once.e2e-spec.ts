import { randomUUID } from 'node:crypto';
import { RpcRequest, WEBHOOKS_RPC_QUEUE, WebhookRpc } from '@app/contracts';
import { RpcProbe, rpcRequest, TestAccount, TestStack } from '@app/testing';

/**
 * Every write of the webhooks service's RPC queue delivered twice under one command id, as the
 * gateway sends a command again after losing its broker connection (docs/scaling.md, "RabbitMQ
 * cluster"): applied once, and the second copy answered with the first reply, even after a later
 * write or once the first made the command impossible (a delete).
 */
describe('webhooks.rpc: a command delivered twice is applied once', () => {
  let stack: TestStack;
  let probe: RpcProbe;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    probe = await RpcProbe.open(WEBHOOKS_RPC_QUEUE);
    account = await stack.createAccount();
  });
  afterAll(async () => {
    await probe?.close();
    await stack?.close();
  });

  const request = (pattern: string, data: unknown): RpcRequest =>
    rpcRequest(account.accountId, pattern, data);

  /** Sends `command` twice (each copy with its own request id, as a resend) and returns both replies' bodies. */
  async function twice(command: RpcRequest): Promise<[unknown, unknown]> {
    const first = await probe.call(command);
    const second = await probe.call({ ...command, requestId: `req-${randomUUID()}` });
    return [first.body, second.body];
  }

  async function createWebhook(): Promise<string> {
    const { body } = await probe.call(
      request(WebhookRpc.create.pattern, { url: 'http://127.0.0.1:9/hooks', events: ['*'] }),
    );
    expect(body.ok).toBe(true);
    return (body as { data: { id: string } }).data.id;
  }

  const subscriptions = () =>
    stack.query<{ id: string; description: string | null }>(
      `SELECT id, description FROM webhooks.subscriptions WHERE account_id = $1 ORDER BY created_at`,
      [account.accountId],
    );

  it('create: one subscription, one secret', async () => {
    const before = (await subscriptions()).length;
    const [first, second] = await twice(
      request(WebhookRpc.create.pattern, { url: 'http://127.0.0.1:9/once', events: ['*'] }),
    );
    expect(first).toMatchObject({ ok: true, data: { secret: expect.any(String) } });
    expect(second).toEqual(first);
    expect(await subscriptions()).toHaveLength(before + 1);
  });

  it('update: the repeat after a later update changes nothing and gets the first reply', async () => {
    const webhookId = await createWebhook();
    const update = request(WebhookRpc.update.pattern, { webhookId, description: 'first' });
    const first = await probe.call(update);
    expect(first.body).toMatchObject({ ok: true, data: { description: 'first' } });
    const later = await probe.call(request(WebhookRpc.update.pattern, { webhookId, description: 'later' }));
    expect(later.body.ok).toBe(true);

    const repeated = await probe.call({ ...update, requestId: `req-${randomUUID()}` });
    expect(repeated.body).toEqual(first.body);
    expect((await subscriptions()).find((row) => row.id === webhookId)?.description).toBe('later');
  });

  it('delete: the repeat is answered as the first (no 404), the subscription gone', async () => {
    const webhookId = await createWebhook();
    const [first, second] = await twice(request(WebhookRpc.delete.pattern, { webhookId }));
    expect(first).toEqual({ ok: true, data: null });
    expect(second).toEqual(first);
    expect((await subscriptions()).map((row) => row.id)).not.toContain(webhookId);
  });

  it('rotate-secret: one rotation: the same new secret in both replies', async () => {
    const webhookId = await createWebhook();
    const [first, second] = await twice(request(WebhookRpc.rotateSecret.pattern, { webhookId }));
    expect(first).toMatchObject({ ok: true, data: { secret: expect.any(String) } });
    // A second rotation would have answered another new secret.
    expect(second).toEqual(first);
  });

  it('test: one test delivery', async () => {
    const webhookId = await createWebhook();
    const [first, second] = await twice(request(WebhookRpc.test.pattern, { webhookId }));
    expect(first).toMatchObject({ ok: true, data: { id: expect.any(String) } });
    expect(second).toEqual(first);
    const deliveries = await stack.query(`SELECT id FROM webhooks.deliveries WHERE subscription_id = $1`, [
      webhookId,
    ]);
    expect(deliveries).toHaveLength(1);
  });
});
