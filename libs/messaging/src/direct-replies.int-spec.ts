import { randomUUID } from 'node:crypto';
import amqplib, { type Channel, type ChannelModel } from 'amqplib';
import { capturedLogger, eventually, replyToOnNode, TcpProxy } from '@app/testing';
import { DirectReplies } from './direct-replies';

/**
 * Real RabbitMQ (the run's vhost). Callers are plain queues here (a reply to a queue's name is routed
 * like one to a caller's channel), and a caller on a node that is not running is an address naming
 * a node that does not exist, which RabbitMQ 3.10.8 crashes the replying connection on.
 */
describe('DirectReplies', () => {
  let connection: ChannelModel;
  let channel: Channel;
  beforeAll(async () => {
    connection = await amqplib.connect(process.env.AMQP_URL!);
    channel = await connection.createChannel();
  });
  afterAll(() => connection.close());

  /** A caller's queue and the replies it received. */
  async function caller(): Promise<{ name: string; received: string[] }> {
    const { queue } = await channel.assertQueue('', { exclusive: true });
    const received: string[] = [];
    await channel.consume(queue, (message) => message && received.push(message.content.toString()), {
      noAck: true,
    });
    return { name: queue, received };
  }

  const disconnections = (lines: string[]) =>
    lines.filter((line) => line.includes('amqp disconnected')).length;

  it('a reply to a node that is not running costs this connection only: replies written beside it arrive, and later ones to that node are dropped without a crash', async () => {
    const { logger, lines } = capturedLogger('info');
    const replies = new DirectReplies(process.env.AMQP_URL!, `direct-replies-spec-${randomUUID()}`, logger);
    try {
      await eventually(() => replies.connected, 10_000, 20);
      const live = await caller();
      replies.send(live.name, Buffer.from('before'), {});
      replies.send(replyToOnNode('reply@1'), Buffer.from('stale'), { correlationId: 'stale-1' });
      replies.send(live.name, Buffer.from('after'), {});

      await eventually(() => live.received.includes('before') && live.received.includes('after'), 15_000, 20);
      // Written again after the crash, its node's round trip crashes the next connection too: found out.
      await eventually(
        () => lines.some((line) => line.includes('rabbitmq node of a reply-to is not running')),
        15_000,
        20,
      );
      await eventually(() => replies.connected, 10_000, 20);
      const crashes = disconnections(lines);
      expect(crashes).toBeGreaterThan(0);

      // Found out: a further reply to it is dropped, and the one after it arrives on the same connection.
      replies.send(replyToOnNode('reply@1'), Buffer.from('stale'), { correlationId: 'stale-2' });
      replies.send(live.name, Buffer.from('later'), {});
      await eventually(() => live.received.includes('later'), 10_000, 20);
      expect(
        lines.some(
          (line) => line.includes('"correlation_id":"stale-2"') && line.includes('rpc reply dropped'),
        ),
      ).toBe(true);
      expect(disconnections(lines)).toBe(crashes);
    } finally {
      await replies.close();
    }
  });

  it('replies sent while the broker is unreachable go out once it is back', async () => {
    const { logger } = capturedLogger('error');
    const relay = await TcpProxy.for(process.env.AMQP_URL!);
    const replies = new DirectReplies(
      relay.route(process.env.AMQP_URL!),
      `direct-replies-spec-${randomUUID()}`,
      logger,
    );
    try {
      await eventually(() => replies.connected, 10_000, 20);
      const live = await caller();
      await relay.cut();
      await eventually(() => !replies.connected, 10_000, 20);
      replies.send(live.name, Buffer.from('while cut'), {});
      await relay.restore();
      await eventually(() => live.received.includes('while cut'), 15_000, 20);
    } finally {
      await replies.close();
      await relay.close();
    }
  });
});
