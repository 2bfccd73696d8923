import { eventually, expectValidation, TestAccount, TestStack, WebhookReceiver } from '@app/testing';
import { ResolvedAddress, TargetPolicy } from '../src/delivery/target-policy';

/**
 * SSRF (docs/webhooks.md, "Safety") with private targets NOT allowed, as in production. Name resolution
 * is a table the test controls, so DNS rebinding can be staged: a name that resolved to a public
 * address when the subscription was created points at 127.0.0.1 when the delivery goes. The
 * receiver listens on 127.0.0.1 and counts TCP connections: a refused target gets not even one.
 */
describe('webhook targets (SSRF)', () => {
  let stack: TestStack;
  let account: TestAccount;
  let receiver: WebhookReceiver;
  const dns: Record<string, string[]> = {};
  const lookups: string[] = [];

  beforeAll(async () => {
    const targets = new TargetPolicy(false, async (host): Promise<ResolvedAddress[]> => {
      lookups.push(host);
      const addresses = dns[host];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    });
    stack = await TestStack.start({
      webhooks: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' },
      webhookTargets: targets,
    });
    account = await stack.createAccount();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.close();
  });

  it.each([
    ['http (only https without private targets)', 'http://hooks.example.com/x', 'https'],
    ['loopback', 'https://127.0.0.1/x', 'loopback'],
    ['loopback, decimal form', 'https://2130706433/x', 'loopback'],
    ['IPv6 loopback', 'https://[::1]/x', 'loopback'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/x', 'IPv4-mapped 127.0.0.1'],
    ['IPv4-mapped IPv6 metadata', 'https://[::ffff:a9fe:a9fe]/x', 'IPv4-mapped 169.254.169.254'],
    ['private 10/8', 'https://10.0.0.1/x', 'private'],
    ['private 172.16/12', 'https://172.20.1.1/x', 'private'],
    ['private 192.168/16', 'https://192.168.1.10/x', 'private'],
    ['link-local', 'https://169.254.10.10/x', 'link-local'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['carrier-grade NAT', 'https://100.64.0.1/x', 'carrier-grade NAT'],
    ['IPv6 unique local', 'https://[fd00:ec2::254]/x', 'unique local'],
    ['IPv6 link-local', 'https://[fe80::1]/x', 'link-local'],
    ['localhost', 'https://localhost/x', 'local or metadata name'],
    ['metadata name', 'https://metadata.google.internal/computeMetadata/v1/', 'local or metadata name'],
    ['a name resolving to a private address', 'https://intranet.example.com/x', 'resolves to 10.1.2.3'],
    [
      'a name with one private address among public ones',
      'https://mixed.example.com/x',
      'resolves to 127.0.0.1',
    ],
    ['an unresolvable name', 'https://nowhere.example.com/x', 'could not be resolved'],
    ['port 0 of a public address', 'https://93.184.215.14:0/', 'port from 1 to 65535'],
    ['port 0 of a public name, written 00', 'https://fine.example.com:00/x', 'port from 1 to 65535'],
  ])('refuses %s at create and at update', async (_name, url, reason) => {
    dns['intranet.example.com'] = ['10.1.2.3'];
    dns['mixed.example.com'] = ['93.184.216.34', '127.0.0.1'];
    const created = await account.api.post('/v1/webhooks', { url, events: ['*'] });
    expectValidation(created, '/v1/webhooks', ['url']);
    expect(created.body.errors[0].message).toContain(reason);

    dns['fine.example.com'] = ['93.184.216.34'];
    const ok = await account.api.post('/v1/webhooks', {
      url: 'https://fine.example.com/hooks',
      events: ['*'],
      status: 'disabled',
    });
    expect(ok.status).toBe(201);
    const path = `/v1/webhooks/${ok.body.id}`;
    expectValidation(await account.api.patch(path, { url }), path, ['url']);
  });

  it('checks again at send time: a name rebound to 127.0.0.1 gets no connection, and the attempt says why', async () => {
    const host = 'rebind.example.com';
    dns[host] = ['93.184.216.34'];
    const created = await account.api.post('/v1/webhooks', {
      url: `https://${host}:${receiver.port}/hooks`,
      events: ['conversation.started'],
    });
    expect(created.status).toBe(201);
    dns[host] = ['127.0.0.1'];
    lookups.length = 0;
    await account.api.post('/v1/conversations', {});
    const attempts = await eventually(
      async () => {
        const [delivery] = (await account.api.get(`/v1/webhooks/${created.body.id}/deliveries`)).body.data;
        const detail = await account.api.get(`/v1/webhooks/${created.body.id}/deliveries/${delivery.id}`);
        expect(detail.body.attempts.length).toBeGreaterThanOrEqual(2);
        return detail.body.attempts;
      },
      15_000,
      200,
    );
    expect(attempts[0]).toMatchObject({
      status_code: null,
      error: `target refused: host ${host} resolves to 127.0.0.1, a loopback address`,
    });
    expect(lookups).toContain(host);
    expect(receiver.connections).toBe(0);
  });

  it('checks IP literals at send time too (a subscription stored before the policy)', async () => {
    dns['legacy.example.com'] = ['93.184.216.34'];
    const created = await account.api.post('/v1/webhooks', {
      url: 'https://legacy.example.com/hooks',
      events: ['conversation.started'],
    });
    expect(created.status).toBe(201);
    await stack.query(`UPDATE webhooks.subscriptions SET url = $2 WHERE id = $1`, [
      created.body.id,
      `http://127.0.0.1:${receiver.port}/hooks`,
    ]);
    await account.api.post('/v1/conversations', {});
    const attempt = await eventually(
      async () => {
        const [delivery] = (await account.api.get(`/v1/webhooks/${created.body.id}/deliveries`)).body.data;
        const detail = await account.api.get(`/v1/webhooks/${created.body.id}/deliveries/${delivery.id}`);
        return detail.body.attempts[0];
      },
      10_000,
      200,
    );
    expect(attempt).toMatchObject({
      status_code: null,
      error: 'target refused: 127.0.0.1 is a loopback address',
    });
    expect(receiver.connections).toBe(0);
  });
});
