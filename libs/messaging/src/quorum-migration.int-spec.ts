import { randomUUID } from 'node:crypto';
import amqplib, { type ChannelModel } from 'amqplib';
import { capturedLogger } from '@app/testing';
import { declareQueues } from './quorum-migration';
import { QUORUM_QUEUE_ARGUMENTS, type QueueDeclaration } from './queue-declaration';

/**
 * Real RabbitMQ (the run's vhost): classic queues of an older deployment become quorum queues, and
 * quorum RPC queues classic ones, messages kept.
 */
describe('declareQueues', () => {
  const { logger, lines } = capturedLogger('warn');
  let connection: ChannelModel;

  beforeAll(async () => {
    connection = await amqplib.connect(process.env.AMQP_URL!);
  });
  afterAll(() => connection.close());

  const quorum = (name: string, extra: Partial<QueueDeclaration> = {}): QueueDeclaration => ({
    name,
    options: { durable: true, arguments: QUORUM_QUEUE_ARGUMENTS },
    ...extra,
  });

  /** Whether the queue is a quorum queue: redeclaring it as classic fails only then. */
  async function isQuorum(name: string): Promise<boolean> {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.assertQueue(name, { durable: true });
      await channel.close();
      return false;
    } catch {
      return true;
    }
  }

  async function drain(name: string): Promise<string[]> {
    const channel = await connection.createChannel();
    const bodies: string[] = [];
    for (let message = await channel.get(name); message; message = await channel.get(name)) {
      bodies.push(message.content.toString());
      channel.ack(message);
    }
    await channel.close();
    return bodies;
  }

  it('moves every message of a classic queue into the quorum queue of the same name, properties kept', async () => {
    const name = `spec.${randomUUID()}`;
    const channel = await connection.createChannel();
    await channel.assertQueue(name, { durable: true });
    const bodies = Array.from({ length: 50 }, (_, index) => `command ${index}`);
    for (const body of bodies)
      channel.sendToQueue(name, Buffer.from(body), { correlationId: body, persistent: true });
    await channel.close();

    await declareQueues(process.env.AMQP_URL!, [quorum(name)], logger);

    expect(await isQuorum(name)).toBe(true);
    const reader = await connection.createChannel();
    const first = await reader.get(name, { noAck: true });
    await reader.close();
    expect(first && first.properties.correlationId).toBe('command 0');
    expect(await drain(name)).toEqual(bodies.slice(1));
    expect(lines.some((line) => line.includes('queue migrated'))).toBe(true);
    // The temporary queue is gone.
    const check = await connection.createChannel();
    check.on('error', () => undefined);
    await expect(check.checkQueue(`${name}.migrating`)).rejects.toThrow(/NOT_FOUND/);
  });

  it('moves a quorum queue back to a classic one (RPC_QUEUE_TYPE=classic), messages kept', async () => {
    const name = `spec.${randomUUID()}`;
    await declareQueues(process.env.AMQP_URL!, [quorum(name)], logger);
    const channel = await connection.createConfirmChannel();
    const bodies = Array.from({ length: 20 }, (_, index) => `command ${index}`);
    for (const body of bodies) channel.sendToQueue(name, Buffer.from(body));
    await channel.waitForConfirms();
    await channel.close();

    await declareQueues(process.env.AMQP_URL!, [{ name, options: { durable: true } }], logger);

    expect(await isQuorum(name)).toBe(false);
    expect(await drain(name)).toEqual(bodies);
  });

  it('keeps a bound queue receiving events published after the move, and its bindings', async () => {
    const name = `spec.${randomUUID()}`;
    const exchange = `spec.exchange.${randomUUID()}`;
    const channel = await connection.createChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    await channel.assertQueue(name, { durable: true });
    await channel.bindQueue(name, exchange, 'conversation.*');
    channel.publish(exchange, 'conversation.created', Buffer.from('before'));

    await declareQueues(
      process.env.AMQP_URL!,
      [quorum(name, { bindings: [{ exchange, pattern: 'conversation.*' }] })],
      logger,
    );
    channel.publish(exchange, 'conversation.closed', Buffer.from('after'));
    await channel.close();

    expect(await isQuorum(name)).toBe(true);
    expect(await drain(name)).toEqual(['before', 'after']);
  });

  it('leaves a queue already declared as asked untouched, and declares a missing one', async () => {
    const name = `spec.${randomUUID()}`;
    await declareQueues(process.env.AMQP_URL!, [quorum(name)], logger);
    await declareQueues(process.env.AMQP_URL!, [quorum(name)], logger);
    expect(await isQuorum(name)).toBe(true);
  });

  it('waits for an old consumer to leave, and gives up at the bound instead of deleting its queue', async () => {
    const name = `spec.${randomUUID()}`;
    const old = await connection.createChannel();
    await old.assertQueue(name, { durable: true });
    await old.consume(name, () => undefined);

    await expect(declareQueues(process.env.AMQP_URL!, [quorum(name)], logger, 1500)).rejects.toThrow(
      /still has consumers/,
    );
    expect(await isQuorum(name)).toBe(false);
    await old.close();
  });
});
