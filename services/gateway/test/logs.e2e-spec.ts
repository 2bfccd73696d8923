import { randomBytes } from 'node:crypto';
import { ApiClient, createAccountWithCli, eventually, ServiceProcess, WebhookReceiver } from '@app/testing';

/**
 * JSON logs (docs/operations.md, "Logs") of the three services as real processes at the default level: one
 * line per HTTP request at the gateway, the same request id in the conversations and webhooks
 * services' lines for that request, and no credential, message content or visitor contact detail
 * in any line.
 */

interface LogLine {
  service: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

function linesOf(service: ServiceProcess): LogLine[] {
  return service.logs
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe('logs', () => {
  let gateway: ServiceProcess;
  let conversations: ServiceProcess;
  let webhooks: ServiceProcess;
  let receiver: WebhookReceiver;
  let api: ApiClient;
  let account: { accountId: string; apiKey: string };

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    [conversations, webhooks, gateway] = await Promise.all([
      ServiceProcess.start('conversations'),
      ServiceProcess.start('webhooks', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }),
      // Counters of its own: other files' failed authentications from 127.0.0.1 (the fuzz test's)
      // would otherwise have this gateway answer its bad key 429 instead of 401.
      ServiceProcess.start('gateway', { REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}logs:` }),
    ]);
    account = await createAccountWithCli('Logs');
    api = new ApiClient(gateway.url, account.apiKey);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([gateway?.stop(), conversations?.stop(), webhooks?.stop()]);
    await receiver?.close();
  });

  const all = () => [gateway, conversations, webhooks];
  const linesFor = (service: ServiceProcess, requestId: string) =>
    linesOf(service).filter((line) => line.request_id === requestId);

  it('one request id, followed from the gateway through the conversations and webhooks services; no secrets or content anywhere', async () => {
    const marker = randomBytes(6).toString('hex');
    const visitor = {
      name: `Visitor ${marker}`,
      email: `v${marker}@example.com`,
      phone: `+48 600 ${marker.slice(0, 6)}`,
    };
    const content = `Where is parcel ${marker}?`;

    const subscription = await api.post('/v1/webhooks', { url: receiver.url, events: ['*'] });
    expect(subscription.status).toBe(201);
    const secret: string = subscription.body.secret;
    expect(secret).toMatch(/^whsec_/);

    const created = await api.post('/v1/conversations', { visitor, message: { sender: 'visitor', content } });
    expect(created.status).toBe(201);
    const requestId = created.headers.get('x-request-id')!;
    const lead = await api.post(`/v1/conversations/${created.body.id}/lead`, {
      ...visitor,
      email: `lead-${visitor.email}`,
    });
    expect(lead.status).toBe(201);
    const reply = await api.post(`/v1/conversations/${created.body.id}/messages`, {
      sender: 'agent',
      content: `${content} reply`,
    });
    expect(reply.status).toBe(201);
    await receiver.waitFor(3);

    // The gateway: exactly one line for the request, with its route template, caller and outcome.
    const gatewayLines = await eventually(
      () => linesFor(gateway, requestId).length > 0 && linesFor(gateway, requestId),
    );
    expect(gatewayLines).toEqual([
      expect.objectContaining({
        service: 'gateway',
        level: 'info',
        msg: 'request completed',
        request_id: requestId,
        account_id: account.accountId,
        method: 'POST',
        route: '/v1/conversations',
        status: 201,
        duration_ms: expect.any(Number),
      }),
    ]);
    // The conversations service handled it under the same request id.
    const handled = await eventually(
      () => linesFor(conversations, requestId).length > 0 && linesFor(conversations, requestId),
    );
    expect(handled).toContainEqual(
      expect.objectContaining({
        service: 'conversations',
        msg: 'rpc handled',
        request_id: requestId,
        account_id: account.accountId,
        outcome: 'ok',
      }),
    );
    // The webhooks service fanned out its events (started, message received) naming it too.
    const fannedOut = await eventually(
      () => linesFor(webhooks, requestId).length >= 2 && linesFor(webhooks, requestId),
    );
    expect(fannedOut.map((line) => [line.msg, line.type, line.deliveries])).toEqual(
      expect.arrayContaining([
        ['event fanned out', 'conversation.started', 1],
        ['event fanned out', 'message.received', 1],
      ]),
    );

    // Nothing secret at the default level, in any service.
    const [, keyId, keySecret] = /^cms_([0-9a-f]+)_(.+)$/.exec(account.apiKey)!;
    expect(keyId).toBeTruthy();
    for (const service of all()) {
      for (const forbidden of [account.apiKey, keySecret, secret, secret.slice('whsec_'.length), marker]) {
        expect({ service: service.name, leaked: service.logs.includes(forbidden) }).toEqual({
          service: service.name,
          leaked: false,
        });
      }
    }
  }, 60_000);

  it('requests the gateway refuses get their line too: 401 (key not logged), 404 for an unknown path or a malformed URL', async () => {
    const wrongKey = `cms_${'0'.repeat(16)}_${randomBytes(32).toString('base64url')}`;
    const refused = await api.get('/v1/conversations', { apiKey: wrongKey });
    expect(refused.status).toBe(401);
    const unknown = await api.get('/v1/nothing-here', { contract: false });
    expect(unknown.status).toBe(404);
    const malformed = await api.get('/v1/conversations/%E0%A4%A', { contract: false });
    expect(malformed.status).toBe(404);

    const lineOf = (response: { headers: Headers }) =>
      eventually(() => linesFor(gateway, response.headers.get('x-request-id')!)[0]);
    expect(await lineOf(refused)).toMatchObject({ status: 401, route: '/v1/conversations', method: 'GET' });
    expect(await lineOf(refused)).not.toHaveProperty('account_id');
    expect(await lineOf(unknown)).toMatchObject({
      status: 404,
      route: 'unmatched',
      account_id: account.accountId,
    });
    expect(await lineOf(malformed)).toMatchObject({ status: 404, method: 'GET' });
    expect(gateway.logs).not.toContain(wrongKey.slice(-20));
  });

  it('a client-supplied X-Request-Id is kept and reaches the conversations service', async () => {
    const requestId = `client-${randomBytes(4).toString('hex')}`;
    const listed = await api.get('/v1/conversations?limit=1', { headers: { 'x-request-id': requestId } });
    expect(listed.headers.get('x-request-id')).toBe(requestId);
    await eventually(() => linesFor(gateway, requestId).length === 1);
    await eventually(() => linesFor(conversations, requestId).some((line) => line.msg === 'rpc handled'));
  });
});
