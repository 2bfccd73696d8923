import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { CONVERSATIONS_RPC_QUEUE, encodeOkReply, type RpcRequest, WEBHOOKS_RPC_QUEUE } from '@app/contracts';
import { TestAccount, TestStack } from '@app/testing';

/**
 * During a rolling upgrade the gateway gets replies from services of a later release, which may
 * carry fields it does not know (docs/scaling.md, "Upgrading"). Here the services are replaced by
 * responders on their queues that answer like such a release: the gateway answers 200 with every
 * field it knows.
 */
describe('replies of a later release, with fields the gateway does not know', () => {
  let stack: TestStack;
  let account: TestAccount;
  let connection: ChannelModel;
  let channel: Channel;
  let stored: Record<string, any>;
  /** What the responders answer, by pattern: the reply's JSON text. */
  const replies = new Map<string, () => string>();

  beforeAll(async () => {
    stack = await TestStack.start();
    account = await stack.createAccount();
    const created = await account.api.post('/v1/conversations', {
      subject: 'Later release',
      message: { sender: 'visitor', content: 'Hello' },
    });
    stored = (await account.api.get(`/v1/conversations/${created.body.id}`)).body;
    await stack.stopConversations();
    connection = await amqp.connect(process.env.AMQP_URL!);
    channel = await connection.createChannel();
    for (const queue of [CONVERSATIONS_RPC_QUEUE, WEBHOOKS_RPC_QUEUE])
      await channel.consume(
        queue,
        (message) => {
          if (!message) return;
          const request = JSON.parse(message.content.toString()) as RpcRequest;
          const reply = replies.get(request.pattern)?.() ?? '{"ok":false,"error":{"code":"internal_error"}}';
          channel.sendToQueue(message.properties.replyTo as string, Buffer.from(reply), {
            correlationId: message.properties.correlationId as string,
          });
        },
        { noAck: true },
      );
  });

  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await stack?.close();
  });

  const later = (view: Record<string, any>) => ({ ...view, added_later: { any: ['shape'] } });
  const laterConversation = () => ({
    ...later(stored),
    messages: stored.messages.map(later),
  });

  it.each([
    [
      'as the data of an ok reply, passed on unparsed',
      () => encodeOkReply(JSON.stringify(laterConversation())),
    ],
    [
      'in a reply of another shape, re-serialized',
      () => JSON.stringify({ data: laterConversation(), ok: true, added_later: 1 }),
    ],
  ])('a conversation %s', async (_form, reply) => {
    replies.set('conversations.get', reply);
    const response = await account.api.get(`/v1/conversations/${stored.id}`, { contract: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject(stored);
  });

  it('a webhook subscription, presented by the gateway: the unknown fields are not shown', async () => {
    const view = {
      id: '3f2a9c1e-7b6d-4e5f-8a9b-0c1d2e3f4a5b',
      url: 'https://example.com/hooks',
      events: ['conversation.started'],
      dialect: 'en',
      description: null,
      status: 'enabled',
      disabled_reason: null,
      failing_since: null,
      created_at: '2026-11-26T10:00:00.000Z',
      updated_at: '2026-11-26T10:00:00.000Z',
    };
    replies.set('webhooks.get', () => encodeOkReply(JSON.stringify(later(view))));
    const response = await account.api.get(`/v1/webhooks/${view.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(view);
  });
});
