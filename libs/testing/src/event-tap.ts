import amqp, { Channel, ChannelModel } from 'amqplib';
import { CONVERSATIONS_EVENTS_EXCHANGE, CloudEvent } from '@app/contracts';
import { eventually } from './eventually';

export interface TappedEvent {
  routingKey: string;
  persistent: boolean;
  contentType?: string;
  /** Every AMQP basic property the message carried (messageId, type, timestamp, ...). */
  properties: Record<string, unknown>;
  event: CloudEvent;
}

/** A private queue bound to `conversations.events`, as an internal team would bind one. */
export class EventTap {
  readonly events: TappedEvent[] = [];

  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: Channel,
  ) {}

  static async open(bindingKey = '#'): Promise<EventTap> {
    const connection = await amqp.connect(process.env.AMQP_URL!);
    const channel = await connection.createChannel();
    await channel.assertExchange(CONVERSATIONS_EVENTS_EXCHANGE, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    await channel.bindQueue(queue, CONVERSATIONS_EVENTS_EXCHANGE, bindingKey);
    const tap = new EventTap(connection, channel);
    await channel.consume(
      queue,
      (message) => {
        if (!message) return;
        tap.events.push({
          routingKey: message.fields.routingKey,
          persistent: message.properties.deliveryMode === 2,
          contentType: message.properties.contentType,
          properties: { ...message.properties },
          event: JSON.parse(message.content.toString('utf8')),
        });
      },
      { noAck: true },
    );
    return tap;
  }

  forAccount(accountId: string): TappedEvent[] {
    return this.events.filter((tapped) => tapped.event.accountid === accountId);
  }

  /** Waits until the account has at least `count` events and returns them in arrival order. */
  waitForAccount(accountId: string, count: number, timeoutMs = 10_000): Promise<TappedEvent[]> {
    return eventually(() => {
      const found = this.forAccount(accountId);
      if (found.length < count)
        throw new Error(`expected ${count} events for ${accountId}, got ${found.length}`);
      return found;
    }, timeoutMs);
  }

  async close(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
