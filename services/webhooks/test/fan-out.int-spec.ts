import { randomUUID } from 'node:crypto';
import amqp, { Channel, ChannelModel } from 'amqplib';
import {
  CLOUDEVENTS_SOURCE,
  CONVERSATIONS_EVENTS_EXCHANGE,
  WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE,
  WEBHOOKS_EVENTS_QUEUE,
} from '@app/contracts';
import { EVENT_TYPES } from '@app/dialects';
import { eventually, rabbitmqList, TestAccount, TestStack, WebhookReceiver } from '@app/testing';

/**
 * The fan-out consumer against the real broker: its own durable
 * queue bound to the four public types, manual acks with a bounded prefetch, redelivered events
 * creating nothing, and unparseable messages dead-lettered instead of looping.
 */
describe('fan-out from conversations.events', () => {
  let stack: TestStack;
  let connection: ChannelModel;
  let channel: Channel;
  let receiver: WebhookReceiver;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    connection = await amqp.connect(process.env.AMQP_URL!);
    channel = await connection.createConfirmChannel();
    receiver = await WebhookReceiver.start();
    account = await stack.createAccount();
    const created = await account.api.post('/v1/webhooks', { url: receiver.url, events: ['*'] });
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await receiver?.close();
    await stack?.close();
  });

  function cloudEvent(type = 'conversation.started', id = randomUUID()) {
    const conversationId = randomUUID();
    return {
      specversion: '1.0',
      id,
      source: CLOUDEVENTS_SOURCE,
      type,
      time: new Date().toISOString(),
      subject: conversationId,
      datacontenttype: 'application/json',
      accountid: account.accountId,
      data: { conversation: { id: conversationId, status: 'active' } },
    };
  }

  async function publish(routingKey: string, body: unknown): Promise<void> {
    const content = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    channel.publish(CONVERSATIONS_EVENTS_EXCHANGE, routingKey, content, { persistent: true });
    await (channel as unknown as { waitForConfirms(): Promise<void> }).waitForConfirms();
  }

  const ids = () => receiver.received.map((r) => r.headers['webhook-id']);

  it('its queue is durable, bound to exactly the event types, dead-letters into its own queue, and consumed with manual acks and a prefetch', () => {
    const queues = Object.fromEntries(
      rabbitmqList('list_queues', 'name', 'durable', 'arguments').map(([name, ...rest]) => [name, rest]),
    );
    expect(queues[WEBHOOKS_EVENTS_QUEUE][0]).toBe('true');
    expect(queues[WEBHOOKS_EVENTS_QUEUE][1]).toContain(WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE);
    expect(queues[WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE][0]).toBe('true');
    const bindings = rabbitmqList('list_bindings', 'source_name', 'destination_name', 'routing_key')
      .filter(
        ([source, destination]) =>
          source === CONVERSATIONS_EVENTS_EXCHANGE && destination === WEBHOOKS_EVENTS_QUEUE,
      )
      .map(([, , key]) => key)
      .sort();
    expect(bindings).toEqual([...EVENT_TYPES].sort());
    const consumers = rabbitmqList('list_consumers', 'queue_name', 'ack_required', 'prefetch_count').filter(
      ([queue]) => queue === WEBHOOKS_EVENTS_QUEUE,
    );
    expect(consumers).toEqual([[WEBHOOKS_EVENTS_QUEUE, 'true', '256']]);
  });

  it('a redelivered event creates no second delivery', async () => {
    const event = cloudEvent();
    await publish(event.type, event);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === event.id);
    // The same event again, as after a crash between commit and ack, then a fence behind it.
    await publish(event.type, event);
    await publish(event.type, { ...event, id: event.id.toUpperCase() });
    const fence = cloudEvent('lead.captured');
    await publish(fence.type, fence);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === fence.id);
    expect(ids().filter((id) => id === event.id)).toHaveLength(1);
    const rows = await stack.query(`SELECT count(*)::int AS n FROM webhooks.deliveries WHERE event_id = $1`, [
      event.id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('the same event twice in one batch is one delivery', async () => {
    const event = cloudEvent('message.received');
    const fence = cloudEvent('conversation.closed');
    for (const body of [event, event, event, fence])
      channel.publish(CONVERSATIONS_EVENTS_EXCHANGE, body.type, Buffer.from(JSON.stringify(body)));
    await (channel as unknown as { waitForConfirms(): Promise<void> }).waitForConfirms();
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === fence.id);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === event.id);
    expect(ids().filter((id) => id === event.id)).toHaveLength(1);
  });

  it('delivers an event with fields it does not know (a later release added them): readers ignore them', async () => {
    const event = cloudEvent('conversation.started');
    const conversation = { ...event.data.conversation, added_later: ['a', 'b'] };
    await publish(event.type, { ...event, addedlater: 'x', data: { conversation, added_later: { n: 1 } } });
    const [delivered] = await receiver.waitFor(1, (r) => r.headers['webhook-id'] === event.id);
    expect(delivered.json).toMatchObject({
      type: 'conversation.started',
      data: { conversation: { id: conversation.id } },
    });
  });

  it.each<[string, (accountId: string) => unknown]>([
    ['not JSON', () => Buffer.from('{"specversion": "1.0", ')],
    ['not a CloudEvent', () => ({ hello: 'world' })],
    ['without an account', () => ({ ...validShape(randomUUID()), accountid: undefined })],
    ['with an id that is not a UUID', (accountId) => ({ ...validShape(accountId), id: 'evt-1' })],
    ['of an unknown type', (accountId) => ({ ...validShape(accountId), type: 'conversation.removed' })],
    ['without a subject', (accountId) => ({ ...validShape(accountId), subject: undefined })],
  ])('dead-letters a message %s, and keeps consuming', async (_name, body) => {
    const before = deadLettered();
    await publish('conversation.started', body(account.accountId));
    await eventually(() => deadLettered() === before + 1, 10_000, 100);
    const after = cloudEvent();
    await publish(after.type, after);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === after.id);
    // Nothing is left behind: the queue drains (its count includes messages not yet acknowledged,
    // and the consumer acknowledges a moment after the delivery it caused).
    await eventually(() => messagesIn(WEBHOOKS_EVENTS_QUEUE) === 0, 10_000, 100);
  });

  function deadLettered(): number {
    return messagesIn(WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE);
  }

  function messagesIn(queue: string): number {
    const [row] = rabbitmqList('list_queues', 'name', 'messages').filter(([name]) => name === queue);
    return Number(row[1]);
  }

  it('ignores events of accounts without subscriptions (nothing stored)', async () => {
    const event = { ...cloudEvent(), accountid: randomUUID() };
    const fence = cloudEvent();
    await publish(event.type, event);
    await publish(fence.type, fence);
    await receiver.waitFor(1, (r) => r.headers['webhook-id'] === fence.id);
    expect(await stack.query(`SELECT 1 FROM webhooks.events WHERE id = $1`, [event.id])).toHaveLength(0);
  });
});

/** A valid envelope (the dead-letter cases spoil one field of it). */
function validShape(accountId: string) {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: CLOUDEVENTS_SOURCE,
    type: 'conversation.started',
    time: new Date().toISOString(),
    subject: randomUUID(),
    datacontenttype: 'application/json',
    accountid: accountId,
    data: { conversation: { id: randomUUID(), status: 'active' } },
  };
}
