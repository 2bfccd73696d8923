import { eventually, RestartableGateway, TestAccount, TestStack, WebhookReceivers } from '@app/testing';
import { ApiError, Client, type Event, verifyWebhook, WebhookVerificationError } from '../src';

/**
 * The SDK (sdk/typescript, docs/clients.md) against the real services: typed calls, paging that
 * follows `next`, errors as ApiError, the event stream resuming across a gateway restart, and
 * verifyWebhook on real deliveries.
 */
describe('@cms/sdk', () => {
  let stack: TestStack;
  let account: TestAccount;
  let client: Client;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    account = await stack.createAccount('business');
    client = new Client({ apiKey: account.apiKey, baseUrl: stack.url });
  });
  afterAll(async () => {
    await receivers.closeAll();
    await stack?.close();
  });

  it('creates, reads, updates and closes a conversation; sends and lists messages', async () => {
    const body = {
      subject: 'Order 1001',
      message: { sender: 'visitor' as const, content: 'Where is my parcel?' },
    };
    const created = await client.conversations.create(body, { idempotencyKey: 'sdk-create-1' });
    // The same idempotency key: applied once.
    const again = await client.conversations.create(body, { idempotencyKey: 'sdk-create-1' });
    expect(again.id).toBe(created.id);

    const reply = await client.messages.send(created.id, { sender: 'agent', content: 'It left today.' });
    expect(reply).toMatchObject({ conversation_id: created.id, sender: 'agent' });
    const updated = await client.conversations.update(created.id, {
      subject: 'Order 1001 (late)',
      tags: ['vip'],
    });
    expect(updated).toMatchObject({ subject: 'Order 1001 (late)', tags: ['vip'] });
    expect((await client.conversations.close(created.id)).status).toBe('closed');

    const read = await client.conversations.get(created.id);
    expect(read.messages.map((message) => message.content)).toEqual([
      'Where is my parcel?',
      'It left today.',
    ]);
    const contents: string[] = [];
    for await (const message of client.messages.iterate(created.id, { limit: 1 }))
      contents.push(message.content);
    expect(contents).toEqual(['Where is my parcel?', 'It left today.']);
  });

  it('delete() erases a conversation: a read and a second delete are 404', async () => {
    const doomed = await client.conversations.create({ subject: 'erase me' });
    await expect(client.conversations.delete(doomed.id)).resolves.toBeUndefined();
    await expect(client.conversations.get(doomed.id)).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    await expect(client.conversations.delete(doomed.id)).rejects.toMatchObject({ status: 404 });
  });

  it('iterate() follows pagination.next: every conversation once, none from later writes', async () => {
    const own = await stack.createAccount('business');
    const sdk = new Client({ apiKey: own.apiKey, baseUrl: stack.url });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await sdk.conversations.create({ subject: `c${i}` })).id);
    const seen: string[] = [];
    for await (const conversation of sdk.conversations.iterate({ limit: 2 })) {
      seen.push(conversation.id);
      // Created while paging: the first page's snapshot leaves it out.
      if (seen.length === 1) await sdk.conversations.create({ subject: 'later' });
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('throws ApiError with status, code and request id', async () => {
    const missing = await client.conversations
      .get('7d9f6e0a-58ad-4c51-9b31-9f2b9c0b8a11')
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', requestId: expect.any(String) });

    const invalid = await client.messages
      .send((await client.conversations.create()).id, { sender: 'agent', content: '' })
      .then(
        () => undefined,
        (e: unknown) => e as ApiError,
      );
    expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(invalid?.problem?.errors?.[0].field).toBe('content');

    const stranger = new Client({ apiKey: 'cms_nope_nope', baseUrl: stack.url });
    await expect(stranger.events.list()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it("types each event's data by its type", async () => {
    const own = await stack.createAccount('business');
    const sdk = new Client({ apiKey: own.apiKey, baseUrl: stack.url });
    await sdk.conversations.create({ message: { sender: 'visitor', content: 'Hello' } });
    const page = await sdk.events.list({ limit: 10 });
    const contents = page.data.map((event: Event) => {
      // The compiler narrows `data` by `type`: a message.received event has `data.message`.
      if (event.type === 'message.received') return event.data.message.content;
      if (event.type === 'conversation.started') return `started ${event.data.conversation.id}`;
      return event.type;
    });
    expect(contents).toEqual(['Hello', expect.stringMatching(/^started /)]);
  });

  it('events.stream() resumes by itself across a gateway restart: no gap, no duplicate', async () => {
    const own = await stack.createAccount('business');
    const writer = new Client({ apiKey: own.apiKey, baseUrl: stack.url });
    const gateway = await RestartableGateway.start(stack);
    const reconnects: unknown[] = [];
    let opened = 0;
    const stream = new Client({ apiKey: own.apiKey, baseUrl: gateway.url }).events.stream({
      onOpen: () => opened++,
      onReconnect: (reason) => reconnects.push(reason),
    });
    const received: Event[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        received.push(event);
        if (received.length === 3) break;
      }
    })();
    try {
      await eventually(() => opened === 1, 20_000);
      const conversation = await writer.conversations.create({ subject: 'before the restart' });
      await eventually(() => received.length === 1, 20_000);
      await gateway.down();
      // Written while the gateway is down: the resumed stream delivers them, after the first.
      await writer.messages.send(conversation.id, { sender: 'agent', content: 'while down 1' });
      await writer.messages.send(conversation.id, { sender: 'agent', content: 'while down 2' });
      await gateway.up();
      await eventually(() => received.length === 3, 30_000);
      await reading;
    } finally {
      await stream.close();
      await gateway.down();
    }
    expect(reconnects.length).toBeGreaterThan(0);
    expect(received.map((event) => [event.type, event.sequence])).toEqual([
      ['conversation.started', 1],
      ['message.sent', 2],
      ['message.sent', 3],
    ]);
    expect(stream.lastEventId).toBe(received[2].id);
  });

  it('verifyWebhook accepts real deliveries and refuses a changed body or an old timestamp', async () => {
    const own = await stack.createAccount('business');
    const sdk = new Client({ apiKey: own.apiKey, baseUrl: stack.url });
    const receiver = await receivers.start();
    const { secret } = await sdk.webhooks.create({ url: receiver.url, events: ['*'] });
    const conversation = await sdk.conversations.create({ subject: 'Signed' });
    const [delivery] = await receiver.waitFor(1);
    const headers = delivery.headers;

    const event = verifyWebhook(secret, headers, delivery.body);
    expect(event.type).toBe('conversation.started');
    if (event.type === 'conversation.started') expect(event.data.conversation.id).toBe(conversation.id);
    expect(() => verifyWebhook(secret, headers, delivery.body.replace('Signed', 'Forged'))).toThrow(
      WebhookVerificationError,
    );
    const later = new Date(Date.now() + 10 * 60_000);
    expect(() => verifyWebhook(secret, headers, delivery.body, { now: later })).toThrow(/tolerance/);
    expect(() =>
      verifyWebhook(secret, { ...headers, 'webhook-signature': undefined }, delivery.body),
    ).toThrow(/missing/);
  });
});
