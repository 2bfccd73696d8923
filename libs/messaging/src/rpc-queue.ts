import type { QueueDeclaration } from './quorum-migration';
import type { Options } from 'amqplib';

/**
 * Quorum queues: replicated over the cluster's nodes (Raft), so a queue and its messages survive
 * the loss of a minority of them; a classic queue lives on one node and is gone with it. They are
 * always durable and store every message on disk (the `persistent` flag is ignored).
 */
export const QUORUM_QUEUE_ARGUMENTS = { 'x-queue-type': 'quorum' } as const;

/**
 * Both ends assert the RPC queue with exactly these options (RabbitMQ refuses a redeclaration
 * that differs). Commands carry a TTL equal to the caller's timeout, so nobody runs a command whose
 * caller has given up waiting (quorum queues honour per-message TTL since RabbitMQ 3.10).
 */
export const RPC_QUEUE_OPTIONS: Options.AssertQueue = { durable: true, arguments: QUORUM_QUEUE_ARGUMENTS };

/** Dead-letter queues keep what could not be handled, so they are replicated like the queues they serve. */
export const DEAD_LETTER_QUEUE_OPTIONS: Options.AssertQueue = {
  durable: true,
  arguments: QUORUM_QUEUE_ARGUMENTS,
};

export const DIRECT_REPLY_QUEUE = 'amq.rabbitmq.reply-to';

export const PRESENCE_EXCHANGE_OPTIONS: Options.AssertExchange = { durable: true };

/** An RPC queue and its dead-letter queue as declared by the service that serves them. */
export function rpcQueueDeclarations(queues: {
  queue: string;
  deadLetterQueue?: string;
}): QueueDeclaration[] {
  return [
    { name: queues.queue, options: RPC_QUEUE_OPTIONS },
    ...(queues.deadLetterQueue ? [{ name: queues.deadLetterQueue, options: DEAD_LETTER_QUEUE_OPTIONS }] : []),
  ];
}
