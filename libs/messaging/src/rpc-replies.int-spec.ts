import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { rpcQuery, Strict } from '@app/contracts';
import { DomainError } from '@app/errors';
import { capturedLogger } from '@app/testing';
import type { Channel } from 'amqplib';
import { connectAmqp } from './amqp-connection';
import { RpcClient } from './rpc-client';
import { RpcServer } from './rpc-server';

const Greeting = Strict({ name: Type.String(), count: Type.Integer() });
const operation = rpcQuery('spec.greet', Strict({ name: Type.String() }), Greeting);

/**
 * Real RabbitMQ (the run's vhost): replies leave the service serialized with their operation's
 * reply schema, which the gateway may send on as they are (RpcClient.callForJson).
 */
describe('RPC replies', () => {
  const { logger, lines } = capturedLogger('error');
  const connection = connectAmqp(process.env.AMQP_URL!, 'rpc-replies-spec', logger);
  const queue = `spec.rpc.${randomUUID()}`;
  const presenceExchange = `${queue}.presence`;
  const server = new RpcServer({
    connection,
    queue,
    queueType: 'classic',
    deadLetterQueue: `${queue}.dead`,
    presenceExchange,
    prefetch: 8,
    operations: [{ operation }],
    logger,
  });
  const client = new RpcClient({
    connection,
    queue,
    queueType: 'classic',
    presenceExchange,
    timeoutMs: 5000,
  });
  /** What the handler answers next, and after how long. */
  let answer: unknown;
  let handlerMs = 0;
  const timings: Array<{ queuedMs: number; handledMs: number }> = [];
  client.reportTimingsTo({ rpcAnswered: (queuedMs, handledMs) => timings.push({ queuedMs, handledMs }) });
  const context = () => ({ accountId: randomUUID(), requestId: randomUUID() });

  beforeAll(async () => {
    server.addHandler(operation.pattern, async () => {
      if (handlerMs > 0) await new Promise((resolve) => setTimeout(resolve, handlerMs));
      return answer;
    });
    await new Promise<void>((resolve, reject) =>
      server.listen((error) => (error instanceof Error ? reject(error) : resolve())),
    );
    await client.waitForConnect();
  });

  beforeEach(() => {
    handlerMs = 0;
    timings.length = 0;
  });

  afterAll(async () => {
    await client.close();
    await server.close();
    await connection.close();
  });

  it('sends the data in its schema’s fields and order only, as JSON the caller can pass on unparsed', async () => {
    answer = { count: 2, name: 'Ada', internal: 'not in the contract' };
    const json = await client.callForJson(operation, context(), { name: 'Ada' });
    expect(json.toString()).toBe('{"name":"Ada","count":2}');
    expect(await client.call(operation, context(), { name: 'Ada' })).toEqual({ name: 'Ada', count: 2 });
  });

  it('answers data that breaks its schema as the bug it is (500), logged, instead of sending it', async () => {
    answer = { name: 'Ada' }; // count is required
    lines.length = 0;
    const failure = await client.call(operation, context(), { name: 'Ada' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('internal_error');
    expect(lines.map((line) => JSON.parse(line).msg as string)).toContain(
      'rpc reply does not match its schema',
    );
  });

  it('tells the caller how long the service took, so it can tell the wait in the broker’s queue from the work', async () => {
    answer = { name: 'Ada', count: 1 };
    handlerMs = 60;
    await client.call(operation, context(), { name: 'Ada' });
    expect(timings).toHaveLength(1);
    expect(timings[0].handledMs).toBeGreaterThanOrEqual(59);
    expect(timings[0].queuedMs).toBeLessThan(timings[0].handledMs);

    // 16 at once to a service that takes 8 (its prefetch): the second 8 wait in the queue for the first.
    timings.length = 0;
    await Promise.all(Array.from({ length: 16 }, () => client.call(operation, context(), { name: 'Ada' })));
    expect(timings).toHaveLength(16);
    const waits = timings.map((timing) => timing.queuedMs).sort((a, b) => a - b);
    expect(waits[15]).toBeGreaterThanOrEqual(50);
    expect(waits[0]).toBeLessThan(50);
  });

  it('reports nothing for a reply without the service’s time (an older service), and still answers', async () => {
    const oldQueue = `spec.rpc.${randomUUID()}`;
    const oldService = connection.createChannel({
      setup: async (channel: Channel) => {
        await channel.assertQueue(oldQueue, { durable: true });
        await channel.consume(oldQueue, (message) => {
          if (!message) return;
          channel.sendToQueue(
            message.properties.replyTo as string,
            Buffer.from('{"ok":true,"data":{"name":"Ada","count":3}}'),
            {
              correlationId: message.properties.correlationId as string,
            },
          );
          channel.ack(message);
        });
      },
    });
    const oldClient = new RpcClient({
      connection,
      queue: oldQueue,
      queueType: 'classic',
      presenceExchange: `${oldQueue}.presence`,
      timeoutMs: 5000,
    });
    oldClient.reportTimingsTo({
      rpcAnswered: (queuedMs, handledMs) => timings.push({ queuedMs, handledMs }),
    });
    try {
      await oldService.waitForConnect();
      await oldClient.waitForConnect();
      expect(await oldClient.call(operation, context(), { name: 'Ada' })).toEqual({ name: 'Ada', count: 3 });
      expect(timings).toHaveLength(0);
    } finally {
      await oldClient.close();
      await oldService.close();
    }
  });
});
