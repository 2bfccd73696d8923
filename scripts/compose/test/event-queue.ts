import { CloudEvent } from '@app/contracts';

export interface QueuedEvent {
  routingKey: string;
  persistent: boolean;
  event: CloudEvent;
}

/**
 * A queue bound to `conversations.events`, as an internal team binds one, declared and read
 * through the RabbitMQ management HTTP API that docker-compose.yml publishes on 127.0.0.1:15672.
 * Messages are taken off the queue as they are read and kept here.
 */
export class EventQueue {
  readonly events: QueuedEvent[] = [];

  private constructor(
    private readonly baseUrl: string,
    private readonly queue: string,
  ) {}

  static async bind(
    queue: string,
    bindingKey = '#',
    baseUrl = 'http://127.0.0.1:15672',
  ): Promise<EventQueue> {
    const bound = new EventQueue(baseUrl, queue);
    await bound.call('PUT', `/api/queues/%2F/${queue}`, { durable: true, auto_delete: false });
    await bound.call('POST', `/api/bindings/%2F/e/conversations.events/q/${queue}`, {
      routing_key: bindingKey,
    });
    return bound;
  }

  /** The exchange as RabbitMQ describes it (type, durability). */
  exchange(): Promise<{ type: string; durable: boolean }> {
    return this.call('GET', '/api/exchanges/%2F/conversations.events');
  }

  /** Takes whatever the queue holds now; returns everything read so far. */
  async read(): Promise<QueuedEvent[]> {
    for (;;) {
      const batch: Array<{ routing_key: string; payload: string; properties: { delivery_mode?: number } }> =
        await this.call('POST', `/api/queues/%2F/${this.queue}/get`, {
          count: 500,
          ackmode: 'ack_requeue_false',
          encoding: 'auto',
        });
      for (const message of batch) {
        this.events.push({
          routingKey: message.routing_key,
          persistent: message.properties.delivery_mode === 2,
          event: JSON.parse(message.payload),
        });
      }
      if (batch.length < 500) return this.events;
    }
  }

  forAccount(accountId: string): QueuedEvent[] {
    return this.events.filter((queued) => queued.event.accountid === accountId);
  }

  private async call(method: string, path: string, body?: unknown): Promise<any> {
    const response = await fetch(this.baseUrl + path, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}`,
        'content-type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
}
