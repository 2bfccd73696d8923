import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { ReceivedWebhook, TestAccount, TestStack, testServices, WebhookReceivers } from '@app/testing';

/**
 * Signing secrets at rest (docs/operations.md, "Secrets at rest"): a dump of the webhooks schema
 * holds no secret in any encoding, replies replayed under an Idempotency-Key still carry the
 * secret, `cms secrets:reencrypt` moves every secret to a new key (and encrypts one a release
 * before encryption wrote in clear) while deliveries keep verifying.
 */

const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;
const FIRST_KEY = newKey('first');
const SECOND_KEY = newKey('second');

function verify(secret: string, received: ReceivedWebhook): any {
  return new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  });
}

/** Every form of a secret a dump could leak it in: as given, its key's base64 (url-safe too) and hex. */
function encodings(secret: string): string[] {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return [secret, key.toString('base64'), key.toString('base64url'), key.toString('hex')];
}

async function reencrypt(keys: string) {
  let stdout = '';
  let stderr = '';
  const code = await testServices().runCli(
    ['secrets:reencrypt'],
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    { ...process.env, LOG_LEVEL: 'warn', SECRETS_ENCRYPTION_KEYS: keys },
  );
  return { code, stdout, stderr };
}

describe('webhook signing secrets at rest', () => {
  let stack: TestStack;
  let account: TestAccount;
  const receivers = new WebhookReceivers();
  const originalKeys = process.env.SECRETS_ENCRYPTION_KEYS;

  /** Restarts the webhooks service with these keys (the stack reads them from the environment). */
  async function restartWebhooks(keys: string) {
    await stack.stopWebhooks();
    process.env.SECRETS_ENCRYPTION_KEYS = keys;
    await stack.startWebhooks();
  }

  beforeAll(async () => {
    process.env.SECRETS_ENCRYPTION_KEYS = FIRST_KEY;
    stack = await TestStack.start({ webhooks: true });
    account = await stack.createAccount();
  });
  afterAll(async () => {
    process.env.SECRETS_ENCRYPTION_KEYS = originalKeys;
    await receivers.closeAll();
    await stack?.close();
  });

  const rows = (ids: string[]) =>
    stack.query<{
      id: string;
      secret: string | null;
      secret_encrypted: string;
      previous_secret_encrypted: string;
    }>(
      `SELECT id, secret, secret_encrypted, previous_secret_encrypted FROM webhooks.subscriptions
        WHERE id = ANY($1) ORDER BY id`,
      [ids],
    );

  async function testSend(id: string, target: { waitFor(n: number): Promise<ReceivedWebhook[]> }, n: number) {
    expect((await account.api.post(`/v1/webhooks/${id}/test`)).status).toBe(202);
    return (await target.waitFor(n))[n - 1];
  }

  it('pg_dump of the webhooks and gateway schemas holds no secret in clear, base64 or hex', async () => {
    const target = await receivers.start();
    const idempotencyKey = randomUUID();
    const body = { url: target.url, events: ['*'] };
    const created = await account.api.post('/v1/webhooks', body, {
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect(created.status).toBe(201);
    const rotated = await account.api.post(`/v1/webhooks/${created.body.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const other = await account.api.post('/v1/webhooks', body);
    const secrets = [created.body.secret, rotated.body.secret, other.body.secret] as string[];

    const { stdout: dump } = await promisify(execFile)(
      'pg_dump',
      // The gateway's schema holds the stored responses of Idempotency-Key requests.
      ['--schema=webhooks', '--schema=gateway', '--no-owner', process.env.DATABASE_URL!],
      { maxBuffer: 512 * 1024 * 1024 },
    );
    expect(dump).toContain(created.body.id);
    expect(dump).toContain(idempotencyKey);
    for (const secret of secrets) for (const form of encodings(secret)) expect(dump).not.toContain(form);
    for (const row of await rows([created.body.id, other.body.id])) {
      expect(row.secret).toBeNull();
      expect(row.secret_encrypted).toMatch(/^first:/);
    }

    // The stored reply is replayed with the secret in clear, as first answered, and creates nothing.
    const replayed = await account.api.post('/v1/webhooks', body, {
      headers: { 'Idempotency-Key': idempotencyKey },
    });
    expect({ status: replayed.status, replayed: replayed.headers.get('idempotent-replayed') }).toEqual({
      status: 201,
      replayed: 'true',
    });
    expect(replayed.body).toEqual(created.body);
    expect(replayed.body.secret).toBe(created.body.secret);
    const rotateKey = randomUUID();
    const rotatedOnce = await account.api.post(`/v1/webhooks/${other.body.id}/secret/rotate`, undefined, {
      headers: { 'Idempotency-Key': rotateKey },
    });
    const rotatedAgain = await account.api.post(`/v1/webhooks/${other.body.id}/secret/rotate`, undefined, {
      headers: { 'Idempotency-Key': rotateKey },
    });
    expect(rotatedAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(rotatedAgain.body.secret).toBe(rotatedOnce.body.secret);
    const [{ stored }] = await stack.query<{ stored: string }>(
      `SELECT response_body AS stored FROM gateway.idempotency_keys WHERE key = $1`,
      [rotateKey],
    );
    expect(JSON.parse(stored)).not.toHaveProperty('secret');
    expect(stored).not.toContain(rotatedOnce.body.secret.replace(/^whsec_/, ''));
    // Both secrets still sign: the current and the rotated-out one in its grace period.
    const received = await testSend(created.body.id, target, 1);
    expect(verify(rotated.body.secret, received).type).toBe('webhook.test');
    expect(verify(created.body.secret, received).type).toBe('webhook.test');
  });

  it('a ciphertext copied onto another subscription does not sign', async () => {
    const target = await receivers.start();
    const [a, b] = await Promise.all(
      [1, 2].map(
        async () => (await account.api.post('/v1/webhooks', { url: target.url, events: ['*'] })).body,
      ),
    );
    await stack.query(
      `UPDATE webhooks.subscriptions SET secret_encrypted = (SELECT secret_encrypted FROM webhooks.subscriptions WHERE id = $1)
        WHERE id = $2`,
      [a.id, b.id],
    );
    expect((await account.api.post(`/v1/webhooks/${b.id}/test`)).status).toBe(202);
    const deliveries = async () => (await account.api.get(`/v1/webhooks/${b.id}/deliveries`)).body.data;
    // The attempt fails before any request leaves: the receiver never sees it.
    for (let wait = 0; wait < 100 && (await deliveries())[0]?.attempt_count === 0; wait++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await deliveries())[0].attempt_count).toBeGreaterThan(0);
    expect(target.received).toHaveLength(0);
    // secrets:reencrypt cannot open it either, and says which subscription holds it.
    const run = await reencrypt(`${SECOND_KEY},${FIRST_KEY}`);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`subscription ${b.id}`);
    expect((await account.api.request('DELETE', `/v1/webhooks/${b.id}`)).status).toBe(204);
  });

  it('secrets:reencrypt moves every secret to the first key, encrypting any left in clear', async () => {
    const target = await receivers.start();
    const hook = (await account.api.post('/v1/webhooks', { url: target.url, events: ['*'] })).body;
    // What a webhooks replica of the release before encryption writes: a clear secret, no ciphertext.
    const legacy = (await account.api.post('/v1/webhooks', { url: target.url, events: ['*'] })).body;
    const legacySecret = `whsec_${randomBytes(32).toString('base64')}`;
    await stack.query(
      `UPDATE webhooks.subscriptions SET secret = $2, secret_encrypted = NULL WHERE id = $1`,
      [legacy.id, legacySecret],
    );

    const run = await reencrypt(`${SECOND_KEY},${FIRST_KEY}`);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).subscriptions).toBeGreaterThanOrEqual(2);
    for (const row of await rows([hook.id, legacy.id])) {
      expect(row.secret).toBeNull();
      expect(row.secret_encrypted).toMatch(/^second:/);
    }
    const replies = await stack.query(
      `SELECT count(*)::int AS n FROM webhooks.processed_commands
        WHERE response ? 'secret' AND response->>'secret' NOT LIKE 'second:%'`,
    );
    expect(replies[0].n).toBe(0);
    // Done: a second run has nothing left to move.
    expect(JSON.parse((await reencrypt(`${SECOND_KEY},${FIRST_KEY}`)).stdout)).toEqual({
      subscriptions: 0,
      replies: 0,
    });

    // The first key can go: replicas holding only the second still sign with every secret.
    await restartWebhooks(SECOND_KEY);
    expect(verify(hook.secret, await testSend(hook.id, target, 1)).type).toBe('webhook.test');
    expect(verify(legacySecret, await testSend(legacy.id, target, 2)).type).toBe('webhook.test');
  });

  it('a malformed SECRETS_ENCRYPTION_KEYS stops secrets:reencrypt with the variable named, nothing changed', async () => {
    const before = await stack.query(`SELECT id, secret_encrypted FROM webhooks.subscriptions ORDER BY id`);
    const run = await reencrypt('second:not-32-bytes');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/SECRETS_ENCRYPTION_KEYS: entry 1 has a key that is not 32 bytes/);
    expect(run.stdout).toBe('');
    expect(await stack.query(`SELECT id, secret_encrypted FROM webhooks.subscriptions ORDER BY id`)).toEqual(
      before,
    );
  });
});
