import type { Message } from 'amqplib';
import { Acknowledgements } from './acknowledgements';

/** What the broker is told: each `basic.ack` frame as [delivery tag, multiple]. */
function recordingChannel() {
  const frames: Array<[number, boolean]> = [];
  return {
    frames,
    ack(message: Message, allUpTo?: boolean) {
      frames.push([message.fields.deliveryTag, allUpTo ?? false]);
    },
  };
}

const delivery = (deliveryTag: number) => ({ fields: { deliveryTag } }) as Message;
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Acknowledgements', () => {
  it('acknowledges the oldest finished deliveries of a turn with one frame', async () => {
    const channel = recordingChannel();
    const acks = new Acknowledgements(channel, fail);
    [1, 2, 3, 4].forEach((tag) => acks.delivered(delivery(tag)));
    acks.ack(delivery(2));
    acks.ack(delivery(1));
    acks.ack(delivery(3));
    expect(channel.frames).toEqual([]); // nothing before the end of the turn
    await turn();
    expect(channel.frames).toEqual([[3, true]]);
  });

  it('acknowledges a delivery finished behind a running one alone, and the rest once that one finishes', async () => {
    const channel = recordingChannel();
    const acks = new Acknowledgements(channel, fail);
    [10, 11, 12, 13].forEach((tag) => acks.delivered(delivery(tag)));
    acks.ack(delivery(12));
    await turn();
    expect(channel.frames).toEqual([[12, false]]);
    acks.ack(delivery(10));
    acks.ack(delivery(11));
    await turn();
    // 12 is no longer outstanding at the broker: the multiple ack of 11 covers 10 and 11 only.
    expect(channel.frames).toEqual([
      [12, false],
      [11, true],
    ]);
    acks.ack(delivery(13));
    await turn();
    expect(channel.frames).toEqual([
      [12, false],
      [11, true],
      [13, false],
    ]);
  });

  it('sends what is finished when flushed, before the turn ends', () => {
    const channel = recordingChannel();
    const acks = new Acknowledgements(channel, fail);
    acks.delivered(delivery(1));
    acks.ack(delivery(1));
    acks.flush();
    expect(channel.frames).toEqual([[1, false]]);
  });

  it('reports a channel that is gone instead of throwing out of the turn', async () => {
    const errors: Error[] = [];
    const acks = new Acknowledgements(
      {
        ack: () => {
          throw new Error('Channel closed');
        },
      },
      (error) => errors.push(error),
    );
    acks.delivered(delivery(1));
    acks.ack(delivery(1));
    await turn();
    expect(errors.map((error) => error.message)).toEqual(['Channel closed']);
  });
});

function fail(error: Error): never {
  throw error;
}
