import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ConfirmChannel } from 'amqplib';
import { headersOrNone } from './message-headers';

export interface PublishableEvent {
  id: string;
  routingKey: string;
  body: Buffer;
  timestamp: Date;
  /** AMQP headers (the event's trace context). */
  headers?: Record<string, string>;
}

/**
 * Publishes to a durable topic exchange on a confirm channel: `publish` resolves only once the
 * broker has taken responsibility for the message (persisted, since messages are persistent).
 */
export class EventPublisher {
  private readonly channel: ChannelWrapper;

  constructor(
    connection: AmqpConnectionManager,
    private readonly exchange: string,
    publishTimeoutMs = 10_000,
  ) {
    this.channel = connection.createChannel({
      name: `publisher:${exchange}`,
      confirm: true,
      publishTimeout: publishTimeoutMs,
      setup: (channel: ConfirmChannel) => channel.assertExchange(exchange, 'topic', { durable: true }),
    });
  }

  waitForConnect(): Promise<void> {
    return this.channel.waitForConnect();
  }

  async publishAll(events: PublishableEvent[]): Promise<void> {
    await Promise.all(
      events.map((event) =>
        this.channel.publish(this.exchange, event.routingKey, event.body, {
          persistent: true,
          messageId: event.id,
          type: event.routingKey,
          contentType: 'application/cloudevents+json',
          timestamp: Math.floor(event.timestamp.getTime() / 1000),
          headers: headersOrNone(event.headers),
        }),
      ),
    );
  }

  close(): Promise<void> {
    return this.channel.close();
  }
}
