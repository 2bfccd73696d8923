import type { Channel, Message } from 'amqplib';

/**
 * The acknowledgements of one consumer channel, sent once a turn. Commands finish out of order
 * and often together (a batch of sends commits at once), and the broker pays for every
 * `basic.ack` frame (acknowledging each command alone cost RabbitMQ 25-30 us per request,
 * BENCHMARKS.md): one ack with `multiple` covers every delivery up to its tag, so the finished
 * commands that are the oldest outstanding go out as one frame. A finished command behind one
 * still running is acknowledged alone, so that it does not keep a prefetch slot.
 *
 * Every acknowledgement of the channel must go through here, so that each delivery is acknowledged
 * once: a second ack of a tag is an unknown tag to the broker, which closes the channel.
 */
export class Acknowledgements {
  /** Delivery tags not acknowledged yet, in delivery order (the broker numbers them upwards). */
  private readonly outstanding: number[] = [];
  private readonly finished = new Set<number>();
  private scheduled = false;

  constructor(
    private readonly channel: Pick<Channel, 'ack'>,
    private readonly onError: (error: Error) => void,
  ) {}

  delivered(message: Message): void {
    this.outstanding.push(message.fields.deliveryTag);
  }

  /** Acknowledges `message` by the end of the turn. */
  ack(message: Message): void {
    this.finished.add(message.fields.deliveryTag);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is finished now (close() calls it before closing the channel). */
  flush(): void {
    this.scheduled = false;
    if (this.finished.size === 0) return;
    let oldest = 0;
    while (oldest < this.outstanding.length && this.finished.has(this.outstanding[oldest])) oldest++;
    const together = this.outstanding.splice(0, oldest);
    for (const tag of together) this.finished.delete(tag);
    const alone = [...this.finished];
    this.finished.clear();
    for (const tag of alone) this.outstanding.splice(this.outstanding.indexOf(tag), 1);
    try {
      if (together.length > 0) this.channel.ack(delivery(together[together.length - 1]), together.length > 1);
      for (const tag of alone) this.channel.ack(delivery(tag));
    } catch (error) {
      // The channel is gone: the broker redelivers whatever it had not been told of.
      this.onError(error as Error);
    }
  }
}

/** amqplib's ack reads only the delivery tag of the message it is given. */
function delivery(deliveryTag: number): Message {
  return { fields: { deliveryTag } } as Message;
}
