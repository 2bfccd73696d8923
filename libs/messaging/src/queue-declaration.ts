import type { Channel, Options } from 'amqplib';

/** A queue as the services declare it, with the exchange bindings it must keep while it is moved. */
export interface QueueDeclaration {
  name: string;
  options: Options.AssertQueue;
  /** Topic exchanges the queue is bound to (declared durable if missing). */
  bindings?: Array<{ exchange: string; pattern: string }>;
}

/** Binds the queue to its exchanges (each declared if missing). */
export async function bindToExchanges(channel: Channel, queue: QueueDeclaration): Promise<void> {
  for (const { exchange, pattern } of queue.bindings ?? []) {
    await channel.assertExchange(exchange, 'topic', { durable: true });
    await channel.bindQueue(queue.name, exchange, pattern);
  }
}

/** Declares the queue on the channel as written, with its bindings. */
export async function assertDeclared(channel: Channel, queue: QueueDeclaration): Promise<void> {
  await channel.assertQueue(queue.name, queue.options);
  await bindToExchanges(channel, queue);
}

/**
 * Quorum queues: replicated over the cluster's nodes (Raft), so a queue and its messages survive
 * the loss of a minority of them; a classic queue lives on one node and is gone with it. They are
 * always durable and store every message on disk (the `persistent` flag is ignored).
 */
export const QUORUM_QUEUE_ARGUMENTS = { 'x-queue-type': 'quorum' } as const;

/**
 * A stream (RabbitMQ 3.9+): an append-only log that consumers read from any point (the first
 * message, a time, an offset) without removing what they read, kept `maxAge` and at most
 * `maxBytes`. Replicated over a cluster's nodes like a quorum queue.
 */
export const streamQueueOptions = (maxAge: string, maxBytes: number) => ({
  durable: true,
  arguments: { 'x-queue-type': 'stream', 'x-max-age': maxAge, 'x-max-length-bytes': maxBytes },
});

export const isStream = (queue: QueueDeclaration): boolean =>
  (queue.options.arguments as Record<string, unknown> | undefined)?.['x-queue-type'] === 'stream';
