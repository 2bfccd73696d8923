import { Webhook } from 'standardwebhooks';
import {
  eventually,
  ReceivedWebhook,
  RestartableGateway,
  TestAccount,
  TestStack,
  WebhookReceiver,
  WebhookReceivers,
} from '@app/testing';
import { runCli } from '../cli';

/**
 * `cms listen` (docs/clients.md): the account's events forwarded to a local receiver as Standard
 * Webhooks requests, verified here with the `standardwebhooks` package; it carries on across a
 * restart of the gateway it streams from, with no gap and no duplicate.
 */

interface Listener {
  stdout: string[];
  stderr: string;
  secret: () => Promise<string>;
  stop: () => Promise<number>;
}

function startListener(...argv: string[]): Listener {
  const stop = new AbortController();
  const listener = { stdout: [] as string[], stderr: '' };
  let partial = '';
  const exited = runCli(
    ['listen', ...argv],
    {
      stdout: (text) => {
        partial += text;
        const lines = partial.split('\n');
        partial = lines.pop()!;
        listener.stdout.push(...lines);
      },
      stderr: (text) => (listener.stderr += text),
    },
    process.env,
    stop.signal,
  );
  return {
    ...listener,
    get stdout() {
      return listener.stdout;
    },
    get stderr() {
      return listener.stderr;
    },
    secret: async () => {
      await eventually(() => listener.stderr.includes('listening'), 20_000);
      return (JSON.parse(listener.stdout[0]) as { secret: string }).secret;
    },
    stop: () => {
      stop.abort();
      return exited;
    },
  };
}

const verified = (secret: string, received: ReceivedWebhook) =>
  new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as { type: string; sequence: number; timestamp: string; data: Record<string, unknown> };

describe('cms listen', () => {
  let stack: TestStack;
  let account: TestAccount;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    stack = await TestStack.start();
    account = await stack.createAccount('business');
  });
  afterAll(async () => {
    await receivers.closeAll();
    await stack?.close();
  });

  it('forwards each event signed, and resumes after the API restarts: no gap, no duplicate', async () => {
    const gateway = await RestartableGateway.start(stack);
    const receiver: WebhookReceiver = await receivers.start();
    const listener = startListener(
      '--api-key',
      account.apiKey,
      '--forward-to',
      `${receiver.url}?from=listen`,
      '--api-url',
      gateway.url,
    );
    try {
      const secret = await listener.secret();
      expect(secret).toMatch(/^whsec_/);
      const created = await account.api.post('/v1/conversations', { subject: 'Listen' });
      const [first] = await receiver.waitFor(1, undefined, 20_000);
      const event = verified(secret, first);
      expect(event).toMatchObject({ type: 'conversation.started', sequence: 1 });
      expect(first.path).toBe('/hooks?from=listen');
      // webhook-id is the event's id, as the webhooks service sends it.
      const stored = await account.api.get(`/v1/events/${String(first.headers['webhook-id'])}`);
      expect(stored.body).toMatchObject({ type: 'conversation.started', conversation_id: created.body.id });

      await gateway.down();
      // Written while the API the listener streams from is down (through the stack's gateway).
      for (const content of ['while down 1', 'while down 2'])
        await account.api.post(`/v1/conversations/${created.body.id}/messages`, { sender: 'agent', content });
      await gateway.up();

      const all = await receiver.waitFor(3, undefined, 40_000);
      const events = all.map((received) => verified(secret, received));
      expect(events.map((e) => [e.type, e.sequence])).toEqual([
        ['conversation.started', 1],
        ['message.sent', 2],
        ['message.sent', 3],
      ]);
      expect(new Set(all.map((received) => received.headers['webhook-id'])).size).toBe(3);
      expect(listener.stderr).toMatch(/resuming/);
      // One line per event after the secret, each with the receiver's answer.
      await eventually(() => listener.stdout.length === 4);
      expect(listener.stdout.slice(1).map((line) => JSON.parse(line).status)).toEqual([200, 200, 200]);
    } finally {
      expect(await listener.stop()).toBe(0);
      await gateway.down();
    }
  });

  it('--since forwards the stored events first, oldest first, then live ones; --events filters', async () => {
    const own = await stack.createAccount('business');
    const since = new Date(Date.now() - 1000).toISOString();
    const created = await own.api.post('/v1/conversations', {
      message: { sender: 'visitor', content: 'Hi' },
    });
    const receiver = await receivers.start();
    const listener = startListener(
      '--api-key',
      own.apiKey,
      '--forward-to',
      receiver.url,
      '--api-url',
      stack.url,
      '--since',
      since,
      // Any dialect: the Malay name of message.received, and message.sent.
      '--events',
      'conversation.started,mesej.diterima,message.sent',
    );
    try {
      const secret = await listener.secret();
      await receiver.waitFor(2, undefined, 20_000);
      await own.api.patch(`/v1/conversations/${created.body.id}`, { status: 'closed' }); // not forwarded
      await own.api.patch(`/v1/conversations/${created.body.id}`, { status: 'active' }); // not forwarded
      await own.api.post(`/v1/conversations/${created.body.id}/messages`, { sender: 'bot', content: 'Back' });
      const all = await receiver.waitFor(3, undefined, 20_000);
      expect(
        all.map((received) => [verified(secret, received).type, verified(secret, received).sequence]),
      ).toEqual([
        ['conversation.started', 1],
        ['message.received', 2],
        ['message.sent', 5],
      ]);
    } finally {
      expect(await listener.stop()).toBe(0);
    }
    expect(receiver.received).toHaveLength(3);
  });

  it('refuses a wrong key at once (exit 1, no secret) and a wrong command line (exit 2)', async () => {
    const receiver = await receivers.start();
    const wrongKey = startListener(
      '--api-key',
      'cms_nope_nope',
      '--forward-to',
      receiver.url,
      '--api-url',
      stack.url,
    );
    expect(
      await Promise.race([wrongKey.stop(), new Promise((r) => setTimeout(() => r('hung'), 20_000))]),
    ).toBe(1);
    expect(wrongKey.stdout).toEqual([]);
    expect(wrongKey.stderr).toMatch(/unauthorized/);

    const badType = startListener(
      '--api-key',
      account.apiKey,
      '--forward-to',
      receiver.url,
      '--events',
      'nope',
    );
    expect(await badType.stop()).toBe(2);
    expect(badType.stderr).toMatch(/--events: unknown event type "nope"/);
    expect(await startListener('--api-key', account.apiKey).stop()).toBe(2);
  });
});
