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

  it('opens and sets up again a channel the broker closed on its own, the connection staying up', async () => {
    lines.length = 0;
    let setups = 0;
    const wrapper = connection.createChannel({
      name: 'closed-by-broker',
      setup: () => {
        setups++;
        return Promise.resolve();
      },
    });
    await wrapper.waitForConnect();
    expect(setups).toBe(1);
    // A channel error: the broker closes this channel (404 NOT_FOUND), not the connection.
    await expect(wrapper.checkQueue(`spec.missing.${randomUUID()}`)).rejects.toThrow(/NOT_FOUND/);

    await eventually(() => setups === 2, 10_000);
    const queue = `spec.${randomUUID()}`;
    await wrapper.assertQueue(queue, { autoDelete: true, durable: false });
    expect(await wrapper.checkQueue(queue)).toMatchObject({ queue });
    const messages = lines.map((line) => JSON.parse(line).msg as string);
    expect(messages).toContain('amqp channel closed by the broker; opening it again');
    expect(messages).not.toContain('amqp disconnected'); // the other channels were not disturbed
    await wrapper.close();
  });

  it('leaves closed a channel closed on purpose', async () => {
    let setups = 0;
    const wrapper = connection.createChannel({
      setup: () => {
        setups++;
        return Promise.resolve();
      },
    });
    await wrapper.waitForConnect();
    await wrapper.close();
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the reopening delay
    expect(setups).toBe(1);
  });
});
