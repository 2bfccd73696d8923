import { randomUUID } from 'node:crypto';
import type { Channel } from 'amqplib';
import { capturedLogger, eventually } from '@app/testing';
import { connectAmqp } from './amqp-connection';

/** Real RabbitMQ (the run's vhost): a channel whose setup fails is logged, not a process crash. */
describe('connectAmqp', () => {
  const { logger, lines } = capturedLogger('warn');
  const connection = connectAmqp(process.env.AMQP_URL!, 'amqp-connection-spec', logger);

  afterAll(() => connection.close());

  it('logs a channel whose setup the broker refuses instead of crashing the process', async () => {
    const queue = `spec.${randomUUID()}`;
    const declare = (durable: boolean) => async (channel: Channel) => {
      await channel.assertQueue(queue, { durable, autoDelete: true });
    };
    const first = connection.createChannel({ setup: declare(false) });
    await first.waitForConnect();
    // The same queue with other arguments: PRECONDITION_FAILED, raised from the setup. Unheard,
    // the wrapper's 'error' event would be an unhandled rejection (which ends a Node process).
    const conflicting = connection.createChannel({ name: 'conflicting', setup: declare(true) });

    const logged = await eventually(
      () => lines.find((line) => line.includes('amqp channel setup failed')),
      10_000,
    );
    expect(JSON.parse(logged)).toMatchObject({
      channel: 'conflicting',
      err: expect.stringContaining('PRECONDITION_FAILED'),
    });
    await conflicting.close();
    await first.close();
  });
});
